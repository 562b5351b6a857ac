// A node's mutex decides the allocations queued on it together: one read of the node, one
// conditional status write per container, decided in arrival order exactly as one decision
// after the other would have, the answers delivered together by one activity; and a container
// changing under the writes is decided again.
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { defaultPayloadConverter } from '@temporalio/common';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WekaContainer } from '../../src/api/index.js';
import { QUEUED_AT_FIELD } from '../../src/node/mutex-queue.js';
import { replyCollector, startMutexWithQueue } from './fixtures/reply-collector-client.js';
import { eventually } from '../support/async.js';
import { addNode, kubeConfig, removeNodesAdded, uniqueName, uniqueNamespace } from '../support/harness.js';
import { recordHistory } from '../support/histories.js';
import { createContainerObject } from '../support/containers.js';
import { bareSharedDrivesNode, readContainer, startTestOperator, type TestOperator } from '../support/operator.js';
import {
  type MutexRequest,
  type MutexResponse,
  nodeMutexId,
  mutexRequestSignal,
  WORKFLOW,
  type MutexWorkflow,
} from '../../src/protocol.js';

const DRIVE_GIB = 3840;
const logLines: string[] = [];
let op: TestOperator;
beforeAll(async () => {
  // Info lines are kept to see when the allocator had to decide again.
  const logger = pino({ level: 'info' }, { write: (line: string) => void logLines.push(line) });
  op = await startTestOperator({ logger });
});
afterAll(async () => {
  await op?.stop();
  await removeNodesAdded();
});

/** Twelve containers of 700 GiB: five fit on each drive, so ten of the twelve fit on the node. */
async function twelveContainers(node: string) {
  const ns = await uniqueNamespace('batch');
  const refs = Array.from({ length: 12 }, (_, i) => ({ namespace: ns, name: `drive-${i}` }));
  await Promise.all(
    refs.map((ref) =>
      createContainerObject(kubeConfig(), ref, {
        nodeName: node,
        driveCores: 1,
        containerCapacity: 700,
        driveTypesRatio: { tlc: 1, qlc: 0 },
      }),
    ),
  );
  return refs;
}

const allocateRequest = (node: string, ref: { namespace: string; name: string }, replyTo: string): MutexRequest => ({
  requestId: `${ref.namespace}-${ref.name}`,
  kind: 'allocate',
  replyTo,
  payload: { namespace: ref.namespace, name: ref.name, node },
});

/** The answers are the allocations written, the first ten in arrival order, and no drive holds more than it has. */
async function expectTenAllocatedInOrder(
  refs: { namespace: string; name: string }[],
  answers: MutexResponse[],
): Promise<void> {
  const byId = new Map(answers.map((a) => [a.requestId, a]));
  const ordered = refs.map((r) => byId.get(`${r.namespace}-${r.name}`)!);
  expect(ordered.map((a) => a.ok)).toEqual([...Array(10).fill(true), false, false]);
  for (const a of ordered.slice(10))
    expect(a).toMatchObject({ waitForCapacity: true, error: { type: 'InsufficientDriveCapacity' } });
  const containers = (await Promise.all(refs.map((r) => readContainer(r)))) as WekaContainer[];
  const used = new Map<string, number>();
  const uuids = new Set<string>();
  for (const [i, c] of containers.entries()) {
    const drives = c.status?.allocations?.virtualDrives ?? [];
    expect(drives).toEqual(i < 10 ? (ordered[i]!.result as { virtualDrives: unknown[] }).virtualDrives : []);
    for (const vd of drives) {
      used.set(vd.physicalUUID, (used.get(vd.physicalUUID) ?? 0) + vd.capacityGiB);
      uuids.add(vd.virtualUUID);
    }
  }
  for (const gib of used.values()) expect(gib).toBeLessThanOrEqual(DRIVE_GIB);
  expect(uuids.size).toBe(containers.reduce((n, c) => n + (c.status?.allocations?.virtualDrives?.length ?? 0), 0));
}

/** The activities the mutex scheduled, with how many containers or answers each carried. */
async function scheduledActivities(workflowId: string): Promise<{ type: string; items: number }[]> {
  const history = await op.client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).flatMap((e) => {
    const scheduled = e.activityTaskScheduledEventAttributes;
    if (!scheduled) return [];
    const input = defaultPayloadConverter.fromPayload<{ containers?: unknown[]; answers?: unknown[] }>(
      scheduled.input!.payloads![0]!,
    );
    return [
      { type: scheduled.activityType?.name ?? '', items: input.containers?.length ?? input.answers?.length ?? 1 },
    ];
  });
}

/** How many signals the workflow itself sent to other workflows. */
async function signalsSentByWorkflow(workflowId: string): Promise<number> {
  const history = await op.client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).filter((e) => e.signalExternalWorkflowExecutionInitiatedEventAttributes).length;
}

describe('allocations decided together', () => {
  it(
    'decides every allocation queued on a node in one activity, in arrival order, as one after the other would',
    { timeout: 120_000 },
    async () => {
      const node = await bareSharedDrivesNode('batch-node');
      const refs = await twelveContainers(node);
      const collector = await replyCollector(op);
      // The twelve are already queued when the mutex takes its first decision.
      const queue = refs.map((r) => allocateRequest(node, r, collector.workflowId));
      const mutexId = await startMutexWithQueue(op, node, queue);
      const answers = await collector.answered(12, 60_000);
      await expectTenAllocatedInOrder(refs, answers);
      // One decision, and its twelve answers delivered by one activity, not by a signal per
      // requester from the workflow.
      expect(await scheduledActivities(mutexId)).toEqual([
        { type: 'allocateForContainers', items: 12 },
        { type: 'answerMutexRequests', items: 12 },
      ]);
      expect(await signalsSentByWorkflow(mutexId)).toBe(0);

      await recordHistory(mutexId, 'node-mutex-batch');
      await collector.stop();
      await op.client.workflow.getHandle(mutexId).terminate('test done');
    },
  );

  it(
    'decides again from a fresh read when containers change while their allocations are written',
    { timeout: 180_000 },
    async () => {
      const node = await bareSharedDrivesNode('batch-node');
      const refs = await twelveContainers(node);
      const collector = await replyCollector(op);
      const mutexId = nodeMutexId(node);
      const custom = kubeConfig().makeApiClient(CustomObjectsApi);
      const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
      // Every container's labels change continuously, as another controller might, so the
      // conditional status writes keep finding a newer version than the one the decision read.
      let hammering = true;
      const hammers = refs.map(async (ref) => {
        for (let i = 0; hammering; i++) {
          await custom.patchNamespacedCustomObject(
            {
              group: 'weka.weka.io',
              version: 'v1alpha1',
              plural: 'wekacontainers',
              ...ref,
              body: { metadata: { labels: { touched: String(i) } } },
            },
            merge,
          );
        }
      });
      const logsBefore = logLines.length;
      for (const ref of refs) {
        await op.client.workflow.signalWithStart<MutexWorkflow, [MutexRequest]>(WORKFLOW.mutex, {
          taskQueue: op.deps.taskQueue,
          workflowId: mutexId,
          args: [{ key: mutexId, node }],
          signal: mutexRequestSignal,
          signalArgs: [allocateRequest(node, ref, collector.workflowId)],
        });
      }
      await eventually(
        'the allocator to meet a changed container',
        async () => (logLines.slice(logsBefore).some((l) => l.includes('deciding again')) ? true : undefined),
        60_000,
      );
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      hammering = false;
      await Promise.all(hammers);

      const answers = await eventually(
        'twelve answers',
        async () => ((await collector.answers()).length === 12 ? collector.answers() : undefined),
        120_000,
      );
      await expectTenAllocatedInOrder(refs, answers);
      await collector.stop();
      await op.client.workflow.getHandle(mutexId).terminate('test done');
    },
  );
});

describe('proxy requests asked together', () => {
  it("ensures a node's proxy once for every container that asked before it ran, and answers each", async () => {
    const node = uniqueName('proxy-node');
    await addNode({ name: node, devices: [{ path: '/dev/nvme0n1', capacityGiB: DRIVE_GIB, type: 'TLC' }] });
    const collector = await replyCollector(op);
    const ask = (i: number): MutexRequest => ({
      requestId: `proxy-${i}`,
      kind: 'ensure-proxy',
      replyTo: collector.workflowId,
      payload: { node, [QUEUED_AT_FIELD]: i },
    });
    // Three containers asked, at different times, before the mutex took its first decision.
    const mutexId = await startMutexWithQueue(op, node, [0, 1, 2].map(ask));
    const answers = await collector.answered(3, 90_000);
    expect(answers.map((a) => [a.requestId, a.ok]).sort()).toEqual([
      ['proxy-0', true],
      ['proxy-1', true],
      ['proxy-2', true],
    ]);
    expect(await scheduledActivities(mutexId)).toEqual([
      { type: 'ensureProxy', items: 1 },
      { type: 'answerMutexRequests', items: 3 },
    ]);
    await collector.stop();
    await op.client.workflow.getHandle(mutexId).terminate('test done');
  });
});
