// The sampler behind weka_drives_node_mutex_queue_depth against the real server. A query of a
// workflow its worker has evicted replays the workflow's whole history on that worker, and evicts
// another one in its place: sampling every node's mutex that way, every interval, kept a small
// workflow cache replaying mutex histories instead of running bring-ups. An idle mutex (no
// workflow task and no activity pending) has nothing queued, which the server alone can say.
import { Client, Connection } from '@temporalio/client';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { OperatorMetrics } from '../../deploy/operator/metrics.js';
import { isIdleMutex, startMutexDepthSampler } from '../../deploy/operator/mutex-depth.js';
import {
  mutexRequestSignal,
  mutexTaskQueue,
  nodeMutexId,
  runningMutexesQuery,
  WORKFLOW,
  type MutexWorkflow,
} from '../../src/protocol.js';
import { eventually } from '../support/async.js';
import { temporalAddress, temporalNamespace, uniqueName } from '../support/harness.js';
import { startTestOperator } from '../support/operator.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

async function seriesFor(metrics: OperatorMetrics, node: string) {
  const pick = async (gauge: typeof metrics.mutexQueueDepth) =>
    (await gauge.get()).values.find((v) => v.labels.node === node)?.value;
  return { depth: await pick(metrics.mutexQueueDepth), busy: await pick(metrics.mutexBusy) };
}

describe('node mutex depth sampler', () => {
  it(
    'reports an idle node mutex as an empty queue without asking a worker, and leaves out a busy one no worker answers for',
    { timeout: 120_000 },
    async () => {
      const op = await startTestOperator();
      let stopped = false;
      cleanups.push(() => (stopped ? Promise.resolve() : op.stop()));
      const taskQueue = op.deps.taskQueue;
      const node = uniqueName('sampled-node');
      const handle = await op.client.workflow.start<MutexWorkflow>(WORKFLOW.mutex, {
        taskQueue: mutexTaskQueue(taskQueue),
        workflowId: nodeMutexId(node),
        args: [{ key: nodeMutexId(node), node }],
      });
      const connection = await Connection.connect({ address: temporalAddress() });
      cleanups.push(() => connection.close());
      const client = new Client({ connection, namespace: temporalNamespace() });
      cleanups.push(() => client.workflow.getHandle(handle.workflowId).terminate('test over'));
      // Idle: its first workflow task done, waiting for a request, and listed by the sampler's query.
      await eventually(
        'the mutex idle and visible',
        async () => {
          if (!isIdleMutex(await handle.describe())) return undefined;
          for await (const wf of client.workflow.list({ query: runningMutexesQuery(taskQueue) }))
            if (wf.workflowId === handle.workflowId) return true;
          return undefined;
        },
        60_000,
      );
      // No worker from here on: a query of the mutex cannot be answered.
      await op.stop();
      stopped = true;

      const metrics = new OperatorMetrics({ processMetrics: false });
      const sampler = startMutexDepthSampler({
        temporal: client,
        taskQueue,
        metrics,
        logger: pino({ level: 'silent' }),
        intervalMs: 3_600_000,
      });
      cleanups.push(async () => sampler.stop());
      await sampler.sample();
      expect(await seriesFor(metrics, node)).toEqual({ depth: 0, busy: 0 });

      // A request it has not taken yet (its workflow task waits for a worker): not idle, so the
      // sampler must ask the mutex itself; nobody answers, so there is no sample rather than a guess.
      await client.workflow.getHandle(handle.workflowId).signal(mutexRequestSignal, {
        requestId: 'req-1',
        kind: 'remove-proxy-if-unused',
        replyTo: uniqueName('requester'),
        payload: { node },
      });
      await sampler.sample();
      expect(await seriesFor(metrics, node)).toEqual({ depth: undefined, busy: undefined });
    },
  );
});
