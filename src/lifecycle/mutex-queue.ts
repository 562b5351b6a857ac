// The state of a mutex workflow (per node, or the global cluster-ports one) as plain data and
// pure transitions, so the workflow only sequences and the rules are unit-tested on their own.
//
// Requests run one at a time in arrival order. A request id is executed at most once: a request
// that arrives again while queued or running is ignored, and one that was already answered is
// answered again from the record. Requesters refused for lack of capacity become waiters; when a
// request that frees capacity completes, every waiter is told, in the order they were refused.
import { BATCHED_KINDS, RELEASING_KINDS, type MutexRequest, type MutexResponse } from '../protocol.js';

export interface MutexState {
  queue: MutexRequest[];
  /** Request ids already answered, oldest first, bounded to ANSWERED_MEMORY. */
  answered: MutexResponse[];
  /** Requesters (workflow ids) waiting for capacity, in the order they were refused. */
  waiters: string[];
  /** Requests executed since this mutex was first started (across continue-as-new). */
  executed: number;
}

/** Enough to recognise retries of recent requests; older ids are not expected to come back. */
export const ANSWERED_MEMORY = 500;

export function emptyMutexState(): MutexState {
  return { queue: [], answered: [], waiters: [], executed: 0 };
}

export type Arrival =
  | { action: 'queued'; state: MutexState }
  | { action: 'duplicate'; state: MutexState }
  | { action: 'reanswer'; state: MutexState; response: MutexResponse; replyTo: string };

/** A request arrives; `running` are the ids of the requests being executed. */
export function receive(state: MutexState, request: MutexRequest, running: readonly string[]): Arrival {
  const answered = state.answered.find((r) => r.requestId === request.requestId);
  if (answered) return { action: 'reanswer', state, response: answered, replyTo: request.replyTo };
  if (running.includes(request.requestId) || state.queue.some((r) => r.requestId === request.requestId)) {
    return { action: 'duplicate', state };
  }
  return { action: 'queued', state: { ...state, queue: [...state.queue, request] } };
}

/**
 * The next request and, when its kind can be batched, the queued requests of the same kind that
 * may be decided with it (up to `max` in all), in arrival order. A request may move ahead of
 * queued requests of other kinds, but never ahead of one that frees or adds capacity: a release
 * queued before an allocation for the same container must run first, and capacity freed before
 * an allocation was asked for is the allocation's to take.
 */
export function takeBatch(state: MutexState, max: number): { state: MutexState; batch: MutexRequest[] } {
  const [first, ...others] = state.queue;
  if (!first) return { state, batch: [] };
  const batch = [first];
  const rest: MutexRequest[] = [];
  let blocked = !BATCHED_KINDS.has(first.kind);
  for (const r of others) {
    if (RELEASING_KINDS.has(r.kind)) blocked = true;
    if (!blocked && r.kind === first.kind && batch.length < max) batch.push(r);
    else rest.push(r);
  }
  return { state: { ...state, queue: rest }, batch };
}

/**
 * Records the answer to an executed request. Returns the waiters to notify (in order) when the
 * request freed capacity.
 */
export function complete(
  state: MutexState,
  request: MutexRequest,
  response: MutexResponse,
): { state: MutexState; notify: string[] } {
  const answered = [...state.answered, response].slice(-ANSWERED_MEMORY);
  let waiters = state.waiters;
  let notify: string[] = [];
  if (response.ok && RELEASING_KINDS.has(request.kind)) {
    notify = waiters;
    waiters = [];
  }
  if (!response.ok && response.waitForCapacity && !waiters.includes(request.replyTo)) {
    waiters = [...waiters, request.replyTo];
  }
  // A requester that got what it asked for is no longer waiting.
  if (response.ok) waiters = waiters.filter((w) => w !== request.replyTo);
  return { state: { ...state, answered, waiters, executed: state.executed + 1 }, notify };
}

/**
 * The payload field carrying when a request was sent to its mutex (ms since the epoch), so the
 * activity that finally executes it can tell how long it waited in the queue. Stamped by the
 * sending activity, not the workflow: a workflow's clock is its history's, and the wait is a
 * measurement, not a decision.
 */
export const QUEUED_AT_FIELD = 'queuedAtMs';

/** The payload with its send time; payloads that are not plain objects are left as they are. */
export function stampQueuedAt(payload: unknown, nowMs: number): unknown {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return payload;
  return { ...payload, [QUEUED_AT_FIELD]: nowMs };
}

/** How long the request whose payload this is waited, or undefined when it carries no valid stamp. */
export function queuedFor(payload: unknown, nowMs: number): number | undefined {
  if (typeof payload !== 'object' || payload === null) return undefined;
  const at = (payload as Record<string, unknown>)[QUEUED_AT_FIELD];
  if (typeof at !== 'number' || !Number.isFinite(at)) return undefined;
  // Clocks of two operator replicas may disagree a little: never report a negative wait.
  return Math.max(0, nowMs - at);
}
