// The three CRDs of this API and their YAML, as written to crds/ by `npm run crds`.
import { stringify } from 'yaml';
import { buildCrd, type CrdSource, type CustomResourceDefinition } from './crd-builder.js';
import { API_GROUP, API_VERSION, WEKA_CATEGORY } from './schemas/common.js';
import {
  WEKA_CLUSTER_KIND,
  WEKA_CLUSTER_PLURAL,
  WEKA_CLUSTER_SINGULAR,
  WekaClusterSpecSchema,
  WekaClusterStatusSchema,
} from './schemas/wekacluster.js';
import {
  WEKA_CONTAINER_KIND,
  WEKA_CONTAINER_PLURAL,
  WEKA_CONTAINER_SINGULAR,
  WekaContainerSpecSchema,
  WekaContainerStatusSchema,
} from './schemas/wekacontainer.js';
import {
  WEKA_MANUAL_OPERATION_KIND,
  WEKA_MANUAL_OPERATION_PLURAL,
  WEKA_MANUAL_OPERATION_SINGULAR,
  WekaManualOperationSpecSchema,
  WekaManualOperationStatusSchema,
} from './schemas/wekamanualoperation.js';

const AGE_COLUMN = {
  name: 'Age',
  type: 'date',
  jsonPath: '.metadata.creationTimestamp',
  description: 'Time since creation.',
} as const;

const READY_COLUMN = {
  name: 'Ready',
  type: 'string',
  jsonPath: '.status.conditions[?(@.type=="Ready")].status',
  description: 'The Ready condition: True, False, or empty before the first verdict.',
} as const;

const REASON_COLUMN = {
  name: 'Reason',
  type: 'string',
  jsonPath: '.status.conditions[?(@.type=="Ready")].reason',
  description: "The Ready condition's reason: why it is not Ready, or what it waits for.",
} as const;

const SINCE_COLUMN = {
  name: 'Since',
  type: 'date',
  jsonPath: '.status.conditions[?(@.type=="Ready")].lastTransitionTime',
  description: 'Time since the Ready condition last changed.',
} as const;

export const WEKA_CLUSTER_CRD_SOURCE: CrdSource = {
  group: API_GROUP,
  version: API_VERSION,
  kind: WEKA_CLUSTER_KIND,
  plural: WEKA_CLUSTER_PLURAL,
  singular: WEKA_CLUSTER_SINGULAR,
  shortNames: ['wcl'],
  categories: [WEKA_CATEGORY],
  description:
    'A Weka cluster. Several clusters may run on the same nodes and share their NVMe drives through virtual drives.',
  spec: WekaClusterSpecSchema,
  status: WekaClusterStatusSchema,
  printerColumns: [
    { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'Lifecycle phase.' },
    READY_COLUMN,
    REASON_COLUMN,
    SINCE_COLUMN,
    {
      name: 'Drive Containers',
      type: 'integer',
      jsonPath: '.spec.dynamicTemplate.driveContainers',
      description: 'Number of drive containers.',
    },
    {
      name: 'Ports',
      type: 'string',
      jsonPath: '.status.ports.range',
      description: 'The allocated port range, first-last.',
    },
    { name: 'GUID', type: 'string', jsonPath: '.status.clusterGUID', description: 'Weka cluster GUID.', priority: 1 },
    AGE_COLUMN,
  ],
};

export const WEKA_CONTAINER_CRD_SOURCE: CrdSource = {
  group: API_GROUP,
  version: API_VERSION,
  kind: WEKA_CONTAINER_KIND,
  plural: WEKA_CONTAINER_PLURAL,
  singular: WEKA_CONTAINER_SINGULAR,
  shortNames: ['wc'],
  categories: [WEKA_CATEGORY],
  description:
    'A Weka container on one node: a drive container carving virtual drives from shared NVMe drives, the per-node ssdproxy that owns those drives, or another Weka container mode.',
  spec: WekaContainerSpecSchema,
  status: WekaContainerStatusSchema,
  // The allocator lists every container on a node, in every namespace, straight from the
  // apiserver; a field selector keeps that read proportional to the node, not the cluster.
  selectableFields: ['.spec.nodeName', '.spec.cluster'],
  printerColumns: [
    { name: 'Mode', type: 'string', jsonPath: '.spec.mode', description: 'Container mode.' },
    { name: 'Node', type: 'string', jsonPath: '.spec.nodeName', description: 'Node the container runs on.' },
    {
      name: 'Cluster',
      type: 'string',
      jsonPath: '.spec.cluster',
      description: 'WekaCluster the container belongs to.',
    },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'Lifecycle phase.' },
    READY_COLUMN,
    REASON_COLUMN,
    SINCE_COLUMN,
    {
      name: 'Capacity GiB',
      type: 'integer',
      jsonPath: '.spec.containerCapacity',
      description: 'containerCapacity: total GiB of the container (allocation mode 2).',
    },
    {
      name: 'Drive GiB',
      type: 'integer',
      jsonPath: '.spec.driveCapacity',
      description: 'driveCapacity: GiB per virtual drive (allocation mode 1).',
    },
    {
      name: 'Drives',
      type: 'integer',
      jsonPath: '.spec.numDrives',
      description: 'numDrives: number of virtual drives (allocation mode 1).',
      priority: 1,
    },
    {
      name: 'Virtual Drives',
      type: 'integer',
      jsonPath: '.status.allocations.virtualDriveCount',
      description: 'Number of virtual drives allocated.',
    },
    AGE_COLUMN,
  ],
};

export const WEKA_MANUAL_OPERATION_CRD_SOURCE: CrdSource = {
  group: API_GROUP,
  version: API_VERSION,
  kind: WEKA_MANUAL_OPERATION_KIND,
  plural: WEKA_MANUAL_OPERATION_PLURAL,
  singular: WEKA_MANUAL_OPERATION_SINGULAR,
  shortNames: ['wmo'],
  categories: [WEKA_CATEGORY],
  description:
    'A one-off operation, such as signing drives; with shared: true the drives are signed for sharing between clusters.',
  spec: WekaManualOperationSpecSchema,
  status: WekaManualOperationStatusSchema,
  printerColumns: [
    { name: 'Action', type: 'string', jsonPath: '.spec.action', description: 'Operation to run.' },
    {
      name: 'Type',
      type: 'string',
      jsonPath: '.spec.payload.signDrivesPayload.type',
      description: 'How drives are chosen.',
    },
    {
      name: 'Shared',
      type: 'boolean',
      jsonPath: '.spec.payload.signDrivesPayload.shared',
      description: 'Signed for sharing between clusters.',
    },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'Lifecycle phase.' },
    READY_COLUMN,
    REASON_COLUMN,
    SINCE_COLUMN,
    AGE_COLUMN,
  ],
};

export interface CrdFile {
  /** File name under crds/, as controller-gen would name it. */
  fileName: string;
  crd: CustomResourceDefinition;
}

export function buildCrdFiles(): CrdFile[] {
  return [WEKA_CLUSTER_CRD_SOURCE, WEKA_CONTAINER_CRD_SOURCE, WEKA_MANUAL_OPERATION_CRD_SOURCE].map((source) => ({
    fileName: `${source.group}_${source.plural}.yaml`,
    crd: buildCrd(source),
  }));
}

export const GENERATED_HEADER =
  '# Generated by `npm run crds` from src/api/schemas; do not edit. `npm run crds:check` fails when it is stale.\n';

/** One YAML document with keys sorted, so the output depends only on the schemas. */
export function renderCrdYaml(crd: CustomResourceDefinition): string {
  return GENERATED_HEADER + stringify(crd, { sortMapEntries: true, lineWidth: 0 });
}
