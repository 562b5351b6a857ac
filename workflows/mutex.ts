// The mutex workflow: one per node (`weka-node/<node>`), and one global for cluster port ranges.
// Every decision that reads or changes what its resource has to give runs here, one at a time,
// in arrival order. The rules (dedup, waiters) are pure functions in src/lifecycle/mutex-queue.
import {
  allHandlersFinished,
  ActivityFailure,
  ApplicationFailure,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  patched,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { MutexActivities, RequesterActivities, SignDrivesActivities } from '../activities/types.js';
import {
  complete,
  emptyMutexState,
  receive,
  takeBatch,
  takeNext,
  type MutexState,
} from '../src/lifecycle/mutex-queue.js';
import { HEARTBEAT_TIMEOUT } from './activities.js';
import { NON_RETRYABLE_ERRORS } from './retry.js';
import {
  type ContainerOnNode,
  type MutexOutcome,
  BATCH_ACTIVITY,
  BATCHED_KINDS,
  MUTEX_REQUEST_ACTIVITIES,
  type MutexAnswer,
  type MutexRequest,
  type MutexRequestKind,
  type MutexResponse,
  capacityReleasedSignal,
  mutexRequestSignal,
  mutexResponseSignal,
  mutexStateQuery,
  WekaNode,
} from '../src/protocol.js';

export interface MutexInput {
  key: string;
  /** The node this mutex serializes, if it is a node's. */
  node?: string;
  state?: MutexState;
  /** Continue as new past this many history events (default HISTORY_LIMIT). */
  historyLimit?: number;
}

const acts = proxyActivities<MutexActivities & Pick<SignDrivesActivities, 'publishNodeDrives'>>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: HEARTBEAT_TIMEOUT,
  // A decision cannot be made without the apiserver: keep retrying transient failures.
  retry: {
    initialInterval: '200 milliseconds',
    maximumInterval: '10 seconds',
    nonRetryableErrorTypes: NON_RETRYABLE_ERRORS,
  },
});

/**
 * Delivering answers is retried for a minute, never for ever: a mutex must not wait behind a
 * signal it cannot deliver. A requester that misses its answer sends its request again after a
 * minute and is answered from the record; a waiter that misses a wake-up asks again on its own.
 */
const deliveries = proxyActivities<Pick<RequesterActivities, 'answerMutexRequests'>>({
  startToCloseTimeout: '30 seconds',
  scheduleToCloseTimeout: '1 minute',
  heartbeatTimeout: HEARTBEAT_TIMEOUT,
  retry: { initialInterval: '200 milliseconds', maximumInterval: '5 seconds' },
});

/** Each kind's activity, by name (one table, also read by the metrics). */
const activity = MUTEX_REQUEST_ACTIVITIES;
const executors: Record<MutexRequestKind, (payload: never) => Promise<MutexOutcome>> = {
  allocate: acts[activity.allocate],
  release: acts[activity.release],
  'ensure-proxy': acts[activity['ensure-proxy']],
  'remove-proxy-if-unused': acts[activity['remove-proxy-if-unused']],
  'allocate-cluster-ports': acts[activity['allocate-cluster-ports']],
  'release-cluster-ports': acts[activity['release-cluster-ports']],
  // Publishing signed drives adds capacity, so it is serialized with the node's allocations and
  // its completion wakes the containers that were refused for lack of it.
  'publish-drives': async (payload: Parameters<typeof acts.publishNodeDrives>[0]) => ({
    ok: true,
    result: await acts[activity['publish-drives']](payload),
  }),
};

/** An idle mutex ends after this long; the next request starts it again. */
const IDLE_TIMEOUT = '1 hour';
/** Continue as new well before the history gets heavy to replay. */
const HISTORY_LIMIT = 2_000;

/** At most this many allocations are decided in one activity. */
const MAX_BATCH = 50;

function answer(request: MutexRequest, outcome: MutexOutcome): MutexResponse {
  const base = { requestId: request.requestId, kind: request.kind };
  return outcome.ok
    ? { ...base, ok: true, result: outcome.result }
    : { ...base, ok: false, error: outcome.error, waitForCapacity: outcome.waitForCapacity === true };
}

/** An activity that failed for good (its retries exhausted or not retryable) answers as a refusal. */
function failed(err: unknown): MutexOutcome {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  const type = cause instanceof ApplicationFailure ? (cause.type ?? 'Error') : 'Error';
  return { ok: false, error: { type, message: cause instanceof Error ? cause.message : String(cause) } };
}

async function execute(request: MutexRequest): Promise<MutexResponse> {
  // Own keys only: a kind such as "toString" is unknown, not an inherited function.
  const executor = Object.hasOwn(executors, request.kind) ? executors[request.kind as MutexRequestKind] : undefined;
  if (!executor)
    return answer(request, {
      ok: false,
      error: { type: 'UnknownRequestKind', message: `unknown mutex request kind "${request.kind}"` },
    });
  try {
    return answer(request, await executor(request.payload as never));
  } catch (err) {
    return answer(request, failed(err));
  }
}

/** Allocations queued together, decided in one activity (one read of the node for all of them). */
async function executeAllocations(node: string | undefined, batch: readonly MutexRequest[]): Promise<MutexResponse[]> {
  const containers = batch.map((r) => r.payload as ContainerOnNode);
  try {
    const outcomes = await acts[BATCH_ACTIVITY]({ node: node ?? containers[0]!.node, containers });
    return batch.map((r, i) =>
      answer(
        r,
        outcomes[i] ?? {
          ok: false,
          error: { type: 'Error', message: 'the batch allocation returned no answer for this request' },
        },
      ),
    );
  } catch (err) {
    const outcome = failed(err);
    return batch.map((r) => answer(r, outcome));
  }
}

/** Signals a requester; one that no longer exists is skipped, never a stuck mutex. */
async function tell(
  workflowId: string,
  send: (h: ReturnType<typeof getExternalWorkflowHandle>) => Promise<void>,
): Promise<void> {
  try {
    await send(getExternalWorkflowHandle(workflowId));
  } catch {
    // The requester finished or was never there: nothing waits for this answer.
  }
}

export async function mutexWorkflow(input: MutexInput): Promise<void> {
  let state = input.state ?? emptyMutexState();
  /** The requests being executed: one, or a batch of allocations. */
  let running: MutexRequest[] = [];
  const reanswers: MutexAnswer[] = [];
  /** Answer deliveries not finished yet: signals the server has not acknowledged, or delivery activities still running. */
  let unacknowledged = 0;

  /**
   * The answers and the wake-ups go out in the same workflow task that starts the next decision:
   * waiting for their round trip first would add a workflow task to every hand-over. They are
   * finished (delivered, or given up on) before the mutex ends or continues.
   *
   * Since 'mutex-answers-in-one-activity', one activity delivers a decision's answers and wake-ups
   * together: a signal per requester from the workflow is two events in the mutex's history and
   * its completion a workflow task of the mutex, so a batch of ten cost twenty events and several
   * tasks; the activity costs three events and one task.
   */
  const answersInOneActivity = patched('mutex-answers-in-one-activity');
  const track = (sent: Promise<unknown>): void => {
    unacknowledged++;
    void sent.finally(() => unacknowledged--);
  };
  const sendAnswers = (answers: readonly MutexAnswer[], notify: readonly string[]): void => {
    if (answersInOneActivity) {
      if (answers.length === 0 && notify.length === 0) return;
      track(
        deliveries
          .answerMutexRequests({ mutexId: input.key, answers: [...answers], notify: [...new Set(notify)] })
          .catch(() => undefined),
      );
      return;
    }
    for (const { replyTo, response } of answers) track(tell(replyTo, (h) => h.signal(mutexResponseSignal, response)));
    for (const waiter of notify) track(tell(waiter, (h) => h.signal(capacityReleasedSignal, { mutexId: input.key })));
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
    holder: running[0] ?? null,
    running,
    queue: state.queue,
    waiters: state.waiters,
    executed: state.executed,
  }));
  if (input.node) upsertSearchAttributes([{ key: WekaNode, value: input.node }]);

  const limit = input.historyLimit ?? HISTORY_LIMIT;
  const mustContinue = (): boolean => workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > limit;
  for (;;) {
    setCurrentDetails(`idle; ${state.waiters.length} waiting for capacity`);
    const hasWork = (): boolean => state.queue.length > 0 || reanswers.length > 0 || mustContinue();
    // Waiting with a timeout starts a timer and cancels it in the same activation when there is
    // already work: nothing reaches the history, but it is work for the workflow thread that every
    // node's mutex shares, so it is skipped then.
    const busy = hasWork() || (await condition(hasWork, IDLE_TIMEOUT));
    if (!busy && state.waiters.length === 0) {
      await condition(() => unacknowledged === 0);
      await condition(allHandlersFinished);
      if (state.queue.length === 0 && reanswers.length === 0) return;
    }
    if (answersInOneActivity) {
      sendAnswers(reanswers.splice(0), []);
    } else {
      for (let r = reanswers.shift(); r; r = reanswers.shift()) {
        const { replyTo, response } = r;
        await tell(replyTo, (h) => h.signal(mutexResponseSignal, response));
      }
    }
    const head = state.queue[0];
    if (head && BATCHED_KINDS.has(head.kind) && patched('mutex-allocates-in-batches')) {
      const taken = takeBatch(state, MAX_BATCH);
      state = taken.state;
      running = taken.batch;
      setCurrentDetails(`allocating for ${running.length} container(s); ${state.queue.length} queued`);
      const responses = await executeAllocations(input.node, running);
      const answers: MutexAnswer[] = [];
      const notify: string[] = [];
      running.forEach((request, i) => {
        const done = complete(state, request, responses[i]!);
        state = done.state;
        answers.push({ replyTo: request.replyTo, response: responses[i]! });
        notify.push(...done.notify);
      });
      sendAnswers(answers, notify);
      running = [];
    } else {
      const taken = takeNext(state);
      state = taken.state;
      const next = taken.next;
      if (next) {
        running = [next];
        setCurrentDetails(`running ${next.kind} for ${next.replyTo}; ${state.queue.length} queued`);
        const response = await execute(next);
        const done = complete(state, next, response);
        state = done.state;
        running = [];
        if (answersInOneActivity || patched('mutex-answers-without-waiting')) {
          sendAnswers([{ replyTo: next.replyTo, response }], done.notify);
        } else {
          await tell(next.replyTo, (h) => h.signal(mutexResponseSignal, response));
          for (const waiter of done.notify)
            await tell(waiter, (h) => h.signal(capacityReleasedSignal, { mutexId: input.key }));
        }
      }
    }
    if (mustContinue()) {
      await condition(() => unacknowledged === 0);
      await condition(allHandlersFinished);
      await continueAsNew<typeof mutexWorkflow>({ ...input, state });
    }
  }
}
