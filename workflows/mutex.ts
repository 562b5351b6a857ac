// The mutex workflow: one per node (`weka-node/<node>`), and one global for cluster port ranges.
// Every decision that reads or changes what its resource has to give runs here, one at a time,
// in arrival order; the allocations queued together are decided together, in one activity. The
// rules (dedup, batches, waiters, the state carried through continue-as-new, bounded in bytes)
// are pure functions in src/node/mutex-queue.
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  log,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import {
  complete,
  emptyMutexState,
  receive,
  stateToCarry,
  takeBatch,
  type MutexState,
} from '../src/node/mutex-queue.js';
import {
  BATCH_ACTIVITY,
  BATCHED_KINDS,
  COALESCED_KINDS,
  MUTEX_REQUEST_ACTIVITIES,
  WekaNode,
  mutexRequestSignal,
  mutexStateQuery,
  type ContainerOnNode,
  type MutexAnswer,
  type MutexInput,
  type MutexOutcome,
  type MutexRequest,
  type MutexRequestKind,
  type MutexResponse,
} from '../src/protocol.js';
import { decisions, delivery } from './activities.js';
import { failureType, messageOf } from './lifecycle.js';

/** An idle mutex ends after this long; the next request starts it again. */
const IDLE_TIMEOUT = '1 hour';
/**
 * Continue as new past this many history events (some 17 per request). A worker whose cache has
 * no room for every node's mutex replays a mutex's whole history at the next request after an
 * eviction, on the workflow thread every workflow shares: a 1,500-event history took about a
 * second, so a rollout over more nodes than the cache holds slowed as the histories grew. 500
 * keeps that replay short; continuing costs one workflow task and the carried state.
 */
const HISTORY_LIMIT = 500;
/**
 * The most bytes of state (JSON) carried through continue-as-new: the oldest answers are dropped
 * to stay under it (stateToCarry). Temporal refuses a payload over 2 MB and warns over 512 KB;
 * 256 KiB keeps well clear of both and still holds about a hundred answers of 8 virtual drives
 * (some 2 KB each), or every one of the last 500 small answers (proxy, release: about 150 bytes).
 */
const CARRIED_STATE_BYTES = 256 * 1024;
/** At most this many allocations are decided in one activity. */
const MAX_BATCH = 50;

function answer(request: MutexRequest, outcome: MutexOutcome): MutexResponse {
  const base = { requestId: request.requestId, kind: request.kind };
  if (!outcome.ok)
    return { ...base, ok: false, error: outcome.error, waitForCapacity: outcome.waitForCapacity === true };
  // Served in part (a growth that does not fit yet) carries why, and whether a release can help.
  const partly = outcome.error ? { error: outcome.error, waitForCapacity: outcome.waitForCapacity === true } : {};
  return { ...base, ok: true, result: outcome.result, ...partly };
}

/** An activity that failed for good (its retries exhausted or not retryable) answers as a refusal. */
function failed(err: unknown): MutexOutcome {
  return { ok: false, error: { type: failureType(err) ?? 'Error', message: messageOf(err) } };
}

/** Runs one request with its kind's activity; publishing drives answers its result as an outcome. */
async function execute(request: MutexRequest): Promise<MutexResponse> {
  // Own keys only: a kind such as "toString" is unknown, not an inherited function.
  if (!Object.hasOwn(MUTEX_REQUEST_ACTIVITIES, request.kind)) {
    const message = `unknown mutex request kind "${request.kind}"`;
    return answer(request, { ok: false, error: { type: 'UnknownRequestKind', message } });
  }
  const kind = request.kind as MutexRequestKind;
  const run = decisions[MUTEX_REQUEST_ACTIVITIES[kind]] as (payload: unknown) => Promise<unknown>;
  try {
    const result = await run(request.payload);
    // Publishing signed drives returns what it published; every other decision returns an outcome.
    return answer(request, kind === 'publish-drives' ? { ok: true, result } : (result as MutexOutcome));
  } catch (err) {
    return answer(request, failed(err));
  }
}

/** Requests that ask for the same (COALESCED_KINDS): executed once, the answer given to each. */
async function executeOnce(batch: readonly MutexRequest[]): Promise<MutexResponse[]> {
  const response = await execute(batch[0]!);
  return batch.map((r) => ({ ...response, requestId: r.requestId }));
}

/** Allocations queued together, decided in one activity (one read of the node for all of them). */
async function executeAllocations(node: string | undefined, batch: readonly MutexRequest[]): Promise<MutexResponse[]> {
  const containers = batch.map((r) => r.payload as ContainerOnNode);
  try {
    const outcomes = await decisions[BATCH_ACTIVITY]({ node: node ?? containers[0]!.node, containers });
    const missing: MutexOutcome = {
      ok: false,
      error: { type: 'Error', message: 'the batch allocation returned no answer for this request' },
    };
    return batch.map((r, i) => answer(r, outcomes[i] ?? missing));
  } catch (err) {
    const outcome = failed(err);
    return batch.map((r) => answer(r, outcome));
  }
}

export async function mutexWorkflow(input: MutexInput): Promise<void> {
  let state: MutexState = input.state ?? emptyMutexState();
  /** The requests being executed: one, or a batch of allocations. */
  let running: MutexRequest[] = [];
  const reanswers: MutexAnswer[] = [];
  /** Delivery activities still running. */
  let deliveries = 0;

  /**
   * One activity delivers a decision's answers and wake-ups, in the same workflow task that
   * starts the next decision: the mutex does not wait for it, so a hand-over costs no extra
   * workflow task. Deliveries finish (or are given up on) before the mutex ends or continues.
   */
  const sendAnswers = (answers: readonly MutexAnswer[], notify: readonly string[]): void => {
    if (answers.length === 0 && notify.length === 0) return;
    deliveries++;
    const sent = delivery.answerMutexRequests({
      mutexId: input.key,
      answers: [...answers],
      notify: [...new Set(notify)],
    });
    void sent.catch(() => undefined).finally(() => deliveries--);
  };

  setHandler(mutexRequestSignal, (request) => {
    const arrival = receive(
      state,
      request,
      running.map((r) => r.requestId),
    );
    state = arrival.state;
    if (arrival.action === 'reanswer') reanswers.push({ replyTo: arrival.replyTo, response: arrival.response });
  });
  setHandler(mutexStateQuery, () => ({
    key: input.key,
    running,
    queue: state.queue,
    waiters: state.waiters,
    executed: state.executed,
  }));
  if (input.node) upsertSearchAttributes([{ key: WekaNode, value: input.node }]);

  const limit = input.historyLimit ?? HISTORY_LIMIT;
  const carriedBytes = input.carriedStateBytes ?? CARRIED_STATE_BYTES;
  /**
   * `state.executed` when the state last did not fit in `carriedBytes` (its queue and waiters
   * alone were over it): the mutex then drains its queue in this run, and tries again only once
   * another request ran. Temporal's own suggestion to continue is never put off.
   */
  let tooBigAt: number | undefined;
  const mustContinue = (): boolean =>
    workflowInfo().continueAsNewSuggested || (workflowInfo().historyLength > limit && tooBigAt !== state.executed);
  const settle = async (): Promise<void> => {
    await condition(() => deliveries === 0);
    await condition(allHandlersFinished);
  };
  for (;;) {
    setCurrentDetails(`idle; ${state.waiters.length} waiting for capacity`);
    const hasWork = (): boolean => state.queue.length > 0 || reanswers.length > 0 || mustContinue();
    // Waiting with a timeout starts a timer and cancels it in the same activation when there is
    // already work: nothing reaches the history, but it is work for the workflow thread that every
    // node's mutex shares, so it is skipped then.
    const busy = hasWork() || (await condition(hasWork, IDLE_TIMEOUT));
    if (!busy && state.waiters.length === 0) {
      await settle();
      if (state.queue.length === 0 && reanswers.length === 0) return;
    }
    sendAnswers(reanswers.splice(0), []);
    const taken = takeBatch(state, MAX_BATCH);
    state = taken.state;
    running = taken.batch;
    if (running.length > 0) {
      const kind = running[0]!.kind;
      setCurrentDetails(`running ${kind} for ${running.length} requester(s); ${state.queue.length} queued`);
      const responses = BATCHED_KINDS.has(kind)
        ? await executeAllocations(input.node, running)
        : COALESCED_KINDS.has(kind)
          ? await executeOnce(running)
          : [await execute(running[0]!)];
      const answers: MutexAnswer[] = [];
      const notify: string[] = [];
      running.forEach((request, i) => {
        const done = complete(state, request, responses[i]!);
        state = done.state;
        answers.push({ replyTo: request.replyTo, response: responses[i]! });
        notify.push(...done.notify);
      });
      running = [];
      sendAnswers(answers, notify);
    }
    if (mustContinue()) {
      await settle();
      // Requests that arrived while it settled are in `state`, and carried.
      const carried = stateToCarry(state, carriedBytes);
      const details = {
        mutex: input.key,
        bytes: carried.bytes,
        bound: carriedBytes,
        droppedAnswers: carried.droppedAnswers,
        queued: state.queue.length,
        waiters: state.waiters.length,
      };
      if (carried.fits || workflowInfo().continueAsNewSuggested) {
        // Past the bound only when Temporal says the history must end: the queue is never dropped.
        if (!carried.fits) log.warn('continuing as new with a queue over the carried-state bound', details);
        await continueAsNew<typeof mutexWorkflow>({ ...input, state: carried.state });
      }
      if (tooBigAt === undefined)
        log.warn('the queue alone is over the carried-state bound: draining it before continuing as new', details);
      tooBigAt = state.executed;
    }
  }
}
