// WekaManualOperation: a one-off operation a user asks for. This operator runs sign-drives (with
// `shared: true` it signs physical drives for the ssdproxy so several clusters can share them) and
// clean-stale-virtual-drives (finds the virtual drives nothing claims, and removes them when asked),
// rotate-ssdproxy (runs every node's ssdproxy from a new image, one node at a time), and
// block-drives / unblock-drives (a failed drive out of use, the virtual drives on it replaced).
import { Type, type Static } from '@sinclair/typebox';
import {
  celRules,
  conditionsSchema,
  MAX_NAME_LENGTH,
  nodeSelectorSchema,
  observedGenerationSchema,
  writtenBySchema,
  phaseSchema,
  resourceSchema,
  type CelRule,
} from './common.js';

export const WEKA_MANUAL_OPERATION_KIND = 'WekaManualOperation';
export const WEKA_MANUAL_OPERATION_PLURAL = 'wekamanualoperations';
export const WEKA_MANUAL_OPERATION_SINGULAR = 'wekamanualoperation';

export const SIGN_DRIVES_ACTION = 'sign-drives';
export const CLEAN_STALE_VIRTUAL_DRIVES_ACTION = 'clean-stale-virtual-drives';
export const ROTATE_SSDPROXY_ACTION = 'rotate-ssdproxy';
export const BLOCK_DRIVES_ACTION = 'block-drives';
export const UNBLOCK_DRIVES_ACTION = 'unblock-drives';
export const MIGRATE_TO_DRIVE_SHARING_ACTION = 'migrate-to-drive-sharing';
/** The actions this operator runs; it leaves the Weka operator's others alone. */
export const OPERATOR_ACTIONS = [
  SIGN_DRIVES_ACTION,
  CLEAN_STALE_VIRTUAL_DRIVES_ACTION,
  ROTATE_SSDPROXY_ACTION,
  BLOCK_DRIVES_ACTION,
  UNBLOCK_DRIVES_ACTION,
  MIGRATE_TO_DRIVE_SHARING_ACTION,
] as const;

/** Phases the operator writes to status.phase; the schema accepts any string. */
export const WEKA_MANUAL_OPERATION_PHASES = ['Pending', 'Running', 'Succeeded', 'Failed', 'Refused'] as const;
/** An operation in one of these phases has run: it is never started again, and holds nothing. */
export const ENDED_OPERATION_PHASES: readonly string[] = ['Succeeded', 'Failed', 'Refused'];

/** Longest device path and most paths per operation; bounds the CEL cost of the path rule. */
export const MAX_DEVICE_PATH_LENGTH = 256;
export const MAX_DEVICE_PATHS = 64;

export const WEKA_MANUAL_OPERATION_RULES = {
  signDrivesNeedsNodeSelector: {
    rule: `self.action != '${SIGN_DRIVES_ACTION}' || (has(self.payload.signDrivesPayload) && has(self.payload.signDrivesPayload.nodeSelector) && size(self.payload.signDrivesPayload.nodeSelector) > 0)`,
    message:
      'sign-drives needs payload.signDrivesPayload.nodeSelector with at least one label: signing erases drives, so the nodes must be chosen explicitly',
    fieldPath: '.payload.signDrivesPayload.nodeSelector',
    reason: 'FieldValueRequired',
  },
  cleanStaleNeedsNodeSelector: {
    rule: `self.action != '${CLEAN_STALE_VIRTUAL_DRIVES_ACTION}' || (has(self.payload.cleanStaleVirtualDrivesPayload) && has(self.payload.cleanStaleVirtualDrivesPayload.nodeSelector) && size(self.payload.cleanStaleVirtualDrivesPayload.nodeSelector) > 0)`,
    message:
      'clean-stale-virtual-drives needs payload.cleanStaleVirtualDrivesPayload.nodeSelector with at least one label: removing a virtual drive destroys its data, so the nodes must be chosen explicitly',
    fieldPath: '.payload.cleanStaleVirtualDrivesPayload.nodeSelector',
    reason: 'FieldValueRequired',
  },
  devicePathsNeededForDevicePaths: {
    rule: "self.type != 'device-paths' || (has(self.devicePaths) && size(self.devicePaths) > 0)",
    message: 'type device-paths needs at least one entry in devicePaths',
    fieldPath: '.devicePaths',
    reason: 'FieldValueRequired',
  },
  devicePathShape: {
    // Each path component starts with a letter, digit or underscore, so ".." cannot climb out of /dev.
    rule: "self.matches('^/dev/[A-Za-z0-9_][A-Za-z0-9._:+-]*(/[A-Za-z0-9_][A-Za-z0-9._:+-]*)*$')",
    message: 'devicePaths entries must be device paths under /dev, such as /dev/nvme0n1 or /dev/disk/by-id/nvme-...',
  },
} as const satisfies Record<string, CelRule>;

const destroys = (what: string): string =>
  `${what} Signing writes a Weka header over the device, so whatever it held is destroyed for good. Default false: such a device is skipped and reported in the node's result.`;

export const SignOptionsSchema = Type.Object(
  {
    allowEraseWekaPartitions: Type.Optional(
      Type.Boolean({
        description: destroys(
          'Sign again a device that is already signed for Weka for the other use (proxy or exclusive), erasing its Weka partition. A device that holds virtual drives or is added to a Weka cluster is never erased.',
        ),
      }),
    ),
    allowEraseNonWekaPartitions: Type.Optional(
      Type.Boolean({
        description: destroys('Sign a device that has partitions or a filesystem of its own, erasing them.'),
      }),
    ),
    allowNonEmptyDevice: Type.Optional(
      Type.Boolean({
        description: destroys('Sign a device whose content is not empty although nothing on it is recognised.'),
      }),
    ),
    skipTrimFormat: Type.Optional(
      Type.Boolean({ description: 'Do not trim the device while signing it (weka-sign-drive --skip-trim-format).' }),
    ),
  },
  {
    description:
      'What signing may destroy, each false unless set. A mounted device (the root disk among them) is never signed, whatever these say: unmount it first.',
  },
);
export type SignOptions = Static<typeof SignOptionsSchema>;

export const SignDrivesPayloadSchema = Type.Object(
  {
    type: Type.String({
      maxLength: 64,
      description:
        'How the drives to sign are chosen on each selected node: device-paths (the listed devicePaths), all-not-root (every drive except the root disk), aws-all or gcp-all (every local NVMe drive of the cloud instance), as in the Weka operator.',
    }),
    nodeSelector: Type.Optional(
      nodeSelectorSchema(
        'Labels of the nodes whose drives are signed. Required for sign-drives: signing erases drives.',
      ),
    ),
    devicePaths: Type.Optional(
      Type.Array(
        Type.String({
          maxLength: MAX_DEVICE_PATH_LENGTH,
          description: 'A device path such as /dev/nvme0n1.',
          ...celRules(WEKA_MANUAL_OPERATION_RULES.devicePathShape),
        }),
        { maxItems: MAX_DEVICE_PATHS, description: 'Device paths to sign when type is device-paths.' },
      ),
    ),
    shared: Type.Optional(
      Type.Boolean({
        description:
          'true: sign the drives for the ssdproxy (weka-sign-drive sign proxy) so several Weka clusters share them through virtual drives. false or unset: sign them for exclusive use, each drive given whole to one drive container.',
      }),
    ),
    options: Type.Optional(SignOptionsSchema),
  },
  {
    description: 'Parameters of sign-drives.',
    ...celRules(WEKA_MANUAL_OPERATION_RULES.devicePathsNeededForDevicePaths),
  },
);
export type SignDrivesPayload = Static<typeof SignDrivesPayloadSchema>;

/** A stale set's fingerprint: the SHA-256 of its lines, in hex. */
export const FINGERPRINT_PATTERN = '^[0-9a-f]{64}$';

export const CleanStaleVirtualDrivesPayloadSchema = Type.Object(
  {
    nodeSelector: Type.Optional(
      nodeSelectorSchema(
        'Labels of the nodes whose devices are searched. Required: removing a virtual drive destroys its data.',
      ),
    ),
    deleteStaleVids: Type.Optional(
      Type.Boolean({
        description:
          'false or unset: report the stale virtual drives and their fingerprint, and remove nothing. true: remove them once two passes, secondPassAfterSeconds apart, find the same set (or at once when confirmFingerprint is that of the set found).',
      }),
    ),
    confirmFingerprint: Type.Optional(
      Type.String({
        pattern: FINGERPRINT_PATTERN,
        description:
          'The fingerprint a report-only run of this operation published (status.fingerprint): with deleteStaleVids, the drives are removed at the first pass if its set has this fingerprint, and nothing is removed if it has another.',
      }),
    ),
    secondPassAfterSeconds: Type.Optional(
      Type.Integer({
        minimum: 5,
        maximum: 3600,
        description: 'Seconds between two passes; 60 unless set.',
      }),
    ),
  },
  { description: 'Parameters of clean-stale-virtual-drives.' },
);
export type CleanStaleVirtualDrivesPayload = Static<typeof CleanStaleVirtualDrivesPayloadSchema>;

/** Longest image reference an operation takes. */
export const MAX_IMAGE_LENGTH = 512;

export const RotateSsdProxyPayloadSchema = Type.Object(
  {
    targetImage: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_IMAGE_LENGTH,
        description:
          "The image every selected node's ssdproxy runs afterwards. Unset: the operator's proxy image (the chart's proxyImage). It must pass the operator's allowed images.",
      }),
    ),
    nodeSelector: Type.Optional(
      nodeSelectorSchema('Labels of the nodes whose ssdproxy is rotated. Unset or empty: every node with an ssdproxy.'),
    ),
  },
  { description: 'Parameters of rotate-ssdproxy.' },
);
export type RotateSsdProxyPayload = Static<typeof RotateSsdProxyPayloadSchema>;

/** The most drives one block-drives operation names. */
export const MAX_BLOCKED_DRIVES = 64;

const driveIdsSchema = (description: string) =>
  Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 128 }), {
      maxItems: MAX_BLOCKED_DRIVES,
      description,
      'x-kubernetes-list-type': 'set',
    }),
  );

export const BlockDrivesPayloadSchema = Type.Object(
  {
    node: Type.String({ minLength: 1, maxLength: MAX_NAME_LENGTH, description: 'The node whose drives are named.' }),
    serialIDs: driveIdsSchema(
      'Serials of drives the node signed (shared, or for exclusive use): annotation weka.io/blocked-drives.',
    ),
    physicalUUIDs: driveIdsSchema(
      "Physical UUIDs of the node's shared drives (signed for the ssdproxy): annotation weka.io/blocked-drives-physical-uuids.",
    ),
  },
  {
    description:
      'Parameters of block-drives and unblock-drives: the node, and its drives by serial or physical UUID (at least one).',
  },
);
export type BlockDrivesPayload = Static<typeof BlockDrivesPayloadSchema>;

export const MigrateToDriveSharingPayloadSchema = Type.Object(
  {
    cluster: Type.String({
      minLength: 1,
      maxLength: MAX_NAME_LENGTH,
      description: "The WekaCluster on whole drives to move to drive sharing, in the operation's namespace.",
    }),
  },
  { description: 'Parameters of migrate-to-drive-sharing.' },
);
export type MigrateToDriveSharingPayload = Static<typeof MigrateToDriveSharingPayloadSchema>;

export const WekaManualOperationSpecSchema = Type.Object(
  {
    action: Type.String({
      maxLength: 64,
      description: `Operation to run. This operator runs ${OPERATOR_ACTIONS.join(', ')}; it leaves the Weka operator's other actions alone.`,
    }),
    image: Type.Optional(
      Type.String({ description: 'Weka container image to run the operation with, when it needs one.' }),
    ),
    imagePullSecret: Type.Optional(
      Type.String({
        maxLength: MAX_NAME_LENGTH,
        description: 'Name of the Secret, in this namespace, used to pull the image.',
      }),
    ),
    payload: Type.Object(
      {
        signDrivesPayload: Type.Optional(SignDrivesPayloadSchema),
        cleanStaleVirtualDrivesPayload: Type.Optional(CleanStaleVirtualDrivesPayloadSchema),
        rotateSsdProxyPayload: Type.Optional(RotateSsdProxyPayloadSchema),
        blockDrivesPayload: Type.Optional(BlockDrivesPayloadSchema),
        migrateToDriveSharingPayload: Type.Optional(MigrateToDriveSharingPayloadSchema),
      },
      { description: 'Parameters of the action, one member per action.' },
    ),
  },
  {
    description: 'The operation to run. Not changed by the operator.',
    ...celRules(
      WEKA_MANUAL_OPERATION_RULES.signDrivesNeedsNodeSelector,
      WEKA_MANUAL_OPERATION_RULES.cleanStaleNeedsNodeSelector,
    ),
  },
);
export type WekaManualOperationSpec = Static<typeof WekaManualOperationSpecSchema>;

export const SignedDriveSchema = Type.Object(
  {
    uuid: Type.String({ maxLength: 64, description: 'UUID written onto the drive by signing.' }),
    serial: Type.Optional(Type.String({ maxLength: 128, description: 'Serial number of the drive.' })),
    capacityGiB: Type.Optional(
      Type.Integer({ format: 'int64', minimum: 0, description: 'Capacity of the drive, in GiB.' }),
    ),
    type: Type.Optional(Type.String({ maxLength: 16, description: 'Type of the drive: TLC or QLC.' })),
    devicePath: Type.Optional(
      Type.String({ maxLength: MAX_DEVICE_PATH_LENGTH, description: 'Device path the drive was signed at.' }),
    ),
  },
  { description: 'A drive that was signed.' },
);
export type SignedDrive = Static<typeof SignedDriveSchema>;

export const SkippedDeviceSchema = Type.Object(
  {
    devicePath: Type.String({ maxLength: MAX_DEVICE_PATH_LENGTH, description: 'The device that was not signed.' }),
    reason: Type.String({
      maxLength: 64,
      description:
        'Why, in one word: Mounted, RootDisk, Held, HasPartitions, NotEmpty, SignedForOtherUse, InUse, NotFound or Refused.',
    }),
    message: Type.String({ maxLength: 4096, description: 'What was found, and what would let it be signed.' }),
  },
  { description: 'A device the operation left alone.' },
);
export type SkippedDevice = Static<typeof SkippedDeviceSchema>;

/** The most virtual drives a node's result lists. */
export const MAX_STALE_VIRTUAL_DRIVES = 512;

export const StaleVirtualDriveSchema = Type.Object(
  {
    virtualUUID: Type.String({ maxLength: 64, description: 'The virtual drive.' }),
    physicalUUID: Type.String({ maxLength: 64, description: 'The physical drive it is on.' }),
    capacityGiB: Type.Integer({ format: 'int64', minimum: 0, description: 'Its size, in GiB.' }),
    ownerClusterGUID: Type.String({ maxLength: 64, description: 'The Weka cluster it was made for.' }),
  },
  { description: 'A virtual drive on a device of the node that no ledger, status or Weka cluster claims.' },
);
export type StaleVirtualDrive = Static<typeof StaleVirtualDriveSchema>;

export const DriveReplacementSchema = Type.Object(
  {
    container: Type.String({ maxLength: 2 * MAX_NAME_LENGTH + 1, description: 'The drive container, namespace/name.' }),
    virtualUUID: Type.String({ maxLength: 64, description: 'Its virtual drive on a blocked drive.' }),
    replacement: Type.Optional(Type.String({ maxLength: 64, description: 'The virtual drive that replaces it.' })),
    state: Type.String({
      maxLength: 32,
      description:
        'Replacing (the replacement is being signed and added, then the old drive removed), Replaced, NoCapacity (no other drive of the node has the room: the container keeps it and asks again when capacity is released) or WholeDrive (a whole drive held for exclusive use: blocked, not replaced).',
    }),
  },
  { description: 'block-drives: a drive of a container on a blocked drive, and its replacement.' },
);
export type DriveReplacement = Static<typeof DriveReplacementSchema>;

export const NodeResultSchema = Type.Object(
  {
    node: Type.String({ maxLength: MAX_NAME_LENGTH, description: 'Name of the node.' }),
    drives: Type.Optional(
      Type.Array(SignedDriveSchema, {
        maxItems: MAX_DEVICE_PATHS,
        description: 'Drives signed on the node.',
        'x-kubernetes-list-type': 'atomic',
      }),
    ),
    skipped: Type.Optional(
      Type.Array(SkippedDeviceSchema, {
        maxItems: MAX_DEVICE_PATHS,
        description: 'Devices chosen on the node and not signed, each with the reason; the others were still signed.',
        'x-kubernetes-list-type': 'atomic',
      }),
    ),
    staleVirtualDrives: Type.Optional(
      Type.Array(StaleVirtualDriveSchema, {
        maxItems: MAX_STALE_VIRTUAL_DRIVES,
        description: 'clean-stale-virtual-drives: the stale virtual drives the last pass found on the node.',
        'x-kubernetes-list-type': 'atomic',
      }),
    ),
    removed: Type.Optional(
      Type.Array(Type.String({ maxLength: 64 }), {
        maxItems: MAX_STALE_VIRTUAL_DRIVES,
        description: 'clean-stale-virtual-drives: the virtual drives removed from the node.',
        'x-kubernetes-list-type': 'atomic',
      }),
    ),
    rotation: Type.Optional(
      Type.String({
        maxLength: 32,
        description:
          "rotate-ssdproxy: where the node's ssdproxy is in the campaign: Pending, Waiting (a Weka cluster on the node is not healthy), Rotating, Verifying, Done, Skipped (it ran the image already) or Failed.",
      }),
    ),
    proxyImage: Type.Optional(
      Type.String({ maxLength: MAX_IMAGE_LENGTH, description: "rotate-ssdproxy: the image the node's ssdproxy runs." }),
    ),
    previousProxyImage: Type.Optional(
      Type.String({
        maxLength: MAX_IMAGE_LENGTH,
        description: "rotate-ssdproxy: the image the node's ssdproxy ran before this operation rotated it.",
      }),
    ),
    waitingFor: Type.Optional(
      Type.String({
        maxLength: 4096,
        description:
          'rotate-ssdproxy: what the node waits for before (or after) its ssdproxy is restarted. block-drives: the replacements it waits for. migrate-to-drive-sharing: what its member waits for.',
      }),
    ),
    blocked: Type.Optional(
      Type.Array(Type.String({ maxLength: 160 }), {
        maxItems: 2 * MAX_BLOCKED_DRIVES + 512,
        description:
          "block-drives, unblock-drives: the node's blocked drives afterwards ('serial X', 'physical UUID Y').",
        'x-kubernetes-list-type': 'atomic',
      }),
    ),
    replacements: Type.Optional(
      Type.Array(DriveReplacementSchema, {
        maxItems: MAX_STALE_VIRTUAL_DRIVES,
        description: 'block-drives: every drive of a container on a blocked drive, and where its replacement is.',
        'x-kubernetes-list-type': 'atomic',
      }),
    ),
    member: Type.Optional(
      Type.String({
        maxLength: 2 * MAX_NAME_LENGTH + 1,
        description:
          'migrate-to-drive-sharing: the member on the node, namespace/name (its replacement once it has one).',
      }),
    ),
    migration: Type.Optional(
      Type.String({
        maxLength: 32,
        description:
          "migrate-to-drive-sharing: where the node's member is: Pending, Waiting (a Weka cluster on the node is not healthy), Draining (its whole drives phase out of Weka and it leaves), Signing (its drives are signed for the ssdproxy), Joining (its replacement on virtual drives comes up), Done or Failed.",
      }),
    ),
    error: Type.Optional(
      Type.String({ maxLength: 32768, description: 'Why the operation failed on this node; empty on success.' }),
    ),
  },
  { description: 'Result of the operation on one node.' },
);
export type NodeResult = Static<typeof NodeResultSchema>;

export const WekaManualOperationStatusSchema = Type.Object(
  {
    phase: Type.Optional(phaseSchema(WEKA_MANUAL_OPERATION_PHASES)),
    results: Type.Optional(
      Type.Array(NodeResultSchema, {
        maxItems: 5000,
        description: 'Per-node results, one entry per selected node.',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['node'],
      }),
    ),
    fingerprint: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          'clean-stale-virtual-drives: the fingerprint of the stale set the last pass found on every node (SHA-256 of its lines "node|virtualUUID|physicalUUID|ownerClusterGUID|GiB", sorted), for confirmFingerprint.',
      }),
    ),
    conditions: Type.Optional(conditionsSchema('Detailed observed state, one entry per condition type.')),
    observedGeneration: Type.Optional(observedGenerationSchema()),
    writtenBy: Type.Optional(writtenBySchema('operation')),
    workflowID: Type.Optional(
      Type.String({
        maxLength: 512,
        description: 'Id of the Temporal workflow that runs this operation. Written by the watcher.',
      }),
    ),
  },
  {
    description:
      'Observed state, written only through the status subresource by server-side apply: the operation workflow owns phase, results, fingerprint, conditions, observedGeneration and writtenBy; the watcher owns workflowID. Every field is optional so each writer applies only its own.',
  },
);
export type WekaManualOperationStatus = Static<typeof WekaManualOperationStatusSchema>;

export const WekaManualOperationSchema = resourceSchema(
  WEKA_MANUAL_OPERATION_KIND,
  WekaManualOperationSpecSchema,
  WekaManualOperationStatusSchema,
);
export type WekaManualOperation = Static<typeof WekaManualOperationSchema>;
