// WekaCluster: one Weka cluster. Several clusters may select the same nodes; with drive
// sharing their drive containers share those nodes' physical drives.
import { Type, type Static } from '@sinclair/typebox';
import { MAX_CLUSTER_PORT_RANGE } from '../../allocation/constants.js';
import { CAPACITY_CROSS_FIELD_RULES, capacityProperties } from './capacity.js';
import {
  celRules,
  type CelRule,
  conditionsSchema,
  MAX_NAME_LENGTH,
  nodeSelectorSchema,
  observedGenerationSchema,
  writtenBySchema,
  phaseSchema,
  portSchema,
  resourceSchema,
} from './common.js';
import { storageClassDeviceSetsSchema } from './device-sets.js';

export const WEKA_CLUSTER_KIND = 'WekaCluster';
export const WEKA_CLUSTER_PLURAL = 'wekaclusters';
export const WEKA_CLUSTER_SINGULAR = 'wekacluster';

/** Phases the operator writes to status.phase; the schema accepts any string. */
export const WEKA_CLUSTER_PHASES = [
  'Pending',
  'AllocatingPorts',
  'Refused',
  'Forming',
  'Ready',
  'Updating',
  'Deleting',
  'Error',
] as const;

const PHASE_OUT =
  "Weka would have to phase data out of the members' drives first, which this operator does not do; create a new cluster instead";

/**
 * What may change in a template once written: containerCapacity and numDrives only grow (every
 * member grows by new virtual drives, its existing ones untouched); the rest stays as it was.
 */
export const DYNAMIC_TEMPLATE_CHANGE_RULES = [
  ...(['containerCapacity', 'numDrives'] as const).map((field) => ({
    rule: `!has(oldSelf.${field}) || (has(self.${field}) && self.${field} >= oldSelf.${field})`,
    message: `${field} can only grow: a smaller value would shrink every member, and ${PHASE_OUT}`,
    fieldPath: `.${field}`,
  })),
  ...(['driveCapacity', 'driveTypesRatio', 'driveCores'] as const).map((field) => ({
    rule: `has(self.${field}) == has(oldSelf.${field}) && (!has(self.${field}) || self.${field} == oldSelf.${field})`,
    message: `${field} cannot change once set (nor be set later): the members' existing virtual drives keep their shape, and ${PHASE_OUT}`,
    fieldPath: `.${field}`,
  })),
  {
    rule: 'has(self.containerCapacity) == has(oldSelf.containerCapacity) && has(self.numDrives) == has(oldSelf.numDrives)',
    message: `the drive sharing mode (containerCapacity, or numDrives x driveCapacity) cannot change: ${PHASE_OUT}`,
  },
] satisfies CelRule[];

export const DynamicTemplateSchema = Type.Object(
  {
    driveContainers: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: 'Number of drive containers of the cluster, at most one per selected node.',
      }),
    ),
    ...capacityProperties('each drive container'),
  },
  {
    description:
      "Shape of the cluster's drive containers, copied into each WekaContainer it creates. Drive sharing is on when driveCapacity (mode 1: numDrives x driveCapacity, TLC only) or containerCapacity (mode 2: split by driveTypesRatio) is set.",
    ...celRules(...CAPACITY_CROSS_FIELD_RULES, ...DYNAMIC_TEMPLATE_CHANGE_RULES),
  },
);
export type DynamicTemplate = Static<typeof DynamicTemplateSchema>;

/** One tenant's share of the ports: see MAX_CLUSTER_PORT_RANGE. */
export const CLUSTER_PORTS_RULES = {
  rangeShare: {
    rule: `!has(self.portRange) || self.portRange <= ${MAX_CLUSTER_PORT_RANGE}`,
    message: `portRange may be at most ${MAX_CLUSTER_PORT_RANGE} ports: one cluster's share, so that no cluster takes the ports of every other cluster and standalone container`,
    fieldPath: '.portRange',
  },
  rangeEnds: {
    rule: '!has(self.basePort) || !has(self.portRange) || self.basePort + self.portRange <= 65536',
    message: 'basePort + portRange must end by port 65535',
  },
} satisfies Record<string, CelRule>;

export const ClusterPortsSpecSchema = Type.Object(
  {
    basePort: Type.Optional(portSchema("First port of the cluster's port range. Unset: the operator allocates one.")),
    portRange: Type.Optional(
      portSchema("Number of ports in the cluster's range, starting at basePort. Unset: the operator's default."),
    ),
  },
  {
    description: "Optional overrides of the cluster's port range; the ports in use are in status.ports.",
    ...celRules(CLUSTER_PORTS_RULES.rangeShare, CLUSTER_PORTS_RULES.rangeEnds),
  },
);

export const ClusterPortsStatusSchema = Type.Object(
  {
    basePort: Type.Optional(portSchema("First port of the cluster's allocated port range.")),
    portRange: Type.Optional(portSchema('Number of ports in the allocated range, starting at basePort.')),
    lbPort: Type.Optional(portSchema('Cluster-wide load balancer port.')),
    lbAdminPort: Type.Optional(portSchema('Cluster-wide load balancer admin port.')),
    s3Port: Type.Optional(portSchema('Cluster-wide S3 port.')),
    range: Type.Optional(
      Type.String({
        maxLength: 11,
        pattern: '^[0-9]{1,5}-[0-9]{1,5}$',
        description:
          'The range as first-last port ("35000-35499"), written with basePort and portRange for the printer column.',
      }),
    ),
  },
  {
    description:
      "Ports allocated to the cluster: its range and its singleton ports. Written by the operator's allocator, inside the cluster-ports mutex.",
  },
);
export type ClusterPortsStatus = Static<typeof ClusterPortsStatusSchema>;

export const WekaClusterSpecSchema = Type.Object(
  {
    image: Type.String({ minLength: 1, description: "Weka container image used by the cluster's containers." }),
    imagePullSecret: Type.Optional(
      Type.String({
        maxLength: MAX_NAME_LENGTH,
        description: 'Name of the Secret, in this namespace, used to pull the image.',
      }),
    ),
    template: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          'Template name, accepted so Weka operator manifests carry over; this operator always uses dynamicTemplate.',
      }),
    ),
    dynamicTemplate: Type.Optional(DynamicTemplateSchema),
    nodeSelector: Type.Optional(
      nodeSelectorSchema(
        "Labels a node must carry to run this cluster's containers. Clusters may select the same nodes and share their drives.",
      ),
    ),
    ports: Type.Optional(ClusterPortsSpecSchema),
    storageClassDeviceSets: Type.Optional(storageClassDeviceSetsSchema),
  },
  { description: 'Desired state of the Weka cluster.' },
);
export type WekaClusterSpec = Static<typeof WekaClusterSpecSchema>;

export const DriveSharingStatusSchema = Type.Object(
  {
    driveCapacity: Type.Integer({
      minimum: 1,
      format: 'int64',
      description:
        "Size in GiB of each of a member's numDrives virtual drives, as driveCapacity would say: the size of the whole drives each member had.",
    }),
    operation: Type.String({
      maxLength: 2 * MAX_NAME_LENGTH + 1,
      description: 'The migrate-to-drive-sharing operation that moved the cluster, namespace/name.',
    }),
    campaign: Type.String({
      maxLength: 64,
      description:
        'Uid of that operation: while it runs, no other migrate-to-drive-sharing operation runs on this cluster.',
    }),
  },
  {
    description:
      'Set by migrate-to-drive-sharing on a cluster created on whole drives: its members are made with numDrives virtual drives of driveCapacity GiB from then on (dynamicTemplate cannot change its drive mode). Written by the operation, through the status subresource.',
  },
);
export type DriveSharingStatus = Static<typeof DriveSharingStatusSchema>;

export const WekaClusterStatusSchema = Type.Object(
  {
    phase: Type.Optional(phaseSchema(WEKA_CLUSTER_PHASES)),
    clusterGUID: Type.Optional(Type.String({ maxLength: 64, description: 'GUID of the Weka cluster once formed.' })),
    ports: Type.Optional(ClusterPortsStatusSchema),
    driveSharing: Type.Optional(DriveSharingStatusSchema),
    conditions: Type.Optional(conditionsSchema('Detailed observed state, one entry per condition type.')),
    observedGeneration: Type.Optional(observedGenerationSchema()),
    writtenBy: Type.Optional(writtenBySchema('cluster')),
    workflowID: Type.Optional(
      Type.String({
        maxLength: 512,
        description: 'Id of the Temporal workflow that drives this cluster. Written by the watcher.',
      }),
    ),
  },
  {
    description:
      'Observed state, written only through the status subresource by server-side apply: the cluster workflow owns phase, clusterGUID, conditions, observedGeneration and writtenBy, the allocator owns ports, migrate-to-drive-sharing owns driveSharing, the watcher owns workflowID. Every field is optional so writers apply only their own.',
  },
);
export type WekaClusterStatus = Static<typeof WekaClusterStatusSchema>;

export const WekaClusterSchema = resourceSchema(WEKA_CLUSTER_KIND, WekaClusterSpecSchema, WekaClusterStatusSchema);
export type WekaCluster = Static<typeof WekaClusterSchema>;
