// The requester's side of the mutex protocol: deliver a request by signal-with-start, so the
// mutex workflow is started if it is not running; and the mutex's side of the answer: deliver a
// decision's answers and capacity notices to the requesters.
import type { Client, WorkflowHandle } from '@temporalio/client';
import { messageOf } from '../src/errors.js';
import { stampQueuedAt } from '../src/node/mutex-queue.js';
import type { ActivityDeps } from './deps.js';
import { signalIfRunning } from './signal.js';
import {
  mutexTaskQueue,
  capacityReleasedSignal,
  mutexRequestSignal,
  mutexResponseSignal,
  WORKFLOW,
  type MutexAnswer,
  type MutexRequest,
  type MutexWorkflow,
} from '../src/protocol.js';

/** Signals in flight at once while answering one decision (a batch has at most a few dozen). */
const ANSWER_CONCURRENCY = 16;

/**
 * Delivers a request to a mutex by signal-with-start, so the mutex workflow is started if it is not
 * running. The send time rides along so the executing activity can measure the queue wait (metrics).
 */
export async function sendMutexRequest(
  temporal: Client,
  taskQueue: string,
  { mutexId, node, request: asked }: { mutexId: string; node?: string | undefined; request: MutexRequest },
): Promise<void> {
  const request = { ...asked, payload: stampQueuedAt(asked.payload, Date.now()) };
  await temporal.workflow.signalWithStart<MutexWorkflow, [typeof request]>(WORKFLOW.mutex, {
    workflowId: mutexId,
    taskQueue: mutexTaskQueue(taskQueue),
    args: [{ key: mutexId, ...(node === undefined ? {} : { node }) }],
    signal: mutexRequestSignal,
    signalArgs: [request],
    ...(node === undefined ? {} : { staticSummary: `Allocation mutex of node ${node}` }),
  });
}

export function createRequesterActivities(deps: ActivityDeps) {
  /** Signals a requester; one that finished or never existed has nobody waiting: skipped. */
  const deliver = (workflowId: string, send: (h: WorkflowHandle) => Promise<void>): Promise<boolean> =>
    signalIfRunning(deps.temporal, workflowId, send);
  return {
    async sendMutexRequest(input: { mutexId: string; node?: string; request: MutexRequest }): Promise<void> {
      await sendMutexRequest(deps.temporal, deps.taskQueue, input);
    },

    /**
     * A mutex's answers to the requesters of one decision, and its capacity notices to the waiters,
     * sent together; requesters that no longer exist are skipped (counted in `skipped`).
     */
    async answerMutexRequests({
      mutexId,
      answers,
      notify,
    }: {
      mutexId: string;
      answers: MutexAnswer[];
      notify: string[];
    }): Promise<{ delivered: number; skipped: number }> {
      // A requester keys answers by request id, so they go out a chunk at a time in no particular
      // order; a retry sends them all again, which is the same answer again or one more wake-up
      // (the waiter asks again, and is refused or served as usual).
      const sends = [
        ...answers.map(
          ({ replyTo, response }) =>
            () =>
              deliver(replyTo, (h) => h.signal(mutexResponseSignal, response)),
        ),
        ...notify.map((waiter) => () => deliver(waiter, (h) => h.signal(capacityReleasedSignal, { mutexId }))),
      ];
      let delivered = 0;
      let skipped = 0;
      const failures: unknown[] = [];
      for (let i = 0; i < sends.length; i += ANSWER_CONCURRENCY) {
        // One requester that cannot be signalled does not hold back the others.
        for (const result of await Promise.allSettled(sends.slice(i, i + ANSWER_CONCURRENCY).map((send) => send()))) {
          if (result.status === 'rejected') failures.push(result.reason);
          else if (result.value) delivered++;
          else skipped++;
        }
      }
      if (failures.length > 0) {
        throw new Error(
          `${mutexId}: ${failures.length} of ${sends.length} answers and wake-ups not delivered (${delivered} delivered): ${messageOf(failures[0])}`,
        );
      }
      return { delivered, skipped };
    },
  };
}
