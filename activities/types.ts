// The plain data the activities take and return, imported by workflows as types only. The
// activities themselves are typed by their implementations: `Activities` (activities/index.ts).
import type { DriveType, VirtualDrive } from '../src/allocation/index.js';
import type { ContainerAllocation } from '../src/allocation/types.js';
import type { ObjectRef } from '../src/api/names.js';
import type { Condition, WekaClusterSpec, WrittenBy } from '../src/api/index.js';
import type { ContainerOnNode, MutexOutcome, ProxySignedDrive } from '../src/protocol.js';
import type { SkippedDevice } from '../src/node/device-signing.js';
import type {
  CleanStaleVirtualDrivesPayload,
  RotateSsdProxyPayload,
  BlockDrivesPayload,
  MigrateToDriveSharingPayload,
  NodeResult,
  StaleVirtualDrive,
} from '../src/api/schemas/wekamanualoperation.js';

/** Defined with the mutex protocol (src/protocol.ts); here too, beside the other activity data. */
export type { ContainerOnNode, MutexOutcome, ProxySignedDrive };

/** What a drive container was given (defined with the allocation decisions that produce it). */
export type { ContainerAllocation };

/** What every snapshot says of its object (a WekaContainer, WekaCluster or WekaManualOperation). */
export interface ObjectSnapshot {
  uid: string;
  generation: number;
  deleting: boolean;
  annotations: Record<string, string>;
}

/** A WekaContainer as a workflow sees it: plain data, no client types. */
export interface ContainerSnapshot extends ObjectSnapshot {
  spec: {
    mode: string;
    nodeName?: string;
    cluster?: string;
    image: string;
    driveCores?: number;
    numDrives?: number;
    driveCapacity?: number;
    containerCapacity?: number;
    driveTypesRatio?: { tlc?: number; qlc?: number };
  };
  status: {
    phase?: string;
    clusterGUID?: string;
    containerID?: number;
    allocation?: ContainerAllocation;
    addedVirtualDrives: string[];
    addedDrives: AddedDriveRecord[];
    conditions: Condition[];
  };
}

export interface AddedDriveRecord {
  uuid: string;
  virtualUUID?: string;
  serial?: string;
}

export interface ExecTargetRef {
  namespace: string;
  pod: string;
  container: string;
}

/** A virtual drive of a drive container, signed on (or removed from) its node's physical drive. */
export interface VirtualDriveOnNode {
  target: ExecTargetRef;
  node: string;
  drive: VirtualDrive;
  clusterGUID: string;
}

/** A virtual drive of a Weka container, added to (or removed from) its Weka cluster. */
export interface ClusterDriveRef {
  target: ExecTargetRef;
  containerId: number;
  virtualUUID: string;
}

/** A virtual drive to add to its container's cluster, in the pool of its type. */
export interface ClusterDriveAdd extends ClusterDriveRef {
  type: DriveType;
}

export interface StatusUpdate {
  phase?: string;
  conditions?: Condition[];
  containerID?: number;
  clusterGUID?: string;
  addedVirtualDrives?: string[];
  addedDrives?: AddedDriveRecord[];
  observedGeneration?: number;
}

export interface EventInput {
  kind: 'WekaContainer' | 'WekaCluster' | 'WekaManualOperation';
  ref: ObjectRef;
  /** The object's uid, when the caller knows it: the object is then not read first. */
  uid?: string;
  /** The Event's own name, for a caller that may send it again (a retried activity). */
  name?: string;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/** An Event on a Node. */
export interface NodeEventInput {
  node: string;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/** An Event that goes with a status change (writeStatus). */
export type StatusEvent = Pick<EventInput, 'type' | 'reason' | 'message'> & { name: string };

/** A lifecycle's status, applied whole, and the Events of what changed in it. */
export interface StatusWrite {
  kind: EventInput['kind'];
  ref: ObjectRef;
  uid: string;
  /** Absent when only Events are new; says which run wrote it, and where in the run. */
  status?: (StatusUpdate | ClusterStatusUpdate | OperationStatusUpdate) & { writtenBy: WrittenBy };
  events: StatusEvent[];
}

/**
 * What became of a status write: applied (its Events recorded), stale (the object records a newer
 * write of the workflow: nothing done), or gone (no object of that uid has the name: nothing done).
 */
export type StatusWriteOutcome = 'applied' | 'stale' | 'gone';

/** A WekaManualOperation as its workflow sees it: plain data, no client types. */
export interface OperationSnapshot extends ObjectSnapshot {
  status: { conditions: Condition[] };
  spec: {
    action: string;
    payload?: {
      signDrivesPayload?: {
        type: string;
        nodeSelector?: Record<string, string>;
        devicePaths?: string[];
        shared?: boolean;
      };
      cleanStaleVirtualDrivesPayload?: CleanStaleVirtualDrivesPayload;
      rotateSsdProxyPayload?: RotateSsdProxyPayload;
      blockDrivesPayload?: BlockDrivesPayload;
      migrateToDriveSharingPayload?: MigrateToDriveSharingPayload;
    };
  };
}

/** One device signed for the node's proxy: what it reports now, and whether this call signed it. */
/** A device signed (now, or by an earlier attempt or operation), or skipped with the reason. */
export type SignedDevice =
  | { drive: ProxySignedDrive; signed: boolean; mode: 'proxy' | 'exclusive'; erased: string[] }
  | { skipped: SkippedDevice };

/** The node's shared drives after publishing, and the capacity advertised for them. */
export interface NodeDrivesPublished {
  driveCount: number;
  tlcGiB: number;
  qlcGiB: number;
  /** Drives signed for exclusive use on the node. */
  exclusiveCount: number;
  /** Virtual drives found on the devices that no container was given, first seen now. */
  found: string[];
  /** GiB of every found virtual drive the node counts as taken. */
  foundGiB: number;
  /** Listed drives no device reports any more (wiped, signed again, or taken out). */
  dropped: string[];
  /** Containers gone from the node, and from its devices, that the ledger no longer holds. */
  forgotten: string[];
  /** Containers whose ledger entries were lost (the Node registered again) and given back from the devices. */
  restored: string[];
}

/** The status fields the operation's workflow owns (applied whole, as FIELD_MANAGER.workflow). */
export interface OperationStatusUpdate {
  phase: string;
  conditions: Condition[];
  results: NodeResult[];
  /** clean-stale-virtual-drives: the fingerprint of the stale set the last pass found. */
  fingerprint?: string;
  observedGeneration: number;
}

/** What signing a device set's devices on a node did (signDeviceSet). */
export interface DeviceSetSigned {
  /** Devices signed for the proxy now. */
  signed: number;
  /** Devices not signed, each with the reason. */
  readonly skipped: string[];
  /** Claims whose device the device pod does not see yet. */
  readonly notAttached: string[];
}

export interface ClusterSnapshot extends ObjectSnapshot {
  spec: WekaClusterSpec;
  status: { clusterGUID?: string; conditions: Condition[] };
}

export interface MemberContainer {
  name: string;
  uid: string;
  node: string;
  phase: string;
}

export interface ClusterStatusUpdate {
  phase: string;
  conditions: Condition[];
  observedGeneration: number;
  clusterGUID?: string;
}

/** A virtual drive that nothing known claims but that is kept, and why. */
export interface KeptVirtualDrive {
  virtualUUID: string;
  why: string;
}

export interface StaleOnNode {
  stale: StaleVirtualDrive[];
  kept: KeptVirtualDrive[];
}

export interface RemovedOnNode {
  removed: string[];
  /** Asked to be removed, but no longer stale (claimed since, or gone). */
  spared: string[];
}

/** The nodes a rotate-ssdproxy campaign rotates, in order, or why it cannot run. */
export type ProxyRotationPlan =
  | { ok: true; targetImage: string; proxies: { node: string; image: string }[] }
  | { ok: false; reason: string; message: string };

/** Whether a node's ssdproxy may be restarted now: the Weka clusters with a container on the node, each healthy or not and why. */
export interface ProxyDisruptionVerdict {
  allowed: boolean;
  clusters: { clusterGUID: string; containers: string[]; reasons: string[] }[];
}

/** What rotating one node's ssdproxy did. */
export interface ProxyRotated {
  /** The image it ran before; equal to the target when it ran it already. */
  previousImage: string;
  /** False when the node has no ssdproxy (any more): nothing to rotate. */
  rotated: boolean;
}

/** A Ready drive container that misses virtual drives, each named with where it is missing. */
export interface DrivesMissing {
  ref: ObjectRef;
  uid: string;
  missing: string[];
}

/** What the drive verification found on one node. */
export interface NodeDrivesVerified {
  /** The Ready drive containers looked at. */
  checked: number;
  missing: DrivesMissing[];
  /** Why the node was not looked at (not Ready, its proxy does not run). */
  skipped?: string;
}

/** A container a block-drives or unblock-drives decision touched, and how. */
export interface BlockedContainer {
  /** "namespace/name". */
  container: string;
  uid: string;
  /** Its virtual drives on a blocked drive given a replacement now: old → new virtual UUID. */
  replaced: { old: string; replacement: string }[];
  /** Its virtual drives on a blocked drive that no other drive has the room for: it keeps them. */
  unplaced: string[];
  /** Replaced virtual drives it has not removed yet (from this decision or an earlier one). */
  removing: string[];
  /** Its whole drives that are blocked: never replaced (a whole drive is the container's own). */
  wholeDrives: string[];
}

/** What a block-drives or unblock-drives decision did on its node. */
export interface BlockDrivesResult {
  serials: string[];
  physicalUUIDs: string[];
  containers: BlockedContainer[];
}

/** migrate-to-drive-sharing: where a slot is in its move, the member that left and the one made in its place. */
export interface SlotState {
  /** The member that moves (the uid asked about) still exists, deleting or not. */
  leaving: boolean;
  replacement?: { name: string; uid: string; node: string; phase: string; wholeDrives: boolean };
  /** The WekaCluster is gone: nothing makes the slot again. */
  clusterGone?: boolean;
}

/** migrate-to-drive-sharing: the drives a member left, signed for the ssdproxy (signForSharing). */
export interface SharingSigned {
  drives: ProxySignedDrive[];
  /** Serials not signed, each with why. */
  skipped: string[];
}
