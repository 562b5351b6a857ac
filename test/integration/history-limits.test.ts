// Long waits meet Temporal's limits: every long-lived workflow continues as new before its history
// gets heavy, and the mutex carries a state bounded in bytes. Tested here with lowered limits, where
// the real parts take part: a teardown that cannot reach its pod (its node stopped), with a history
// limit of 100 events; a mutex with a carried-state bound of 1,500 bytes. A container waiting for
// capacity is tested on its workflow alone (test/workflows/drive-container.test.ts).
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { FINALIZER, TEARDOWN_WITHOUT_POD_ANNOTATION, type ObjectRef } from '../../src/api/names.js';
import { utf8Bytes } from '../../src/node/mutex-queue.js';
import { eventsOf } from '../support/events.js';
import {
  WORKFLOW,
  containerWorkflowId,
  mutexRequestSignal,
  mutexStateQuery,
  nodeMutexId,
  type LifecycleWorkflow,
  type MutexInput,
  type MutexResponse,
  type MutexWorkflow,
  type ObjectWorkflowInput,
} from '../../src/protocol.js';
import { eventually } from '../support/async.js';
import { createContainerObject, WEKA_CONTAINERS } from '../support/containers.js';
import { kubeConfig, removeNode, uniqueName, uniqueNamespace } from '../support/harness.js';
import { eventReasons } from '../support/manual-operation.js';
import {
  deleteDriveContainer,
  readContainer,
  sharedDrivesNode,
  useTestOperator,
  waitForPhase,
  waitGone,
} from '../support/operator.js';
import { createWekaCluster } from '../support/simulator.js';
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

const continuedAsNew = (history: History): boolean =>
  history.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes != null;

/** Creates a drive container as the watcher would see it, and starts its workflow with the history limit given. */
async function startContainerWithLimit(ref: ObjectRef, spec: object, clusterGUID: string, historyLimit: number) {
  const created = await createContainerObject(kubeConfig(), ref, spec, { finalizers: [FINALIZER], clusterGUID });
  const uid = created.metadata.uid!;
  const input: ObjectWorkflowInput = { ...ref, uid, historyLimit };
  await op.client.workflow.start<LifecycleWorkflow>(WORKFLOW.driveContainer, {
    taskQueue: op.deps.taskQueue,
    workflowId: containerWorkflowId(uid),
    args: [input],
  });
  return { uid, workflowId: containerWorkflowId(uid) };
}

describe('a teardown that cannot reach its pod', () => {
  it(
    'continues as new while it waits, stays blocked with its condition, and finishes from the status',
    { timeout: 420_000 },
    async () => {
      const node = await sharedDrivesNode([{ path: '/dev/nvme0n1', capacityGiB: 7680, type: 'TLC' }], 'history-down');
      const guid = await createWekaCluster(node, uniqueName('history-down'));
      const ref = { namespace: await uniqueNamespace('history-down'), name: 'drive-0' };
      const spec = { nodeName: node, driveCores: 1, numDrives: 2, driveCapacity: 1000 };
      const LIMIT = 50;
      const { uid, workflowId } = await startContainerWithLimit(ref, spec, guid, LIMIT);
      const ready = await waitForPhase(ref, 'Ready', 120_000);
      const drives = ready.status!.allocations!.virtualDrives!;
      const runsBefore = (await runs(workflowId)).length;

      // The node's kubelet stops; the Node object stays, as it does for a node that is down.
      await removeNode(node, { keepObject: true });
      await deleteDriveContainer(op, ref, uid);
      const strayed: string[] = [];
      await eventually(
        'the teardown to continue as new twice while it waits for the pod',
        async () => {
          const c = await readContainer(ref);
          const blocked = c?.status?.conditions?.find((x) => x.type === 'TeardownBlocked');
          const shown = `${c?.status?.phase} ${blocked?.status}/${blocked?.reason} ${c?.status?.allocations?.virtualDrives?.length ?? 0}`;
          // Until the first attempt fails, the condition is not there yet.
          if (blocked && shown !== `Deleting True/PodUnreachable ${drives.length}`) strayed.push(shown);
          return (await runs(workflowId)).length >= runsBefore + 2 ? true : undefined;
        },
        300_000,
        { intervalMs: 1_000 },
      );
      // It stayed blocked, holding the allocation, and said so with one Event, not one per run.
      expect(strayed).toEqual([]);
      const unreachable = (await eventReasons(ref.namespace, ref.name)).filter((r) => r === 'Warning/PodUnreachable');
      expect(unreachable).toHaveLength(1);

      // A person sets the annotation: the latest run finishes the teardown from what the status records.
      await kubeConfig()
        .makeApiClient(CustomObjectsApi)
        .patchNamespacedCustomObject(
          {
            ...WEKA_CONTAINERS,
            ...ref,
            body: { metadata: { annotations: { [TEARDOWN_WITHOUT_POD_ANNOTATION]: 'true' } } },
          },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
      await waitGone(ref, 180_000);
      await op.client.workflow.getHandle(workflowId).result();
      const left = (await eventsOf(ref)).find((e) => e.reason === 'TeardownWithoutPod');
      for (const d of drives) expect(left?.message).toContain(d.virtualUUID);
      expect(left?.message).toContain(guid);
      const chain = await runs(workflowId);
      for (const [i, { history }] of chain.slice(0, -1).entries()) {
        expect(continuedAsNew(history)).toBe(true);
        // The first run brought the container up, past the limit, and continued at its first pause.
        if (i > 0) expect(history.events!.length).toBeLessThan(LIMIT + 60);
      }
    },
  );
});

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
