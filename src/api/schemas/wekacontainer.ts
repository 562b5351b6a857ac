// WekaContainer: one Weka container on one node. This operator acts on drive containers that
// share drives (mode drive with driveCapacity or containerCapacity) and on the per-node
// ssdproxy container that owns the physical drives.
import { Type, type Static } from '@sinclair/typebox';
import { MAX_VIRTUAL_DRIVES_PER_CONTAINER } from '../../allocation/constants.js';
import { CAPACITY_CROSS_FIELD_RULES, capacityProperties } from './capacity.js';
import {
  celRules,
  conditionsSchema,
  MAX_NAME_LENGTH,
  observedGenerationSchema,
  writtenBySchema,
  phaseSchema,
  portSchema,
  resourceSchema,
  stringSetSchema,
  VirtualDriveStatusSchema,
  type CelRule,
} from './common.js';

export const WEKA_CONTAINER_KIND = 'WekaContainer';
export const WEKA_CONTAINER_PLURAL = 'wekacontainers';
export const WEKA_CONTAINER_SINGULAR = 'wekacontainer';

/** The modes of the Weka operator, so its manifests carry over; this operator acts on the last two. */
export const WEKA_CONTAINER_MODES = [
  'compute',
  'client',
  'dist',
  'drivers-dist',
  'drivers-loader',
  'drivers-builder',
  'discovery',
  's3',
  'adhoc-op-with-container',
  'adhoc-op',
  'envoy',
  'nfs',
  'smbw',
  'telemetry',
  'data-services',
  'data-services-fe',
  'drive',
  'ssdproxy',
] as const;
export type WekaContainerMode = (typeof WEKA_CONTAINER_MODES)[number];

/** Phases the operator writes to status.phase; the schema accepts any string. */
export const WEKA_CONTAINER_PHASES = [
  'Pending',
  'Allocating',
  'Refused',
  'WaitingForCluster',
  'Signing',
  'AddingDrives',
  'Ready',
  'Deleting',
  'Error',
] as const;

/** Why a container can only grow: what it holds is in its Weka cluster, and carries data. */
const REMOVING_DRIVES =
  'means removing virtual drives from the Weka cluster, and Weka must phase the data out of a drive first (this operator does not)';

/** Why the fields that shape the existing virtual drives cannot change at all. */
const RESHAPING = `${REMOVING_DRIVES}; to grow the container, raise containerCapacity or numDrives, or create a new WekaContainer`;

/**
 * "Cannot change once set": a field unset at creation may be set later (the operator or a user
 * fills it in once), but never changed or removed afterwards.
 */
function setOnce(field: string, why: string): CelRule {
  return {
    rule: `!has(oldSelf.${field}) || (has(self.${field}) && self.${field} == oldSelf.${field})`,
    message: `${field} cannot change once set: ${why}`,
    fieldPath: `.${field}`,
    reason: 'FieldValueForbidden',
  };
}

/**
 * "Can only grow": set later once like a set-once field, then only raised. A raise grows the
 * container in place (new virtual drives next to the ones it holds); a lower value or removing the
 * field would take drives away.
 */
function growOnly(field: string, what: string): CelRule {
  return {
    rule: `!has(oldSelf.${field}) || (has(self.${field}) && self.${field} >= oldSelf.${field})`,
    message: `${field} can only grow: giving back ${what} ${REMOVING_DRIVES}; create a new, smaller WekaContainer instead`,
    fieldPath: `.${field}`,
    reason: 'FieldValueForbidden',
  };
}

export const WEKA_CONTAINER_RULES = {
  modeImmutable: {
    rule: 'self == oldSelf',
    message: 'mode cannot change once set: create a new WekaContainer for another mode',
    reason: 'FieldValueForbidden',
  },
  nodeNameSetOnce: setOnce(
    'nodeName',
    "a container's virtual drives live on its node; create a new WekaContainer for another node",
  ),
  clusterSetOnce: setOnce(
    'cluster',
    "a member belongs to the cluster that made it (its teardown, ports and disruption budget are that cluster's); create a new WekaContainer for another cluster",
  ),
  driveCoresSetOnce: setOnce(
    'driveCores',
    `the drive cores are set up when the Weka container joins its cluster, and changing them ${RESHAPING}`,
  ),
  numDrivesGrowOnly: growOnly('numDrives', 'drives'),
  driveCapacitySetOnce: setOnce(
    'driveCapacity',
    `every virtual drive of the container has this size, and resizing them ${RESHAPING}`,
  ),
  containerCapacityGrowOnly: growOnly('containerCapacity', 'capacity'),
  driveTypesRatioSetOnce: setOnce('driveTypesRatio', `moving capacity between TLC and QLC ${RESHAPING}`),
  virtualDriveCountMatches: {
    rule: '!has(self.virtualDriveCount) || self.virtualDriveCount == (has(self.virtualDrives) ? size(self.virtualDrives) : 0)',
    message: 'virtualDriveCount must equal the number of entries in virtualDrives',
    fieldPath: '.virtualDriveCount',
  },
} as const satisfies Record<string, CelRule>;

export const WekaContainerSpecSchema = Type.Object(
  {
    mode: Type.Union(
      WEKA_CONTAINER_MODES.map((mode) => Type.Literal(mode)),
      {
        description:
          'What the container runs, as in the Weka operator. This operator acts on drive (a drive container; with driveCapacity or containerCapacity it uses shared drives) and ssdproxy (the per-node proxy that owns the shared physical drives); it leaves the other modes alone. Cannot change once set.',
        ...celRules(WEKA_CONTAINER_RULES.modeImmutable),
      },
    ),
    nodeName: Type.Optional(
      Type.String({
        maxLength: MAX_NAME_LENGTH,
        description:
          "Name of the Kubernetes node the container runs on; its virtual drives are carved from this node's shared drives. May be left empty and set once later (for example by the WekaCluster that places the container); cannot change once set.",
      }),
    ),
    cluster: Type.Optional(
      Type.String({
        maxLength: MAX_NAME_LENGTH,
        description:
          'Name of the WekaCluster, in this namespace, the container belongs to. Empty for a standalone container and for the ssdproxy container, which serves every cluster on its node.',
      }),
    ),
    joinIps: Type.Optional(
      Type.Array(
        Type.String({
          maxLength: 64,
          pattern: '^(\\[[0-9A-Fa-f:]+\\]|[0-9]{1,3}(\\.[0-9]{1,3}){3}):[0-9]{1,5}$',
          description: 'ip:port (IPv6 in brackets).',
        }),
        {
          maxItems: 96,
          description:
            "Management IP and Weka port of containers of an existing Weka cluster, which a standalone drive container joins through (the pod's JOIN_IPS, as the reference operator's joinIps). Ignored for a WekaCluster's member, which joins through its fellow members.",
        },
      ),
    ),
    image: Type.String({
      minLength: 1,
      description: 'Weka container image, for example quay.io/weka.io/weka-in-container:4.4.10.183.',
    }),
    imagePullSecret: Type.Optional(
      Type.String({
        maxLength: MAX_NAME_LENGTH,
        description: 'Name of the Secret, in this namespace, used to pull the image.',
      }),
    ),
    ...capacityProperties('this container'),
  },
  {
    description:
      'Desired state of the container, written by users or by the WekaCluster controller. mode, nodeName, cluster, driveCores, driveCapacity and driveTypesRatio cannot change once set; containerCapacity and numDrives can only be raised, which grows the container in place with new virtual drives.',
    ...celRules(
      ...CAPACITY_CROSS_FIELD_RULES,
      WEKA_CONTAINER_RULES.nodeNameSetOnce,
      WEKA_CONTAINER_RULES.clusterSetOnce,
      WEKA_CONTAINER_RULES.driveCoresSetOnce,
      WEKA_CONTAINER_RULES.numDrivesGrowOnly,
      WEKA_CONTAINER_RULES.driveCapacitySetOnce,
      WEKA_CONTAINER_RULES.containerCapacityGrowOnly,
      WEKA_CONTAINER_RULES.driveTypesRatioSetOnce,
    ),
  },
);
export type WekaContainerSpec = Static<typeof WekaContainerSpecSchema>;

/**
 * At most this many virtual drives per container; bounds list sizes for CEL cost and etcd size. The
 * allocator never gives more (src/allocation/constants.ts), and the capacity rules refuse a
 * numDrives above it.
 */
export const MAX_VIRTUAL_DRIVES = MAX_VIRTUAL_DRIVES_PER_CONTAINER;

export const ContainerAllocationsSchema = Type.Object(
  {
    drives: Type.Optional(
      stringSetSchema(
        'Serial numbers of whole physical drives allocated exclusively to this container (when not sharing drives).',
        { description: 'Serial number of a physical drive.', maxLength: 128 },
        MAX_VIRTUAL_DRIVES,
      ),
    ),
    wekaPort: Type.Optional(portSchema('First port of the port range allocated to the Weka container.')),
    agentPort: Type.Optional(portSchema('Port allocated to the Weka agent of the container.')),
    virtualDrives: Type.Optional(
      Type.Array(VirtualDriveStatusSchema, {
        maxItems: MAX_VIRTUAL_DRIVES,
        description:
          "Virtual drives allocated to this container from the node's shared physical drives; the source of truth for capacity claims on the node.",
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['virtualUUID'],
      }),
    ),
    replacedVirtualDrives: Type.Optional(
      Type.Array(VirtualDriveStatusSchema, {
        maxItems: MAX_VIRTUAL_DRIVES,
        description:
          'Virtual drives taken off a blocked physical drive (block-drives): each was replaced by one in virtualDrives, and is listed here, still counted on the node, until the container has removed it from its Weka cluster and the device.',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['virtualUUID'],
      }),
    ),
    virtualDriveCount: Type.Optional(
      Type.Integer({
        minimum: 0,
        description:
          'Number of entries in virtualDrives, written with them, because a printer column cannot count a list.',
      }),
    ),
  },
  {
    description: 'Resources allocated to this container. Written by the container workflow.',
    ...celRules(WEKA_CONTAINER_RULES.virtualDriveCountMatches),
  },
);
export type ContainerAllocations = Static<typeof ContainerAllocationsSchema>;

export const AddedDriveSchema = Type.Object(
  {
    uuid: Type.String({
      maxLength: 64,
      description: 'UUID of the drive in the Weka cluster (weka cluster drive list).',
    }),
    serial: Type.Optional(Type.String({ maxLength: 128, description: 'Serial number of the physical drive.' })),
    virtualUUID: Type.Optional(
      Type.String({ maxLength: 64, description: 'Virtual drive this Weka drive is, when sharing drives.' }),
    ),
  },
  { description: 'A drive that was added to the Weka cluster.' },
);
export type AddedDrive = Static<typeof AddedDriveSchema>;

export const WekaContainerStatusSchema = Type.Object(
  {
    phase: Type.Optional(phaseSchema(WEKA_CONTAINER_PHASES)),
    clusterGUID: Type.Optional(
      Type.String({ maxLength: 64, description: 'GUID of the Weka cluster the container joined.' }),
    ),
    containerID: Type.Optional(
      Type.Integer({ minimum: 0, description: 'Id of the container inside the Weka cluster.' }),
    ),
    allocations: Type.Optional(ContainerAllocationsSchema),
    addedVirtualDrives: Type.Optional(
      stringSetSchema(
        'Virtual UUIDs that completed allocate, sign (weka-sign-drive virtual add) and add (weka cluster drive add); they are skipped on retries.',
        { description: 'A virtual UUID from allocations.virtualDrives.', maxLength: 64 },
        MAX_VIRTUAL_DRIVES,
      ),
    ),
    addedDrives: Type.Optional(
      Type.Array(AddedDriveSchema, {
        maxItems: MAX_VIRTUAL_DRIVES,
        description: 'Drives added to the Weka cluster, as Weka tracks them; removed from the cluster on teardown.',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['uuid'],
      }),
    ),
    conditions: Type.Optional(conditionsSchema('Detailed observed state, one entry per condition type.')),
    observedGeneration: Type.Optional(observedGenerationSchema()),
    writtenBy: Type.Optional(writtenBySchema('container')),
    workflowID: Type.Optional(
      Type.String({
        maxLength: 512,
        description: 'Id of the Temporal workflow that drives this container. Written by the watcher.',
      }),
    ),
  },
  {
    description:
      'Observed state, written only through the status subresource by server-side apply: the container workflow owns phase, clusterGUID, containerID, allocations, addedVirtualDrives, addedDrives, conditions, observedGeneration and writtenBy; the watcher owns workflowID. Every field is optional so each writer applies only its own.',
  },
);
export type WekaContainerStatus = Static<typeof WekaContainerStatusSchema>;

export const WekaContainerSchema = resourceSchema(
  WEKA_CONTAINER_KIND,
  WekaContainerSpecSchema,
  WekaContainerStatusSchema,
);
export type WekaContainer = Static<typeof WekaContainerSchema>;
