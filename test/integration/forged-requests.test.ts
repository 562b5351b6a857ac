// Requests to a node's mutex are signals, which anybody with access to the operator's Temporal
// namespace can send. Signing destroys what a device held, so a sign-drive request is carried out
// only for a live WekaManualOperation of the named uid that selects the node and lists the device.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatedDevice } from '../../deploy/local/fake-nodes.js';
import {
  mutexRequestSignal,
  mutexTaskQueue,
  nodeMutexId,
  WORKFLOW,
  type MutexPayloads,
  type MutexRequest,
  type MutexResponse,
  type MutexWorkflow,
} from '../../src/protocol.js';
import { eventually } from '../support/async.js';
import { addNode, uniqueName, uniqueNamespace } from '../support/harness.js';
import { createSignDrivesOperation } from '../support/manual-operation.js';
import { startTestOperator, type TestOperator } from '../support/operator.js';
import { showDevice } from '../support/simulator.js';
import { replyCollector } from './fixtures/reply-collector-client.js';

const DEVICES: SimulatedDevice[] = [
  { path: '/dev/nvme0n1', capacityGiB: 1920, type: 'TLC' },
  { path: '/dev/nvme1n1', capacityGiB: 1920, type: 'TLC' },
];

let op: TestOperator;
let ns: string;
let collector: Awaited<ReturnType<typeof replyCollector>>;
beforeAll(async () => {
  op = await startTestOperator();
  ns = await uniqueNamespace('forged');
  collector = await replyCollector(op);
});
afterAll(async () => {
  await collector?.stop();
  await op?.stop();
});

/** Sends a sign-drive request the way any client of the namespace could, and waits for its answer. */
async function signDrive(payload: MutexPayloads['sign-drive']): Promise<MutexResponse> {
  const requestId = uniqueName('forged-sign');
  const mutexId = nodeMutexId(payload.node);
  await op.client.workflow.signalWithStart<MutexWorkflow, [MutexRequest]>(WORKFLOW.mutex, {
    workflowId: mutexId,
    taskQueue: mutexTaskQueue(op.deps.taskQueue),
    args: [{ key: mutexId, node: payload.node }],
    signal: mutexRequestSignal,
    signalArgs: [{ requestId, kind: 'sign-drive', replyTo: collector.workflowId, payload }],
  });
  return eventually(`the answer to ${requestId}`, async () =>
    (await collector.answers()).find((a) => a.requestId === requestId),
  );
}

describe('a sign-drive request that no operation asks for', () => {
  it('signs nothing, whatever operation it names', { timeout: 180_000 }, async () => {
    const selector = { 'weka.io/drive-sharing': uniqueName('forged') };
    const node = uniqueName('forged-node');
    await addNode({ name: node, labels: selector, devices: DEVICES });
    const [listed, unlisted] = DEVICES.map((d) => d.path) as [string, string];
    // A real operation, for the first device only; its workflow is not started (nothing signs yet).
    const ref = { namespace: ns, name: 'signs-one-device' };
    const { uid } = await createSignDrivesOperation(ref, {
      type: 'device-paths',
      nodeSelector: selector,
      devicePaths: [listed],
      shared: true,
    });

    const cases: [string, MutexPayloads['sign-drive'], RegExp][] = [
      ['no such operation', { node, devicePath: listed, operation: { ...ref, uid: 'no-such-uid' } }, /does not exist/],
      ['a device it does not list', { node, devicePath: unlisted, operation: { ...ref, uid } }, /does not list/],
    ];
    for (const [what, payload, says] of cases) {
      const answer = await signDrive(payload);
      expect(answer, what).toMatchObject({ ok: false, error: { type: 'SigningNotRequested' } });
      expect(answer.error?.message, what).toMatch(says);
    }
    for (const path of [listed, unlisted]) expect((await showDevice(node, path)).signature).toBe('none');

    // The control: what the operation does ask for is signed.
    const asked = await signDrive({ node, devicePath: listed, operation: { ...ref, uid } });
    expect(asked.ok).toBe(true);
    expect((await showDevice(node, listed)).signature).toBe('proxy');
  });
});
