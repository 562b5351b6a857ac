// The state of a mutex workflow (per node, or the global cluster-ports one) as plain data and
// pure transitions, so the workflow only sequences and the rules are unit-tested on their own.
//
// Requests run one at a time in arrival order. A request id is executed at most once: a request
// that arrives again while queued or running is ignored, and one that was already answered is
// answered again from the record. Requesters refused for lack of capacity become waiters; when a
// request that frees capacity completes, every waiter is told, in the order they were refused.
import {
  BATCHED_KINDS,
  COALESCED_KINDS,
  RELEASING_KINDS,
  type MutexRequest,
  type MutexResponse,
  type MutexState,
} from '../protocol.js';

export type { MutexState };

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
 * an allocation was asked for is the allocation's to take. Requests of a coalesced kind are taken
 * with the first when they ask for the same (their payloads equal but for the send time), and
 * move ahead only of allocations: never of a removal of what they ask for.
 */
export function takeBatch(state: MutexState, max: number): { state: MutexState; batch: MutexRequest[] } {
  const [first, ...others] = state.queue;
  if (!first) return { state, batch: [] };
  const coalesced = COALESCED_KINDS.has(first.kind);
  const batch = [first];
  const rest: MutexRequest[] = [];
  let blocked = !BATCHED_KINDS.has(first.kind) && !coalesced;
  for (const r of others) {
    if (RELEASING_KINDS.has(r.kind)) blocked = true;
    if (coalesced && r.kind !== first.kind && !BATCHED_KINDS.has(r.kind)) blocked = true;
    const joins = r.kind === first.kind && (!coalesced || sameAsk(r.payload, first.payload));
    if (!blocked && joins && batch.length < max) batch.push(r);
    else rest.push(r);
  }
  return { state: { ...state, queue: rest }, batch };
}

/** Whether two payloads ask for the same thing: equal but for their send times. */
function sameAsk(a: unknown, b: unknown): boolean {
  const unstamped = (p: unknown): string =>
    JSON.stringify(
      typeof p === 'object' && p !== null && !Array.isArray(p)
        ? Object.fromEntries(Object.entries(p).filter(([k]) => k !== QUEUED_AT_FIELD))
        : p,
    );
  return unstamped(a) === unstamped(b);
}

/** A release that found nothing to let go of (its result says `released: false`) frees no capacity. */
function releasedNothing(response: MutexResponse): boolean {
  const result = response.result as { released?: unknown } | undefined;
  return typeof result === 'object' && result !== null && result.released === false;
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
  if (response.ok && RELEASING_KINDS.has(request.kind) && !releasedNothing(response)) {
    notify = waiters;
    waiters = [];
  }
  // Refused, or served only in part, for lack of capacity: it waits for a release.
  if (response.waitForCapacity && !waiters.includes(request.replyTo)) {
    waiters = [...waiters, request.replyTo];
  }
  // A requester that got all it asked for is no longer waiting.
  if (response.ok && !response.waitForCapacity) waiters = waiters.filter((w) => w !== request.replyTo);
  return { state: { ...state, answered, waiters, executed: state.executed + 1 }, notify };
}

/**
 * What a mutex carries through continue-as-new, at most `maxBytes` of JSON (UTF-8, as Temporal's
 * payload holds it) when it can be: the oldest answers are dropped first, and the newest that fit
 * are kept, for the requesters that may still ask again (a requester sends its request again only
 * while it waits for the answer, a minute at a time). The queue, the waiters and the count are
 * carried whole, whatever their size: a request dropped from the queue would never be answered.
 * When they alone are over the bound, the state does not fit (`fits: false`) and carries no
 * answers; the mutex then goes on draining its queue in the current run (workflows/mutex/continue-as-new.ts).
 *
 * A dropped answer costs at most one more execution: a request whose record was dropped and that
 * comes again is queued and executed again, which is safe because every kind's activity is
 * idempotent (MUTEX_REQUEST_ACTIVITIES):
 * - allocate: a container that already holds an allocation in its status is answered with it, and
 *   one being deleted or gone is refused (ContainerGone): nothing is allocated twice;
 * - release: removes status.allocations if present, only from the object of the request's uid;
 *   nothing to remove is a success;
 * - ensure-proxy: creates the proxy object and pod if absent and waits until it runs;
 * - remove-proxy-if-unused: looks at the node's containers afresh and removes the proxy only if
 *   none needs it; already removed is a success;
 * - allocate-cluster-ports: a cluster whose status holds ports is answered with them;
 * - release-cluster-ports: removes status.ports if present;
 * - publish-drives: rewrites the node's annotation from what its devices report (the proxy's
 *   device list); the same devices again change nothing.
 */
export function stateToCarry(
  state: MutexState,
  maxBytes: number,
): { state: MutexState; bytes: number; fits: boolean; droppedAnswers: number } {
  // The JSON of the state is the JSON without answers with the kept answers, comma-separated,
  // inside its "[]": sizes add up exactly.
  const bare: MutexState = { ...state, answered: [] };
  const base = utf8Bytes(JSON.stringify(bare));
  if (base > maxBytes) return { state: bare, bytes: base, fits: false, droppedAnswers: state.answered.length };
  let bytes = base;
  let kept = 0;
  for (let i = state.answered.length - 1; i >= 0; i--) {
    const size = utf8Bytes(JSON.stringify(state.answered[i])) + (kept > 0 ? 1 : 0);
    if (bytes + size > maxBytes) break;
    bytes += size;
    kept++;
  }
  const answered = kept === state.answered.length ? state.answered : state.answered.slice(state.answered.length - kept);
  return { state: { ...state, answered }, bytes, fits: true, droppedAnswers: state.answered.length - kept };
}

/** The length of `text` encoded as UTF-8 (pure: no TextEncoder or Buffer in workflow code). */
export function utf8Bytes(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit < 0xdc00 && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      // A surrogate pair is one code point of four bytes; a lone surrogate encodes as U+FFFD (three).
      if (next >= 0xdc00 && next < 0xe000) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
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
