// Long waits meet Temporal's limits: the mutex carries a state bounded in bytes through its
// continues-as-new, tested here with a bound of 1,500 bytes and the real activities that answer.
// A drive container's long waits (for capacity, for a pod its teardown cannot reach) continue as
// new under a low history limit on their workflow alone (test/workflows/).
import type { WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { utf8Bytes } from '../../src/node/mutex-queue.js';
import {
  WORKFLOW,
  mutexRequestSignal,
  mutexStateQuery,
  nodeMutexId,
  type MutexInput,
  type MutexResponse,
  type MutexWorkflow,
} from '../../src/protocol.js';
import { eventually } from '../support/async.js';
import { uniqueName } from '../support/harness.js';
import { useTestOperator } from '../support/operator.js';
import { replyCollector } from './fixtures/reply-collector-client.js';

const op = useTestOperator();

type History = Awaited<ReturnType<WorkflowHandle['fetchHistory']>>;

/** Every run of the workflow, oldest first, followed back from the latest through the continue-as-new chain. */
async function runs(workflowId: string): Promise<{ runId: string; history: History }[]> {
  const chain: { runId: string; history: History }[] = [];
  for (let runId: string | undefined = (await op.client.workflow.getHandle(workflowId).describe()).runId; runId;) {
    const history = await op.client.workflow.getHandle(workflowId, runId).fetchHistory();
    chain.unshift({ runId, history });
    runId = history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId ?? undefined;
  }
  return chain;
}

/** The input a run was started with. */
function runInput<T>(history: History): T {
  const payload = history.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
  return defaultPayloadConverter.fromPayload<T>(payload);
}

describe('a mutex with a small carried-state bound', () => {
  it(
    'continues as new with a state under the bound, and still answers a repeated recent request from its record',
    { timeout: 240_000 },
    async () => {
      const BOUND = 1_500;
      const node = uniqueName('no-such-node');
      const mutexId = nodeMutexId(node);
      const collector = await replyCollector(op);
      const input: MutexInput = { key: mutexId, node, historyLimit: 60, carriedStateBytes: BOUND };
      await op.client.workflow.start<MutexWorkflow>(WORKFLOW.mutex, {
        taskQueue: op.deps.taskQueue,
        workflowId: mutexId,
        args: [input],
      });
      const ask = (requestId: string) =>
        op.client.workflow.getHandle(mutexId).signal(mutexRequestSignal, {
          requestId,
          kind: 'remove-proxy-if-unused',
          replyTo: collector.workflowId,
          payload: { node },
        });
      // 40 requests sent at once: for a while the queue alone is over the bound, and the mutex
      // drains it before it continues as new.
      const COUNT = 40;
      for (let i = 0; i < COUNT; i++) await ask(`req-${i}`);
      await eventually(
        `${COUNT} answers`,
        async () => ((await collector.answers()).length >= COUNT ? true : undefined),
        180_000,
      );
      const latest = op.client.workflow.getHandle(mutexId);
      await eventually('every request executed', async () =>
        (await latest.query(mutexStateQuery)).executed === COUNT ? true : undefined,
      );

      const chain = await runs(mutexId);
      expect(chain.length).toBeGreaterThan(1);
      for (const { history } of chain.slice(1)) {
        const carried = runInput<MutexInput>(history).state!;
        expect(utf8Bytes(JSON.stringify(carried))).toBeLessThanOrEqual(BOUND);
        expect(runInput<MutexInput>(history).carriedStateBytes).toBe(BOUND);
      }
      // The latest run was carried the newest answers only: the oldest were dropped for the bound.
      const carried = runInput<MutexInput>(chain.at(-1)!.history).state!;
      const kept = carried.answered.map((a) => a.requestId);
      expect(kept.length).toBeGreaterThan(0);
      expect(kept).not.toContain('req-0');

      // A repeated recent request is answered from the record, not executed again.
      await ask(`req-${COUNT - 1}`);
      const again = await eventually('the repeated answer', async () => {
        const got = await collector.answers();
        return got.length === COUNT + 1 ? got.at(-1) : undefined;
      });
      expect(again).toMatchObject({ requestId: `req-${COUNT - 1}`, ok: true } satisfies Partial<MutexResponse>);
      expect((await latest.query(mutexStateQuery)).executed).toBe(COUNT);
      // An old one whose record was dropped is executed again: safe, every mutex activity is idempotent.
      await ask('req-0');
      await eventually('the old request executed again', async () =>
        (await latest.query(mutexStateQuery)).executed === COUNT + 1 ? true : undefined,
      );
      expect((await collector.answers()).filter((a) => a.requestId === 'req-0')).toHaveLength(2);

      await collector.stop();
      await latest.terminate('test done');
    },
  );
});
