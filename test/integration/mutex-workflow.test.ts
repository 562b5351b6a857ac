// The mutex workflow against the real server: it continues as new carrying its queue and
// answers, answers a repeated request from its record, skips a requester that is gone, and
// refuses a kind of request it does not know.
import { describe, expect, it } from 'vitest';
import { eventually } from '../support/async.js';
import { uniqueName } from '../support/harness.js';
import { useTestOperator } from '../support/operator.js';
import { replyCollector } from './fixtures/reply-collector-client.js';
import { recordHistory } from '../support/histories.js';
import {
  type MutexResponse,
  mutexRequestSignal,
  mutexStateQuery,
  WORKFLOW,
  type MutexWorkflow,
} from '../../src/protocol.js';

const op = useTestOperator();

/** A mutex of a node that does not exist, started with `args`, and a reply collector to ask it from. */
async function mutexWithCollector(args: { historyLimit?: number } = {}) {
  const node = uniqueName('no-such-node');
  const mutexId = `weka-node/${node}`;
  const collector = await replyCollector(op);
  const handle = await op.client.workflow.start<MutexWorkflow>(WORKFLOW.mutex, {
    taskQueue: op.deps.taskQueue,
    workflowId: mutexId,
    args: [{ key: mutexId, node, ...args }],
  });
  return { node, mutexId, collector, handle };
}

describe('mutex workflow', () => {
  it(
    'continues as new with its queue and answers, and skips requesters that are gone',
    { timeout: 180_000 },
    async () => {
      const { node, mutexId, collector, handle } = await mutexWithCollector({ historyLimit: 60 });
      const firstRun = (await handle.describe()).runId;

      // 40 requests, every other one from a requester that does not exist.
      const ids: string[] = [];
      for (let i = 0; i < 40; i++) {
        const requestId = `req-${i}`;
        ids.push(requestId);
        const replyTo = i % 2 === 0 ? collector.workflowId : uniqueName('gone');
        await op.client.workflow
          .getHandle(mutexId)
          .signal(mutexRequestSignal, { requestId, kind: 'remove-proxy-if-unused', replyTo, payload: { node } });
      }
      const answers = await eventually(
        'the live requester to get its 20 answers',
        async () => {
          const got = await collector.answers();
          return got.length >= 20 ? got : undefined;
        },
        120_000,
      );
      expect(answers.map((a: MutexResponse) => a.requestId).sort()).toEqual(ids.filter((_, i) => i % 2 === 0).sort());
      expect(answers.every((a: MutexResponse) => a.ok)).toBe(true);

      const latest = op.client.workflow.getHandle(mutexId);
      // The last request's requester is gone; it still runs, and the mutex moves past it.
      const view = await eventually(
        'every request executed',
        async () => {
          const v = await latest.query(mutexStateQuery);
          return v.executed === 40 ? v : undefined;
        },
        60_000,
      );
      expect(view.queue).toEqual([]);
      expect(view.running).toEqual([]);
      expect((await latest.describe()).runId).not.toBe(firstRun);

      // A request repeated after a continue-as-new is answered from the carried record, not run again.
      await latest.signal(mutexRequestSignal, {
        requestId: 'req-38',
        kind: 'remove-proxy-if-unused',
        replyTo: collector.workflowId,
        payload: { node },
      });
      await eventually(
        'the repeated answer',
        async () => ((await collector.answers()).length === 21 ? true : undefined),
        60_000,
      );
      expect((await latest.query(mutexStateQuery)).executed).toBe(40);
      // The first run: it waits for its last answers to be delivered, then continues as new.
      await recordHistory(mutexId, 'node-mutex-continues-as-new', firstRun);
      await collector.stop();
      await latest.terminate('test done');
    },
  );

  it(
    'refuses a request of a kind it does not know, even one named like an Object method, and goes on',
    { timeout: 120_000 },
    async () => {
      const { node, collector, handle } = await mutexWithCollector();
      const ask = (requestId: string, kind: string) =>
        handle.signal(mutexRequestSignal, { requestId, kind, replyTo: collector.workflowId, payload: { node } });
      await ask('inherited', 'toString');
      await ask('made-up', 'defragment');
      await ask('known', 'remove-proxy-if-unused');
      const answers = await eventually(
        'three answers',
        async () => {
          const got = await collector.answers();
          return got.length >= 3 ? new Map(got.map((a: MutexResponse) => [a.requestId, a])) : undefined;
        },
        60_000,
      );
      for (const [id, kind] of [
        ['inherited', 'toString'],
        ['made-up', 'defragment'],
      ] as const) {
        expect(answers.get(id)).toMatchObject({
          ok: false,
          error: { type: 'UnknownRequestKind', message: `unknown mutex request kind "${kind}"` },
        });
      }
      expect(answers.get('known')?.ok).toBe(true);
      expect((await handle.query(mutexStateQuery)).executed).toBe(3);
      await collector.stop();
      await handle.terminate('test done');
    },
  );
});
