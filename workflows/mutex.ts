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
import type { MutexActivities, MutexOutcome, SignDrivesActivities } from '../activities/types.js';
import { complete, emptyMutexState, receive, takeNext, type MutexRequest, type MutexResponse, type MutexState } from '../src/lifecycle/mutex-queue.js';
import { capacityReleasedSignal, mutexRequestSignal, mutexResponseSignal, mutexStateQuery } from './definitions.js';
import { HEARTBEAT_TIMEOUT } from './activities.js';
import { NON_RETRYABLE_ERRORS } from './retry.js';
import { WekaNode } from './search-attributes.js';

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
  retry: { initialInterval: '200 milliseconds', maximumInterval: '10 seconds', nonRetryableErrorTypes: NON_RETRYABLE_ERRORS },
});

const executors: Record<string, (payload: never) => Promise<MutexOutcome>> = {
  allocate: acts.allocateForContainer,
  release: acts.releaseAllocation,
  'ensure-proxy': acts.ensureProxy,
  'remove-proxy-if-unused': acts.removeProxyIfUnused,
  'allocate-cluster-ports': acts.allocateClusterPorts,
  'release-cluster-ports': acts.releaseClusterPorts,
  // Publishing signed drives adds capacity, so it is serialized with the node's allocations and
  // its completion wakes the containers that were refused for lack of it.
  'publish-drives': async (payload: Parameters<typeof acts.publishNodeDrives>[0]) => ({ ok: true, result: await acts.publishNodeDrives(payload) }),
};

/** An idle mutex ends after this long; the next request starts it again. */
const IDLE_TIMEOUT = '1 hour';
/** Continue as new well before the history gets heavy to replay. */
const HISTORY_LIMIT = 2_000;

async function execute(request: MutexRequest): Promise<MutexResponse> {
  const base = { requestId: request.requestId, kind: request.kind };
  const run = executors[request.kind];
  if (!run) return { ...base, ok: false, error: { type: 'UnknownRequestKind', message: `unknown mutex request kind "${request.kind}"` } };
  try {
    const outcome = await run(request.payload as never);
    return outcome.ok ? { ...base, ok: true, result: outcome.result } : { ...base, ok: false, error: outcome.error, waitForCapacity: outcome.waitForCapacity === true };
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : err;
    const type = cause instanceof ApplicationFailure ? (cause.type ?? 'Error') : 'Error';
    return { ...base, ok: false, error: { type, message: cause instanceof Error ? cause.message : String(cause) } };
  }
}

/** Signals a requester; one that no longer exists is skipped, never a stuck mutex. */
async function tell(workflowId: string, send: (h: ReturnType<typeof getExternalWorkflowHandle>) => Promise<void>): Promise<void> {
  try {
    await send(getExternalWorkflowHandle(workflowId));
  } catch {
    // The requester finished or was never there: nothing waits for this answer.
  }
}

export async function mutexWorkflow(input: MutexInput): Promise<void> {
  let state = input.state ?? emptyMutexState();
  let holder: MutexRequest | null = null;
  const reanswers: { replyTo: string; response: MutexResponse }[] = [];
  /** Answers sent but not yet acknowledged by the server. */
  let unacknowledged = 0;

  setHandler(mutexRequestSignal, (request) => {
    const arrival = receive(state, request, holder?.requestId);
    state = arrival.state;
    if (arrival.action === 'reanswer') reanswers.push({ replyTo: arrival.replyTo, response: arrival.response });
  });
  setHandler(mutexStateQuery, () => ({ key: input.key, holder, queue: state.queue, waiters: state.waiters, executed: state.executed }));
  if (input.node) upsertSearchAttributes([{ key: WekaNode, value: input.node }]);

  const limit = input.historyLimit ?? HISTORY_LIMIT;
  const mustContinue = (): boolean => workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > limit;
  for (;;) {
    setCurrentDetails(`idle; ${state.waiters.length} waiting for capacity`);
    const busy = await condition(() => state.queue.length > 0 || reanswers.length > 0 || mustContinue(), IDLE_TIMEOUT);
    if (!busy && state.waiters.length === 0) {
      await condition(() => unacknowledged === 0);
      await condition(allHandlersFinished);
      if (state.queue.length === 0 && reanswers.length === 0) return;
    }
    for (let r = reanswers.shift(); r; r = reanswers.shift()) {
      const { replyTo, response } = r;
      await tell(replyTo, (h) => h.signal(mutexResponseSignal, response));
    }
    const taken = takeNext(state);
    state = taken.state;
    const next = taken.next;
    if (next) {
      holder = next;
      setCurrentDetails(`running ${next.kind} for ${next.replyTo}; ${state.queue.length} queued`);
      const response = await execute(next);
      const done = complete(state, next, response);
      state = done.state;
      holder = null;
      if (patched('mutex-answers-without-waiting')) {
        // The answers go out in the same workflow task that starts the next request's activity:
        // waiting for the signals' round trip first would add a workflow task to every hand-over.
        // tell() never throws; the answers are acknowledged before the mutex ends or continues.
        const sent = [
          tell(next.replyTo, (h) => h.signal(mutexResponseSignal, response)),
          ...done.notify.map((waiter) => tell(waiter, (h) => h.signal(capacityReleasedSignal, { mutexId: input.key }))),
        ];
        for (const answer of sent) {
          unacknowledged++;
          void answer.finally(() => unacknowledged--);
        }
      } else {
        await tell(next.replyTo, (h) => h.signal(mutexResponseSignal, response));
        for (const waiter of done.notify) await tell(waiter, (h) => h.signal(capacityReleasedSignal, { mutexId: input.key }));
      }
    }
    if (mustContinue()) {
      await condition(() => unacknowledged === 0);
      await condition(allHandlersFinished);
      await continueAsNew<typeof mutexWorkflow>({ ...input, state });
    }
  }
}
