// The requester's side of the mutex protocol: deliver a request by signal-with-start, so the
// mutex workflow is started if it is not running; and the mutex's side of the answer: deliver a
// decision's answers and capacity notices to the requesters.
import { WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import { stampQueuedAt } from '../src/lifecycle/mutex-queue.js';
import { mutexTaskQueue } from '../src/lifecycle/names.js';
import { capacityReleasedSignal, mutexRequestSignal, mutexResponseSignal } from '../workflows/definitions.js';
import type { mutexWorkflow } from '../workflows/mutex.js';
import type { ActivityDeps } from './deps.js';
import type { RequesterActivities } from './types.js';

/** Signals in flight at once while answering one decision (a batch has at most a few dozen). */
const ANSWER_CONCURRENCY = 16;

export function createRequesterActivities(deps: ActivityDeps): RequesterActivities {
  /** Signals a requester; one that finished or never existed has nobody waiting: skipped. */
  const deliver = async (workflowId: string, send: (h: WorkflowHandle) => Promise<void>): Promise<boolean> => {
    try {
      await send(deps.temporal.workflow.getHandle(workflowId));
      return true;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return false;
      throw err;
    }
  };
  return {
    async sendMutexRequest({ mutexId, node, request: asked }): Promise<void> {
      // The send time rides along so the executing activity can measure the queue wait (metrics).
      const request = { ...asked, payload: stampQueuedAt(asked.payload, Date.now()) };
      await deps.temporal.workflow.signalWithStart<typeof mutexWorkflow, [typeof request]>('mutexWorkflow', {
        workflowId: mutexId,
        taskQueue: mutexTaskQueue(deps.taskQueue),
        args: [{ key: mutexId, ...(node === undefined ? {} : { node }) }],
        signal: mutexRequestSignal,
        signalArgs: [request],
        ...(node === undefined ? {} : { staticSummary: `Allocation mutex of node ${node}` }),
      });
    },

    async answerMutexRequests({ mutexId, answers, notify }) {
      // Answers first, in the order they were decided; a retry sends them again, which the
      // requester takes as the same answer (it keys answers by request id).
      const sends = [
        ...answers.map(({ replyTo, response }) => () => deliver(replyTo, (h) => h.signal(mutexResponseSignal, response))),
        ...notify.map((waiter) => () => deliver(waiter, (h) => h.signal(capacityReleasedSignal, { mutexId }))),
      ];
      let delivered = 0;
      for (let i = 0; i < sends.length; i += ANSWER_CONCURRENCY) {
        const results = await Promise.all(sends.slice(i, i + ANSWER_CONCURRENCY).map((send) => send()));
        delivered += results.filter(Boolean).length;
      }
      return { delivered, skipped: sends.length - delivered };
    },
  };
}
