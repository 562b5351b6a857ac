// The activities' contracts, imported by workflows as types only (through proxyActivities).
import type { VirtualDrive } from '../src/allocation/index.js';
import type { ContainerAllocation } from '../src/lifecycle/node-allocations.js';
import type { ObjectRef } from '../src/lifecycle/names.js';
import type { Condition } from '../src/api/index.js';
import type { MutexAnswer, MutexError, MutexRequest } from '../src/protocol.js';

/** What a mutex-executed activity answers: a result, or a refusal as data (not an exception). */
export type MutexOutcome = { ok: true; result?: unknown } | { ok: false; error: MutexError; waitForCapacity?: boolean };

export interface ContainerOnNode extends ObjectRef {
  node: string;
}

/** What a drive container was given (defined with the allocation decisions that produce it). */
export type { ContainerAllocation };

export interface MutexActivities {
  allocateForContainer(input: ContainerOnNode): Promise<MutexOutcome>;
  /** Every queued allocation of one node at once: one outcome per container, in the same order. */
  allocateForContainers(input: { node: string; containers: ContainerOnNode[] }): Promise<MutexOutcome[]>;
  releaseAllocation(input: ContainerOnNode): Promise<MutexOutcome>;
  ensureProxy(input: { node: string }): Promise<MutexOutcome>;
  removeProxyIfUnused(input: { node: string }): Promise<MutexOutcome>;
  allocateClusterPorts(input: ObjectRef): Promise<MutexOutcome>;
  releaseClusterPorts(input: ObjectRef): Promise<MutexOutcome>;
}

export interface RequesterActivities {
  sendMutexRequest(input: { mutexId: string; node?: string; request: MutexRequest }): Promise<void>;
  /**
   * A mutex's answers to the requesters of one decision, and its capacity notices to the waiters,
   * sent together; requesters that no longer exist are skipped (counted in `skipped`).
   */
  answerMutexRequests(input: {
    mutexId: string;
    answers: MutexAnswer[];
    notify: string[];
  }): Promise<{ delivered: number; skipped: number }>;
}

/** A WekaContainer as a workflow sees it: plain data, no client types. */
export interface ContainerSnapshot {
  uid: string;
  generation: number;
  deleting: boolean;
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

export interface StatusUpdate {
  phase?: string;
  conditions?: Condition[];
  containerID?: number;
  addedVirtualDrives?: string[];
  addedDrives?: AddedDriveRecord[];
  observedGeneration?: number;
}

export interface EventInput {
  kind: 'WekaContainer' | 'WekaCluster' | 'WekaManualOperation';
  ref: ObjectRef;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

export interface ContainerActivities {
  readContainer(ref: ObjectRef): Promise<ContainerSnapshot | null>;
  ensureContainerPod(ref: ObjectRef): Promise<ExecTargetRef>;
  waitPodRunning(target: ExecTargetRef): Promise<void>;
  deleteContainerPod(ref: ObjectRef): Promise<void>;
  nodeExists(node: string): Promise<boolean>;
  readClusterGUID(ref: ObjectRef): Promise<string | null>;
  writeContainerStatus(input: { ref: ObjectRef; update: StatusUpdate }): Promise<void>;
  recordEvent(input: EventInput): Promise<void>;
  removeFinalizer(input: { kind: EventInput['kind']; ref: ObjectRef }): Promise<void>;
}

export interface WekaActivities {
  joinCluster(input: { target: ExecTargetRef; clusterGUID: string; name: string; hostname: string }): Promise<number>;
  signVirtualDrive(input: {
    target: ExecTargetRef;
    node: string;
    drive: VirtualDrive;
    clusterGUID: string;
  }): Promise<void>;
  addDriveToCluster(input: {
    target: ExecTargetRef;
    containerId: number;
    virtualUUID: string;
  }): Promise<{ driveUUID: string }>;
  removeDriveFromCluster(input: { target: ExecTargetRef; containerId: number; virtualUUID: string }): Promise<void>;
  unsignVirtualDrive(input: {
    target: ExecTargetRef;
    node: string;
    drive: VirtualDrive;
    clusterGUID: string;
  }): Promise<void>;
}

/** A WekaManualOperation as its workflow sees it: plain data, no client types. */
export interface OperationSnapshot {
  uid: string;
  generation: number;
  deleting: boolean;
  spec: {
    action: string;
    payload?: {
      signDrivesPayload?: {
        type: string;
        nodeSelector?: Record<string, string>;
        devicePaths?: string[];
        shared?: boolean;
      };
    };
  };
}

/** A physical drive signed for the node's ssdproxy, as `weka-sign-drive show --json` reports it. */
export interface ProxySignedDrive {
  physicalUUID: string;
  serial: string;
  capacityGiB: number;
  type: 'TLC' | 'QLC';
  devicePath: string;
}

/** What signing one node's devices did: the drives now signed, and the devices that were refused. */
export interface NodeSigning {
  drives: ProxySignedDrive[];
  /** Device paths this run signed; the other drives were signed already. */
  newlySigned: string[];
  failures: { devicePath: string; message: string }[];
}

/** The node's shared drives after publishing, and the capacity advertised for them. */
export interface NodeDrivesPublished {
  driveCount: number;
  tlcGiB: number;
  qlcGiB: number;
}

/** The status fields the operation's workflow owns (applied whole, as FIELD_MANAGER.workflow). */
export interface OperationStatusUpdate {
  phase: string;
  conditions: Condition[];
  results: {
    node: string;
    drives?: { uuid: string; serial: string; capacityGiB: number; type: string; devicePath: string }[];
    error?: string;
  }[];
  observedGeneration: number;
}

export interface SignDrivesActivities {
  readOperation(ref: ObjectRef): Promise<OperationSnapshot | null>;
  /** Names of the nodes whose labels match every entry of the selector, sorted. */
  listSelectedNodes(input: { nodeSelector: Record<string, string> }): Promise<string[]>;
  /** Signs each device for proxy use inside the node's proxy pod, skipping devices already signed. */
  signNodeDrives(input: { node: string; devicePaths: string[]; shared: boolean }): Promise<NodeSigning>;
  /** Merges the drives into the node's shared-drives annotation and sets its capacity resources. */
  publishNodeDrives(input: { node: string; drives: ProxySignedDrive[] }): Promise<NodeDrivesPublished>;
  writeOperationStatus(input: { ref: ObjectRef; status: OperationStatusUpdate }): Promise<void>;
}
