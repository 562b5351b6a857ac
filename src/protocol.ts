// The operator's Temporal protocol, in one place: workflow names, inputs and ids, task queues,
// signals, queries, search attributes, and the node mutex's request kinds and payloads. Workflows,
// activities, the operator process and the tests import this module; nothing outside workflows/
// imports a workflow's implementation. Defining a signal or a search attribute key only builds a
// plain descriptor, so this file stays as pure as the rest of src/.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { ObjectRef } from './api/names.js';
import type { StaleVirtualDrive } from './api/schemas/wekamanualoperation.js';

// ---------------------------------------------------------------- workflows, inputs, ids, queues

/** The registered names of the operator's workflow types. */
export const WORKFLOW = {
  driveContainer: 'driveContainerWorkflow',
  cluster: 'clusterWorkflow',
  manualOperation: 'manualOperationWorkflow',
  mutex: 'mutexWorkflow',
  driveVerification: 'driveVerificationWorkflow',
  healthyClusters: 'healthyClustersWorkflow',
} as const;

/** The one drive verification workflow of the operator (its task queue): it looks at every node in turn. */
export function driveVerificationWorkflowId(taskQueue: string): string {
  return `weka-drive-verification/${taskQueue}`;
}

export interface DriveVerificationInput {
  /** Seconds between two sweeps over the nodes. */
  periodSeconds: number;
}

/** The input of every workflow that runs one object's lifecycle: the object, and which one. */
export interface ObjectWorkflowInput extends ObjectRef {
  uid: string;
  /** Continue as new past this many history events (default: the workflow's own limit). */
  historyLimit?: number;
  /**
   * What a drive container's teardown carries when it continues as new, should its object vanish
   * before the new run reads it (its finalizer removed by hand): its node, its cluster's GUID, and
   * whether it may have joined that cluster.
   */
  teardown?: { node: string; clusterGUID?: string; joined: boolean };
}

/** A mutex's queue and memory, carried through continue-as-new in its input. */
export interface MutexState {
  queue: MutexRequest[];
  /**
   * Request ids already answered, oldest first, bounded to ANSWERED_MEMORY, and in bytes when
   * carried through continue-as-new (src/node/mutex-queue.ts stateToCarry).
   */
  answered: MutexResponse[];
  /** Requesters (workflow ids) waiting for capacity, in the order they were refused. */
  waiters: string[];
  /** Requests executed since this mutex was first started (across continue-as-new). */
  executed: number;
}

export interface MutexInput {
  key: string;
  /** The node this mutex serializes, if it is a node's. */
  node?: string;
  state?: MutexState;
  /** Continue as new past this many history events (default: the workflow's own limit). */
  historyLimit?: number;
  /** The most bytes of state carried through continue-as-new (default: the workflow's own limit). */
  carriedStateBytes?: number;
}

/**
 * A campaign's wait, as a child workflow of its operation, until every Weka cluster with a container
 * on `node` is healthy or the reason it is not changes from `shown`. Carried through continue-as-new.
 */
export interface HealthyClustersInput {
  node: string;
  /** The reason the operation shows now ('' at first). */
  shown: string;
  /** Looks made since `shown` was shown: the back-off before the next (0: look at once). */
  looks: number;
  /** Continue as new past this many history events (default: the workflow's own limit). */
  historyLimit?: number;
}

/** How a wait for healthy clusters ended: they are healthy, or they are not for a new reason. */
export type HealthyClustersAnswer = { allowed: true } | { allowed: false; why: string };

/**
 * The child of the operation of uid `operationUid` waiting for the clusters on `node` to be healthy.
 * Made from the uid in the operation's input, never from the running workflow's id, so that a
 * replay under another id (a recorded history) starts the same child.
 */
export function healthyClustersWorkflowId(operationUid: string, node: string): string {
  return `${operationWorkflowId(operationUid)}/healthy-clusters/${node}`;
}

/** The signature of the drive-container, cluster and sign-drives workflows, for typed clients. */
export type LifecycleWorkflow = (input: ObjectWorkflowInput) => Promise<void>;
/** The signature of the mutex workflow, for typed clients. */
export type MutexWorkflow = (input: MutexInput) => Promise<void>;

export function containerWorkflowId(uid: string): string {
  return `weka-container/${uid}`;
}

export function operationWorkflowId(uid: string): string {
  return `weka-operation/${uid}`;
}

export function clusterWorkflowId(uid: string): string {
  return `weka-cluster/${uid}`;
}

export function nodeMutexId(node: string): string {
  return `weka-node/${node}`;
}

/** One global mutex serializes cluster port-range allocation across all clusters. */
export const CLUSTER_PORTS_MUTEX_ID = 'weka-cluster-ports';

/**
 * The task queue the mutex workflows (and so their decisions) run on, beside the operator's main
 * one: its own pollers, slots and workflow thread, so a hand-over between two allocations never
 * queues behind the rollout's signing and adding.
 */
export function mutexTaskQueue(taskQueue: string): string {
  return `${taskQueue}-mutex`;
}

/**
 * The visibility query for the running mutex workflows of an operator's task queue: on its mutex
 * queue, or on the main one for a mutex started before the mutex queue existed.
 */
export function runningMutexesQuery(taskQueue: string): string {
  return `WorkflowType="${WORKFLOW.mutex}" AND ExecutionStatus="Running" AND (TaskQueue="${mutexTaskQueue(taskQueue)}" OR TaskQueue="${taskQueue}")`;
}

// ---------------------------------------------------------------- the node mutex's requests

export interface MutexRequest {
  requestId: string;
  kind: string;
  /** Workflow id of the requester, which gets the answer by signal. */
  replyTo: string;
  payload: unknown;
}

export interface MutexError {
  type: string;
  message: string;
  [field: string]: unknown;
}

export interface MutexResponse {
  requestId: string;
  kind: string;
  ok: boolean;
  result?: unknown;
  /** Why it was refused; with `ok`, why it was served only in part (a growth that does not fit yet). */
  error?: MutexError;
  /**
   * Refused, or served only in part, for lack of capacity: the requester should wait for a
   * release, then ask again.
   */
  waitForCapacity?: boolean;
}

/** An answer on its way to the requester that asked. */
export interface MutexAnswer {
  replyTo: string;
  response: MutexResponse;
}

/** What a mutex-executed activity answers: a result, or a refusal as data (not an exception). */
export type MutexOutcome =
  | { ok: true; result?: unknown; error?: MutexError; waitForCapacity?: boolean }
  | { ok: false; error: MutexError; waitForCapacity?: boolean };

/** The payload of the requests about one container on one node (allocate, release). */
export interface ContainerOnNode extends ObjectRef {
  node: string;
  /** The container's uid: a release never touches another object that has the name now. */
  uid?: string;
}

/** A physical drive signed for the node's ssdproxy, as `weka-sign-drive list -j` reports it. */
export interface ProxySignedDrive {
  physicalUUID: string;
  serial: string;
  capacityGiB: number;
  type: 'TLC' | 'QLC';
  devicePath: string;
}

/** The payload each kind of request carries. */
export interface MutexPayloads {
  allocate: ContainerOnNode;
  release: ContainerOnNode;
  'ensure-proxy': { node: string };
  'remove-proxy-if-unused': { node: string };
  /** A cluster's ports, for the cluster of that uid only (never another created since under its name). */
  'allocate-cluster-ports': ObjectRef & { uid: string };
  'release-cluster-ports': ObjectRef & { uid: string };
  /** `onlyWhileUsed`: nothing is done (no ssdproxy made) when no drive container uses the node. */
  'publish-drives': { node: string; onlyWhileUsed?: boolean };
  'sign-drive': { node: string; devicePath: string; operation: ObjectRef & { uid: string } };
  'sign-device-set': { node: string; cluster: ObjectRef & { uid: string }; set: string };
  'release-device-set': { node: string; cluster: ObjectRef & { uid: string }; set: string };
  'find-stale-drives': { node: string };
  /** Removes those of `drives` that are still stale when the request runs. */
  'remove-stale-drives': { node: string; drives: StaleVirtualDrive[] };
  /** Runs the node's ssdproxy from `image`: its object's image is set and its pod made again from it. */
  'rotate-proxy': { node: string; image: string };
  /** Blocks drives of the node (by serial or physical UUID) and replaces the virtual drives on them in its ledger. */
  'block-drives': { node: string; serials?: string[]; physicalUUIDs?: string[] };
  'unblock-drives': { node: string; serials?: string[]; physicalUUIDs?: string[] };
  /** A container removed these replaced virtual drives of it from Weka and the device: the ledger forgets them. */
  'forget-replaced-drives': { node: string; uid: string; virtualUUIDs: string[] };
  /** Signs for the ssdproxy the whole drives a member moving to drive sharing left (migrate-to-drive-sharing). */
  'sign-for-sharing': { node: string; serials: string[]; operation: ObjectRef & { uid: string } };
}

/**
 * The activity that executes each kind of request, by name: the mutex workflow runs them, and
 * the operator's metrics time the requests they execute. A new kind goes here first. Allocations
 * are decided in batches: their activity takes every allocation queued on the node at once.
 */
export const MUTEX_REQUEST_ACTIVITIES = {
  allocate: 'allocateForContainers',
  release: 'releaseAllocation',
  'ensure-proxy': 'ensureProxy',
  'remove-proxy-if-unused': 'removeProxyIfUnused',
  'allocate-cluster-ports': 'allocateClusterPorts',
  'release-cluster-ports': 'releaseClusterPorts',
  'publish-drives': 'publishNodeDrives',
  'sign-drive': 'signDrive',
  'sign-device-set': 'signDeviceSet',
  'release-device-set': 'releaseDeviceSet',
  'find-stale-drives': 'findStaleVirtualDrives',
  'remove-stale-drives': 'removeStaleVirtualDrives',
  'rotate-proxy': 'rotateProxy',
  'block-drives': 'blockDrives',
  'unblock-drives': 'unblockDrives',
  'forget-replaced-drives': 'forgetReplacedDrives',
  'sign-for-sharing': 'signForSharing',
} as const satisfies Record<keyof MutexPayloads, string>;
export type MutexRequestKind = keyof typeof MUTEX_REQUEST_ACTIVITIES;

/** Request kinds that a mutex may decide several of at once, in one activity. */
export const BATCHED_KINDS: ReadonlySet<string> = new Set<MutexRequestKind>(['allocate']);

/**
 * Request kinds whose queued requests for the same payload are one decision, executed once and
 * answered to each requester: every container on a node asks for the same proxy, and one that
 * runs after all of them asked serves them all.
 */
export const COALESCED_KINDS: ReadonlySet<string> = new Set<MutexRequestKind>(['ensure-proxy']);

/** The activity that executes the queued requests of BATCHED_KINDS together. */
export const BATCH_ACTIVITY = MUTEX_REQUEST_ACTIVITIES.allocate;

/** The activities that allocate. */
export const ALLOCATION_ACTIVITIES: ReadonlySet<string> = new Set([BATCH_ACTIVITY]);

/** Request kinds whose completion frees or adds capacity on the mutex's resource. */
export const RELEASING_KINDS: ReadonlySet<string> = new Set<MutexRequestKind>([
  'release',
  'release-cluster-ports',
  'publish-drives',
  'sign-device-set',
  'remove-stale-drives',
  'unblock-drives',
]);

// ---------------------------------------------------------------- signals and queries

/** A request to a mutex workflow (sent with signal-with-start by an activity). */
export const mutexRequestSignal = defineSignal<[MutexRequest]>('mutexRequest');
/** The answer to a mutex request, sent to the requester. */
export const mutexResponseSignal = defineSignal<[MutexResponse]>('mutexResponse');
/** Capacity was released on the mutex's resource: a refused requester may ask again. */
export const capacityReleasedSignal = defineSignal<[{ mutexId: string }]>('capacityReleased');

/** The object's spec changed (the watcher signals it); the workflow re-reads it. */
export const specChangedSignal = defineSignal<[]>('specChanged');
/** Deletion of the object started: tear down. Cancelling the workflow does the same. */
export const deleteRequestedSignal = defineSignal<[]>('deleteRequested');
/** Something the workflow waits for may have happened (e.g. a cluster GUID); look again now. */
export const wakeUpSignal = defineSignal<[]>('wakeUp');
/**
 * A drive container's pod, or its node's ssdproxy pod, was deleted or ended (the watcher sees the
 * operator's pods): a Ready container looks at both, and makes again what is lost.
 */
export const podLostSignal = defineSignal<[]>('podLost');

/** Told to a Ready drive container by the drive verification: these virtual drives of it are missing, and where. */
export const drivesMissingSignal = defineSignal<[{ missing: string[] }]>('drivesMissing');

/**
 * Told to a drive container by a block-drives operation: drives it holds on its node were blocked.
 * It asks its node's mutex again, which answers with their replacements (or why there are none).
 */
export const drivesBlockedSignal = defineSignal<[]>('drivesBlocked');

/** Sent at every operator start: the drive verification's period, as the operator is configured now. */
export const verificationSettingsSignal = defineSignal<[DriveVerificationInput]>('verificationSettings');

export interface MutexView {
  key: string;
  /** Every request being executed: one, or a batch of allocations decided together. */
  running: MutexRequest[];
  queue: MutexRequest[];
  waiters: string[];
  executed: number;
}
export const mutexStateQuery = defineQuery<MutexView>('mutexState');

export interface LifecycleView {
  phase: string;
  step: string;
  detail: string;
  allocation?: unknown;
  lastError?: string;
}
export const stateQuery = defineQuery<LifecycleView>('state');

// ---------------------------------------------------------------- search attributes

// Registered on the Temporal server as Keyword (the local control plane registers them at start).
// Objects are named namespace/name in every search attribute.
export const WekaNode = defineSearchAttributeKey('WekaNode', SearchAttributeType.KEYWORD);
export const WekaCluster = defineSearchAttributeKey('WekaCluster', SearchAttributeType.KEYWORD);
export const WekaContainer = defineSearchAttributeKey('WekaContainer', SearchAttributeType.KEYWORD);
export const WekaPhase = defineSearchAttributeKey('WekaPhase', SearchAttributeType.KEYWORD);
/** A sign-drives workflow's WekaManualOperation. */
export const WekaOperation = defineSearchAttributeKey('WekaOperation', SearchAttributeType.KEYWORD);
/** Every search attribute above: the operator refuses to start in a namespace that lacks one. */
export const SEARCH_ATTRIBUTE_KEYS = [WekaNode, WekaCluster, WekaContainer, WekaPhase, WekaOperation] as const;
