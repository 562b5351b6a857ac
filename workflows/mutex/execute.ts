// Executing the requests at the head of the queue, each kind with its decision activity, and
// answering them.
import { setCurrentDetails } from '@temporalio/workflow';
import { complete, takeBatch } from '../../src/node/mutex-queue.js';
import {
  BATCH_ACTIVITY,
  BATCHED_KINDS,
  COALESCED_KINDS,
  MUTEX_REQUEST_ACTIVITIES,
  type ContainerOnNode,
  type MutexAnswer,
  type MutexOutcome,
  type MutexRequest,
  type MutexRequestKind,
  type MutexResponse,
} from '../../src/protocol.js';
import { decisions } from '../activities.js';
import { failureType, messageOf } from '../lifecycle.js';
import { sendAnswers } from './delivery.js';
import type { MutexRun } from './run.js';

/** At most this many allocations are decided in one activity. */
const MAX_BATCH = 50;

/**
 * Executes the next request, or the allocations queued together, if any; records each answer in
 * the state and sends the answers and wake-ups it gave.
 */
export async function executeNext(run: MutexRun): Promise<void> {
  const taken = takeBatch(run.state, MAX_BATCH);
  run.state = taken.state;
  run.running = taken.batch;
  if (run.running.length === 0) return;
  const running = run.running;
  const kind = running[0]!.kind;
  setCurrentDetails(`running ${kind} for ${running.length} requester(s); ${run.state.queue.length} queued`);
  const responses = BATCHED_KINDS.has(kind)
    ? await executeAllocations(run.input.node, running)
    : COALESCED_KINDS.has(kind)
      ? await executeOnce(running)
      : [await execute(running[0]!)];
  const answers: MutexAnswer[] = [];
  const notify: string[] = [];
  running.forEach((request, i) => {
    const done = complete(run.state, request, responses[i]!);
    run.state = done.state;
    answers.push({ replyTo: request.replyTo, response: responses[i]! });
    notify.push(...done.notify);
  });
  run.running = [];
  sendAnswers(run, answers, notify);
}

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
