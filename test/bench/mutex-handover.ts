// Hand-over latency of the node mutexes, read from their workflow histories (no product change,
// nothing but what Temporal recorded): for two consecutive decisions on one node where a request
// was already queued when the first finished, the time from the first decision's
// ActivityTaskCompleted to the second one's ActivityTaskStarted. A decision executes one request,
// or, for allocateForContainers, every allocation queued together. That span is everything the
// mutex adds between two decisions: the workflow task that records the completion, the answer
// signal to the requester, the capacity notifications, scheduling the next activity, and the
// worker picking it up.
import { defaultPayloadConverter, type Client } from '@temporalio/client';
import { objectKey } from '../../src/node/node-allocations.js';
import { sleep } from '../support/async.js';
import { ALLOCATION_ACTIVITIES, BATCH_ACTIVITY, mutexTaskQueue } from '../../src/protocol.js';

export interface HandOver {
  node: string;
  from: string;
  to: string;
  ms: number;
  /** The same span ending at the next activity's scheduling instead of its start. */
  toScheduledMs: number;
}

interface Timestamp {
  seconds?: number | { toNumber(): number } | null;
  nanos?: number | null;
}
interface Payloads {
  payloads?: unknown[] | null;
}
/** The fields of a history event this module reads (protobufjs objects; unset attributes are null). */
export interface HistoryEvent {
  eventId?: number | { toNumber(): number } | null;
  eventTime?: Timestamp | null;
  workflowExecutionStartedEventAttributes?: { input?: Payloads | null } | null;
  workflowExecutionSignaledEventAttributes?: { signalName?: string | null; input?: Payloads | null } | null;
  activityTaskScheduledEventAttributes?: {
    activityType?: { name?: string | null } | null;
    input?: Payloads | null;
  } | null;
  activityTaskStartedEventAttributes?: { scheduledEventId?: number | { toNumber(): number } | null } | null;
  activityTaskCompletedEventAttributes?: { scheduledEventId?: number | { toNumber(): number } | null } | null;
  activityTaskFailedEventAttributes?: { scheduledEventId?: number | { toNumber(): number } | null } | null;
  activityTaskTimedOutEventAttributes?: { scheduledEventId?: number | { toNumber(): number } | null } | null;
  workflowTaskScheduledEventAttributes?: object | null;
  workflowTaskStartedEventAttributes?: object | null;
  workflowTaskCompletedEventAttributes?: object | null;
  markerRecordedEventAttributes?: object | null;
}

const num = (v: number | { toNumber(): number } | null | undefined): number =>
  v == null ? 0 : typeof v === 'number' ? v : v.toNumber();
export const ms = (t: Timestamp | null | undefined): number => num(t?.seconds) * 1000 + (t?.nanos ?? 0) / 1e6;
const decode = <T>(p: Payloads | null | undefined, i = 0): T | undefined => {
  const payload = p?.payloads?.[i];
  return payload === undefined ? undefined : (defaultPayloadConverter.fromPayload(payload as never) as T);
};

/** The fields of a mutex request this module reads. */
interface MutexRequestSeen {
  requestId: string;
  kind?: string;
  payload?: { namespace: string; name: string };
}

/** The activity that delivers a decision's answers (not itself a decision). */
const ANSWERS = 'answerMutexRequests';

export interface Decision {
  activity: string;
  /** How many requests it executed: the containers of an allocateForContainers, otherwise one. */
  requests: number;
  scheduledAt: number;
  startedAt?: number;
  endedAt?: number;
}

/** One run of one node's mutex workflow: its decisions in order, and when each request arrived. */
export interface MutexRun {
  node: string;
  decisions: Decision[];
  /** Arrival time of the k-th distinct request (-Infinity: carried over from the previous run). */
  arrivals: number[];
  /** When each container's first allocate request arrived, by `namespace/name`. */
  allocationArrivals: Map<string, number>;
  /** The run's workflow tasks: when each was scheduled, started and completed (timeline only). */
  workflowTasks: { scheduledAt: number; startedAt?: number; completedAt?: number }[];
}

export function mutexRunOf(node: string, events: readonly HistoryEvent[]): MutexRun {
  // Requests in arrival order, each once (a resend under the same id is dropped by the mutex);
  // a run continued as new starts with the queue it carried.
  const arrivals: number[] = [];
  const seen = new Set<string>();
  const decisions: Decision[] = [];
  const bySchedule = new Map<number, Decision>();
  const workflowTasks: MutexRun['workflowTasks'] = [];
  const allocationArrivals = new Map<string, number>();
  const arriveForAllocation = (r: MutexRequestSeen, at: number): void => {
    if (r.kind !== 'allocate' || r.payload === undefined) return;
    const container = objectKey(r.payload);
    if (!allocationArrivals.has(container)) allocationArrivals.set(container, at);
  };
  const arrive = (requestId: string, at: number): void => {
    if (seen.has(requestId)) return;
    seen.add(requestId);
    arrivals.push(at);
  };
  for (const e of events) {
    const at = ms(e.eventTime);
    if (e.workflowTaskScheduledEventAttributes) workflowTasks.push({ scheduledAt: at });
    const task = workflowTasks.at(-1);
    if (task && e.workflowTaskStartedEventAttributes) task.startedAt = at;
    if (task && e.workflowTaskCompletedEventAttributes) task.completedAt = at;
    if (e.workflowExecutionStartedEventAttributes) {
      const input = decode<{ state?: { queue?: MutexRequestSeen[] } }>(e.workflowExecutionStartedEventAttributes.input);
      for (const r of input?.state?.queue ?? []) {
        arrive(r.requestId, Number.NEGATIVE_INFINITY);
        arriveForAllocation(r, Number.NEGATIVE_INFINITY);
      }
    }
    const signal = e.workflowExecutionSignaledEventAttributes;
    if (signal?.signalName === 'mutexRequest') {
      const request = decode<MutexRequestSeen>(signal.input);
      if (request) {
        arrive(request.requestId, at);
        arriveForAllocation(request, at);
      }
    }
    if (e.activityTaskScheduledEventAttributes) {
      const activity = e.activityTaskScheduledEventAttributes.activityType?.name ?? '?';
      // Delivering answers runs beside the decisions, not between them.
      if (activity === ANSWERS) continue;
      const batch =
        activity === BATCH_ACTIVITY
          ? decode<{ containers?: unknown[] }>(e.activityTaskScheduledEventAttributes.input)?.containers?.length
          : undefined;
      const d: Decision = { activity, requests: batch ?? 1, scheduledAt: at };
      decisions.push(d);
      bySchedule.set(num(e.eventId), d);
    }
    const started = e.activityTaskStartedEventAttributes;
    if (started) {
      const d = bySchedule.get(num(started.scheduledEventId));
      if (d) d.startedAt = at;
    }
    const ended =
      e.activityTaskCompletedEventAttributes ??
      e.activityTaskFailedEventAttributes ??
      e.activityTaskTimedOutEventAttributes;
    if (ended) {
      const d = bySchedule.get(num(ended.scheduledEventId));
      if (d) d.endedAt = at;
    }
  }
  return { node, decisions, arrivals, allocationArrivals, workflowTasks };
}

/** Hand-overs of one run: consecutive decisions where a request was already queued when the first ended. */
export function handOversOf({ node, decisions, arrivals }: MutexRun): HandOver[] {
  const result: HandOver[] = [];
  let executed = 0;
  for (let k = 0; k + 1 < decisions.length; k++) {
    const [prev, next] = [decisions[k]!, decisions[k + 1]!];
    executed += prev.requests;
    if (prev.endedAt === undefined || next.startedAt === undefined) continue;
    // Every request is executed once: one was still waiting when decision k ended if more had
    // arrived by then than decisions 0..k executed.
    const arrivedBy = arrivals.filter((a) => a <= prev.endedAt!).length;
    if (arrivedBy <= executed) continue;
    result.push({
      node,
      from: prev.activity,
      to: next.activity,
      ms: next.startedAt - prev.endedAt,
      toScheduledMs: next.scheduledAt - prev.endedAt,
    });
  }
  return result;
}

/** The allocation activities: one container, or every allocation queued on the node together. */
export const isAllocation = (activity: string): boolean => ALLOCATION_ACTIVITIES.has(activity);

/** Every run of every `weka-node/*` mutex workflow on the task queue. */
export async function readMutexRuns(client: Client, taskQueue: string): Promise<MutexRun[]> {
  const runs: MutexRun[] = [];
  for await (const wf of client.workflow.list({
    query: `WorkflowType="mutexWorkflow" AND TaskQueue="${mutexTaskQueue(taskQueue)}"`,
  })) {
    if (!wf.workflowId.startsWith('weka-node/')) continue;
    const history = await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
    runs.push(mutexRunOf(wf.workflowId.slice('weka-node/'.length), (history.events ?? []) as HistoryEvent[]));
  }
  return runs;
}

/**
 * The runs once every allocation decision in them has ended: the last status write can be seen
 * before Temporal has recorded its activity's completion, which is the figure the totals use.
 */
export async function readSettledMutexRuns(
  client: Client,
  taskQueue: string,
  deadlineMs = 30_000,
): Promise<MutexRun[]> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const runs = await readMutexRuns(client, taskQueue);
    const open = runs.flatMap((r) => r.decisions).filter((d) => isAllocation(d.activity) && d.endedAt === undefined);
    if (open.length === 0 || Date.now() > deadline) return runs;
    await sleep(200);
  }
}

/** The hand-overs from one allocation decision to the next. */
export const allocationToAllocation = (h: HandOver): boolean => isAllocation(h.from) && isAllocation(h.to);

/** When each container first asked a node's mutex for its allocation, over every run, by `namespace/name`. */
export function allocationAskedAt(runs: readonly MutexRun[]): Map<string, number> {
  const askedAt = new Map<string, number>();
  for (const r of runs)
    for (const [container, at] of r.allocationArrivals)
      askedAt.set(container, Math.min(at, askedAt.get(container) ?? Number.POSITIVE_INFINITY));
  return askedAt;
}
