// What the CR watcher does about one object it sees, as a pure function of the object and of what
// this watcher process already did for that uid. The watcher only executes the actions. Every
// action is idempotent and keyed by workflow id, so two watchers, or one that restarted and
// forgot everything, converge on the same outcome: one running workflow per object.
import type { Condition } from '../api/index.js';
import { FINALIZER } from '../api/names.js';
import { ENDED_OPERATION_PHASES } from '../api/schemas/wekamanualoperation.js';
import { readyIsDerived, STANDARD_CONDITION_TYPES } from '../lifecycle/standard-conditions.js';
import { clusterWorkflowId, containerWorkflowId, operationWorkflowId } from '../protocol.js';

export type WatchedKind = 'WekaContainer' | 'WekaManualOperation' | 'WekaCluster';

/** The kinds the watcher handles unless told otherwise. */
export const DEFAULT_WATCHED_KINDS: readonly WatchedKind[] = ['WekaContainer', 'WekaManualOperation', 'WekaCluster'];

/** The essentials of an object the decision reads. */
export interface WatchedObject {
  kind: WatchedKind;
  namespace: string;
  name: string;
  uid: string;
  generation: number;
  deleting: boolean;
  finalizers: readonly string[];
  labels: Readonly<Record<string, string>>;
  spec: { mode?: string; action?: string; nodeName?: string; cluster?: string };
  status: {
    observedGeneration?: number;
    workflowID?: string;
    phase?: string;
    /** The type of a condition whose status is False: the object waits for something. */
    falseCondition?: string;
  };
}

/**
 * What this watcher process did for a uid. Forgotten on restart; `deleteSignalled` and
 * `workflowIdWritten` are also forgotten at every (re-)list, so a teardown that failed is asked
 * for again. `started` is forgotten when the workflow is seen to have ended while its object still
 * exists (src/operator/ended-workflows.ts), so it is started again.
 */
export interface SeenState {
  started: boolean;
  /** The newest generation the workflow was told about, or surely read itself. */
  signalledGeneration: number;
  deleteSignalled: boolean;
  workflowIdWritten: boolean;
}

export type WatchAction =
  | { type: 'addFinalizer' }
  | { type: 'startWorkflow' }
  | { type: 'signalSpecChanged'; generation: number }
  | { type: 'signalDelete' }
  | { type: 'writeWorkflowId'; workflowId: string };

/** The workflow that runs an object's lifecycle, and how it shows up in Temporal. */
export interface LifecycleWorkflow {
  type: string;
  id: string;
  summary: string;
  /** Values for the WekaContainer / WekaNode / WekaCluster search attributes; empty ones left out. */
  searchAttributes: { WekaContainer?: string; WekaNode?: string; WekaCluster?: string; WekaOperation?: string };
}

/** The lifecycle workflow type of each kind. */
export const LIFECYCLE_WORKFLOW_TYPES: Readonly<Record<WatchedKind, string>> = {
  WekaContainer: 'driveContainerWorkflow',
  WekaManualOperation: 'manualOperationWorkflow',
  WekaCluster: 'clusterWorkflow',
};

/** The operation actions this operator runs, each with what the workflow's summary calls it. */
const OPERATION_ACTIONS: Readonly<Record<string, string>> = {
  'sign-drives': 'Sign drives',
  'clean-stale-virtual-drives': 'Clean stale virtual drives',
  'rotate-ssdproxy': 'Rotate ssdproxy',
  'block-drives': 'Block drives',
  'unblock-drives': 'Unblock drives',
  'migrate-to-drive-sharing': 'Migrate to drive sharing',
};

function nonEmpty<K extends string>(key: K, value: string | undefined): Partial<Record<K, string>> {
  return value ? ({ [key]: value } as Partial<Record<K, string>>) : {};
}

/**
 * The object's lifecycle workflow, or undefined when the operator leaves the object alone: other
 * container modes (among them the per-node ssdproxy containers the operator creates and deletes
 * without a lifecycle of their own) and other operation actions. Never a label: anyone who may
 * write the object may set one, and a drive container left alone would never be torn down.
 */
export function lifecycleWorkflowOf(obj: WatchedObject): LifecycleWorkflow | undefined {
  const ref = `${obj.namespace}/${obj.name}`;
  switch (obj.kind) {
    case 'WekaContainer':
      if (obj.spec.mode !== 'drive') return undefined;
      return {
        type: LIFECYCLE_WORKFLOW_TYPES.WekaContainer,
        id: containerWorkflowId(obj.uid),
        summary: `Drive container ${ref} on node ${obj.spec.nodeName ?? '(not yet placed)'}`,
        searchAttributes: {
          WekaContainer: ref,
          ...nonEmpty('WekaNode', obj.spec.nodeName),
          ...nonEmpty('WekaCluster', obj.spec.cluster ? `${obj.namespace}/${obj.spec.cluster}` : undefined),
        },
      };
    case 'WekaManualOperation': {
      const action = obj.spec.action ?? '';
      if (!Object.hasOwn(OPERATION_ACTIONS, action)) return undefined;
      return {
        type: LIFECYCLE_WORKFLOW_TYPES.WekaManualOperation,
        id: operationWorkflowId(obj.uid),
        summary: `${OPERATION_ACTIONS[action]}: operation ${ref}`,
        searchAttributes: { WekaOperation: ref },
      };
    }
    case 'WekaCluster':
      return {
        type: LIFECYCLE_WORKFLOW_TYPES.WekaCluster,
        id: clusterWorkflowId(obj.uid),
        summary: `Weka cluster ${ref}`,
        searchAttributes: { WekaCluster: ref },
      };
  }
}

/** The id of the lifecycle workflow of an object of `kind` with `uid`, for one the watcher no longer has. */
export function lifecycleWorkflowIdOf(kind: WatchedKind, uid: string): string {
  switch (kind) {
    case 'WekaContainer':
      return containerWorkflowId(uid);
    case 'WekaManualOperation':
      return operationWorkflowId(uid);
    case 'WekaCluster':
      return clusterWorkflowId(uid);
  }
}

/**
 * What a watcher that never saw the uid assumes: the workflow has read the generation recorded
 * in status.observedGeneration (or generation 1 when the spec never changed); anything newer is
 * signalled. A duplicate signal is harmless: the workflow re-reads the spec.
 */
export function firstSighting(obj: WatchedObject): SeenState {
  const observed = obj.status.observedGeneration ?? (obj.generation <= 1 ? obj.generation : 0);
  return { started: false, signalledGeneration: observed, deleteSignalled: false, workflowIdWritten: false };
}

/**
 * At every (re-)list: forget the signals and writes, keep which generation was signalled and that
 * the workflow was started (one start call per object at every re-list would cost as many
 * Temporal calls as there are objects, every time; the ended-workflow sweep finds the few that
 * need one).
 */
export function forgetDone(seen: SeenState): SeenState {
  return { ...seen, deleteSignalled: false, workflowIdWritten: false };
}

function isFinished(obj: WatchedObject): boolean {
  return (
    obj.kind === 'WekaManualOperation' &&
    obj.status.phase !== undefined &&
    ENDED_OPERATION_PHASES.includes(obj.status.phase)
  );
}

/**
 * The actions for one sighting of `obj`, in the order they must run (a failed action stops the
 * rest; the object is looked at again later). The finalizer comes first so that no workflow ever
 * holds resources for an object that could vanish without a teardown. The watcher never removes
 * the finalizer: the workflow does, as the last step of its teardown.
 */
export function decideWatchActions(
  obj: WatchedObject,
  seenBefore: SeenState | undefined,
  enabled: ReadonlySet<WatchedKind>,
): WatchAction[] {
  if (!enabled.has(obj.kind)) return [];
  const workflow = lifecycleWorkflowOf(obj);
  if (!workflow) return [];
  const seen = seenBefore ?? firstSighting(obj);
  const ours = obj.finalizers.includes(FINALIZER);

  if (obj.deleting) {
    // Without our finalizer the object was never ours, or its teardown has finished.
    if (!ours || seen.deleteSignalled) return [];
    return [{ type: 'signalDelete' }];
  }

  const finished = isFinished(obj);
  if (finished && !ours) return [];
  const actions: WatchAction[] = [];
  if (!ours) actions.push({ type: 'addFinalizer' });
  if (finished) return actions;
  if (!seen.started) actions.push({ type: 'startWorkflow' });
  if (obj.generation > seen.signalledGeneration)
    actions.push({ type: 'signalSpecChanged', generation: obj.generation });
  if (obj.status.workflowID !== workflow.id && !seen.workflowIdWritten)
    actions.push({ type: 'writeWorkflowId', workflowId: workflow.id });
  return actions;
}

/** What the watcher remembers after `action` succeeded. */
export function recordDone(seen: SeenState, action: WatchAction): SeenState {
  switch (action.type) {
    case 'addFinalizer':
      return seen;
    case 'startWorkflow':
      return { ...seen, started: true };
    case 'signalSpecChanged':
      return { ...seen, started: true, signalledGeneration: Math.max(seen.signalledGeneration, action.generation) };
    case 'signalDelete':
      return { ...seen, deleteSignalled: true };
    case 'writeWorkflowId':
      return { ...seen, workflowIdWritten: true };
  }
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function optionalString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Reads the essentials out of an object as the apiserver sends it; undefined without a uid. */
export function watchedObjectOf(kind: WatchedKind, raw: unknown): WatchedObject | undefined {
  const obj = record(raw);
  const metadata = record(obj.metadata);
  const spec = record(obj.spec);
  const status = record(obj.status);
  const uid = optionalString(metadata.uid);
  const name = optionalString(metadata.name);
  if (!uid || !name) return undefined;
  const finalizers = Array.isArray(metadata.finalizers)
    ? metadata.finalizers.filter((f): f is string => typeof f === 'string')
    : [];
  const labels = Object.fromEntries(
    Object.entries(record(metadata.labels)).filter((e): e is [string, string] => typeof e[1] === 'string'),
  );
  const pick = <K extends string>(from: Record<string, unknown>, keys: readonly K[]): Partial<Record<K, string>> =>
    Object.fromEntries(keys.flatMap((k) => (typeof from[k] === 'string' ? [[k, from[k]]] : []))) as Partial<
      Record<K, string>
    >;
  const conditions = (Array.isArray(status.conditions) ? status.conditions : []).map(record);
  // A detailed condition that says what it waits for; not the standard ones, which every status carries.
  const derivedReady = readyIsDerived(conditions as unknown as Condition[]);
  const falseCondition = conditions.find(
    (c) =>
      c.status === 'False' &&
      typeof c.type === 'string' &&
      !STANDARD_CONDITION_TYPES.has(c.type) &&
      !(c.type === 'Ready' && derivedReady),
  )?.type as string | undefined;
  return {
    kind,
    namespace: optionalString(metadata.namespace) ?? 'default',
    name,
    uid,
    generation: typeof metadata.generation === 'number' ? metadata.generation : 1,
    deleting: metadata.deletionTimestamp !== undefined && metadata.deletionTimestamp !== null,
    finalizers,
    labels,
    spec: pick(spec, ['mode', 'action', 'nodeName', 'cluster'] as const),
    status: {
      ...pick(status, ['workflowID', 'phase'] as const),
      ...(typeof status.observedGeneration === 'number' ? { observedGeneration: status.observedGeneration } : {}),
      ...(falseCondition !== undefined ? { falseCondition } : {}),
    },
  };
}
