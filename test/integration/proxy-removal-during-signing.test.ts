// Removing a node's unused ssdproxy and signing that node's drives are serialized by the node's
// mutex: a remove-proxy-if-unused that arrives while an operation signs the node's devices (a
// drive container's teardown sends one) never pulls the proxy pod from under the signing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatedDevice } from '../../deploy/local/fake-nodes.js';
import { mutexRequestSignal, nodeMutexId } from '../../src/protocol.js';
import { eventually } from '../support/async.js';
import { addNode, uniqueName, uniqueNamespace } from '../support/harness.js';
import { readOperation, startSignDrivesOperation, waitFinished } from '../support/manual-operation.js';
import { startTestOperator, type TestOperator } from '../support/operator.js';
import { changeCounts, sim, simulatorLog } from '../support/simulator.js';

const DEVICES: SimulatedDevice[] = Array.from({ length: 6 }, (_, i) => ({
  path: `/dev/nvme${i}n1`,
  capacityGiB: 1920,
  type: 'TLC' as const,
}));

let op: TestOperator;
let ns: string;
beforeAll(async () => {
  op = await startTestOperator();
  ns = await uniqueNamespace('proxy-removal');
});
afterAll(async () => {
  await op?.stop();
});

describe('removing an unused proxy while its node is signed', () => {
  it('waits for the signing: every device is signed and the operation succeeds', { timeout: 240_000 }, async () => {
    const node = uniqueName('signing-node');
    const selector = { 'weka.io/drive-sharing': uniqueName('pool') };
    await addNode({ name: node, labels: selector, devices: DEVICES });
    // Every Weka command takes a while, so the signing is still going when the removal arrives.
    await sim(node, 'faults', '--latency-ms', '700');

    const ref = { namespace: ns, name: 'sign-slowly' };
    await startSignDrivesOperation(op, ref, {
      type: 'device-paths',
      nodeSelector: selector,
      devicePaths: DEVICES.map((d) => d.path),
      shared: true,
    });
    await eventually(
      'the first device signed',
      async () =>
        (await simulatorLog(node)).some((e) => e.changes.some((c) => c.kind === 'sign-proxy')) ? true : undefined,
      120_000,
    );
    // No drive container is on the node, so the proxy is unused: the request a teardown sends.
    await op.client.workflow.getHandle(nodeMutexId(node)).signal(mutexRequestSignal, {
      requestId: uniqueName('remove-proxy'),
      kind: 'remove-proxy-if-unused',
      replyTo: uniqueName('nobody'),
      payload: { node },
    });

    const done = await waitFinished(ref, 180_000);
    const result = done.status?.results?.find((r) => r.node === node);
    expect(result?.error).toBeUndefined();
    expect(done.status?.phase).toBe('Succeeded');
    const signed = changeCounts(await simulatorLog(node), 'sign-proxy', 'device');
    expect(Object.fromEntries(signed)).toEqual(Object.fromEntries(DEVICES.map((d) => [d.path, 1])));
    expect((await readOperation(ref))?.status?.results?.[0]?.drives).toHaveLength(DEVICES.length);
    await sim(node, 'faults', '--clear');
  });
});
