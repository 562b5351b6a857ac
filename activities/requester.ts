// The requester's side of the mutex protocol: deliver a request by signal-with-start, so the
// mutex workflow is started if it is not running.
import { stampQueuedAt } from '../src/lifecycle/mutex-queue.js';
import { mutexTaskQueue } from '../src/lifecycle/names.js';
import { mutexRequestSignal } from '../workflows/definitions.js';
import type { mutexWorkflow } from '../workflows/mutex.js';
import type { ActivityDeps } from './deps.js';
import type { RequesterActivities } from './types.js';

export function createRequesterActivities(deps: ActivityDeps): RequesterActivities {
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
  };
}
