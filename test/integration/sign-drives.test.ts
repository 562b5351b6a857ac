// The sign-drives operation on the real servers: the nodes a selector matches get their ssdproxy,
// their devices signed for it through Kubernetes exec into the simulator, and the signed drives
// published on the node (annotation and capacity resources). The tests share three nodes and run
// in order: later operations find the drives the first one signed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordHistory } from '../support/histories.js';
import { decodeSharedDrivesAnnotation, SHARED_DRIVES_ANNOTATION } from '../../src/annotations/index.js';
import type { PhysicalDrive } from '../../src/allocation/types.js';
import { proxyName } from '../../src/api/names.js';
import type { SimulatedDevice } from '../../deploy/local/fake-nodes.js';
import { eventually, sleep } from '../support/async.js';
import { addNode, uniqueName, uniqueNamespace } from '../support/harness.js';
import {
  createSignDrivesOperation,
  deleteOperation,
  deleteOperationObject,
  eventReasons,
  readNode,
  readOperation,
  startSignDrivesOperation,
  startSignDrivesWorkflow,
  waitFinished,
} from '../support/manual-operation.js';
import {
  createDriveContainer,
  podExists,
  readContainer,
  startTestOperator,
  type TestOperator,
} from '../support/operator.js';
import { changeCounts, sim, simulatorLog } from '../support/simulator.js';
import { operationWorkflowId, capacityReleasedSignal, stateQuery, WekaNode, WekaPhase } from '../../src/protocol.js';

const DEVICES: SimulatedDevice[] = [
  { path: '/dev/nvme0n1', capacityGiB: 7680, type: 'TLC' },
  { path: '/dev/nvme1n1', capacityGiB: 3840, type: 'TLC' },
  { path: '/dev/nvme2n1', capacityGiB: 15360, type: 'QLC' },
];
/** Only on the second node, and not in the first operation's list. */
const EXTRA: SimulatedDevice = { path: '/dev/nvme3n1', capacityGiB: 1920, type: 'TLC' };
const PATHS = DEVICES.map((d) => d.path);

let op: TestOperator;
let ns: string;
let selector: Record<string, string>;
let nodeA: string;
let nodeB: string;
let outsider: string;
let first: { ref: { namespace: string; name: string }; uid: string };

beforeAll(async () => {
  op = await startTestOperator();
  ns = await uniqueNamespace('sign-drives');
  // A label no other test's node carries, so only this file's nodes are selected.
  selector = { 'weka.io/drive-sharing': uniqueName('pool') };
  [nodeA, nodeB, outsider] = [uniqueName('sign-a'), uniqueName('sign-b'), uniqueName('sign-out')];
  await Promise.all([
    addNode({ name: nodeA, labels: selector, devices: DEVICES }),
    addNode({ name: nodeB, labels: selector, devices: [...DEVICES, EXTRA] }),
    addNode({ name: outsider, labels: { 'weka.io/drive-sharing': 'other' }, devices: DEVICES }),
  ]);
});
afterAll(async () => {
  await op?.stop();
});

async function sharedDrives(node: string): Promise<PhysicalDrive[]> {
  const text = (await readNode(node)).metadata?.annotations?.[SHARED_DRIVES_ANNOTATION];
  if (text === undefined) return [];
  const decoded = decodeSharedDrivesAnnotation(text);
  if (!decoded.ok) throw new Error(decoded.error.message);
  return decoded.drives;
}

async function capacityOf(node: string): Promise<Record<string, string | undefined>> {
  const status = (await readNode(node)).status;
  return {
    tlc: status?.capacity?.['weka.io/shared-drives-capacity'],
    qlc: status?.capacity?.['weka.io/shared-drives-capacity-qlc'],
    allocatableTlc: status?.allocatable?.['weka.io/shared-drives-capacity'],
    allocatableQlc: status?.allocatable?.['weka.io/shared-drives-capacity-qlc'],
  };
}

async function signProxyCounts(node: string): Promise<Map<string, number>> {
  return changeCounts(await simulatorLog(node), 'sign-proxy', 'device');
}

describe('sign-drives operation', () => {
  it('signs every listed device once on the selected nodes and publishes the drives and their capacity', async () => {
    const ref = { namespace: ns, name: 'sign-first' };
    const { uid, handle } = await startSignDrivesOperation(op, ref, {
      type: 'device-paths',
      nodeSelector: selector,
      devicePaths: PATHS,
      shared: true,
    });
    first = { ref, uid };
    const done = await waitFinished(ref);

    expect(done.status?.phase).toBe('Succeeded');
    expect(done.status?.results?.map((r) => r.node)).toEqual([nodeA, nodeB].sort());
    for (const node of [nodeA, nodeB]) {
      expect(await podExists(op.operatorNamespace, proxyName(node))).toBe(true);
      const counts = await signProxyCounts(node);
      expect(Object.fromEntries(counts)).toEqual(Object.fromEntries(PATHS.map((p) => [p, 1])));
      const drives = await sharedDrives(node);
      expect(drives.map((d) => [d.devicePath, d.type, d.capacityGiB])).toEqual(
        DEVICES.map((d) => [d.path, d.type, d.capacityGiB]),
      );
      expect(await capacityOf(node)).toEqual({
        tlc: '11520',
        qlc: '15360',
        allocatableTlc: '11520',
        allocatableQlc: '15360',
      });
      const result = done.status?.results?.find((r) => r.node === node);
      expect(result?.error).toBeUndefined();
      expect(result?.drives?.map((d) => d.uuid).sort()).toEqual(drives.map((d) => d.physicalUUID).sort());
    }
    expect(done.status?.conditions?.find((c) => c.type === 'Succeeded')).toMatchObject({
      status: 'True',
      reason: 'AllNodesSigned',
    });
    expect(await eventReasons(ns, ref.name)).toEqual(
      expect.arrayContaining(['Normal/NodeSigned', 'Normal/AllNodesSigned']),
    );
    expect((await handle.query(stateQuery)).phase).toBe('Succeeded');
    const described = await handle.describe();
    expect(described.memo).toMatchObject({ namespace: ns, name: ref.name, uid });
    expect(described.typedSearchAttributes.get(WekaPhase)).toBe('Succeeded');
    expect(described.typedSearchAttributes.get(WekaNode)).toBeUndefined();

    // The node the selector does not match is untouched.
    expect(await signProxyCounts(outsider)).toEqual(new Map());
    expect((await readNode(outsider)).metadata?.annotations?.[SHARED_DRIVES_ANNOTATION]).toBeUndefined();
    expect(await capacityOf(outsider)).toEqual({});
    expect(await podExists(op.operatorNamespace, proxyName(outsider))).toBe(false);
    await recordHistory(handle.workflowId, 'sign-drives-published-through-mutex');
  });

  it('wakes a drive container refused for lack of shared drives as soon as the drives are published', async () => {
    const late = uniqueName('sign-late');
    const lateSelector = { 'weka.io/drive-sharing': uniqueName('late-pool') };
    await addNode({ name: late, labels: lateSelector, devices: DEVICES });
    const ref = { namespace: ns, name: 'early-container' };
    const { handle } = await createDriveContainer(op, ref, {
      nodeName: late,
      driveCores: 1,
      numDrives: 1,
      driveCapacity: 400,
    });
    await eventually(
      'the container to be refused for lack of shared drives',
      async () => {
        const c = await readContainer(ref);
        return c?.status?.conditions?.find(
          (x) => x.type === 'Allocated' && x.status === 'False' && x.reason === 'NoSharedDrives',
        );
      },
      60_000,
    );

    await startSignDrivesOperation(
      op,
      { namespace: ns, name: 'sign-late' },
      { type: 'device-paths', nodeSelector: lateSelector, devicePaths: PATHS, shared: true },
    );
    // Woken by the mutex when the publish completed, not by its next periodic re-ask.
    const signals = await eventually(
      'the container to be allocated',
      async () => {
        const c = await readContainer(ref);
        if (!c?.status?.allocations?.virtualDrives?.length) return undefined;
        const history = await handle.fetchHistory();
        return (history.events ?? [])
          .map((e) => e.workflowExecutionSignaledEventAttributes?.signalName)
          .filter(Boolean);
      },
      60_000,
    );
    expect(signals).toContain(capacityReleasedSignal.name);
  });

  it('signs nothing again when the same devices are signed a second time, and keeps the annotation', async () => {
    const before = { a: await sharedDrives(nodeA), b: await sharedDrives(nodeB) };
    const ref = { namespace: ns, name: 'sign-again' };
    await startSignDrivesOperation(op, ref, {
      type: 'device-paths',
      nodeSelector: selector,
      devicePaths: PATHS,
      shared: true,
    });
    const done = await waitFinished(ref);

    expect(done.status?.phase).toBe('Succeeded');
    expect(done.status?.results?.every((r) => r.drives?.length === PATHS.length)).toBe(true);
    for (const node of [nodeA, nodeB])
      expect(Object.fromEntries(await signProxyCounts(node))).toEqual(Object.fromEntries(PATHS.map((p) => [p, 1])));
    expect(await sharedDrives(nodeA)).toEqual(before.a);
    expect(await sharedDrives(nodeB)).toEqual(before.b);
  });

  it("skips a device missing on one node, with the reason in that node's result, while the other node signs and adds it", async () => {
    const ref = { namespace: ns, name: 'sign-missing' };
    await startSignDrivesOperation(op, ref, {
      type: 'device-paths',
      nodeSelector: selector,
      devicePaths: [...PATHS, EXTRA.path],
      shared: true,
    });
    const done = await waitFinished(ref);

    expect(done.status?.phase).toBe('Succeeded');
    const a = done.status?.results?.find((r) => r.node === nodeA);
    const b = done.status?.results?.find((r) => r.node === nodeB);
    expect(a?.error).toBeUndefined();
    expect(a?.skipped).toEqual([
      {
        devicePath: EXTRA.path,
        reason: 'NotFound',
        message: expect.stringMatching(/is not a block device on this node/),
      },
    ]);
    expect(b?.error).toBeUndefined();
    expect(b?.skipped).toBeUndefined();
    expect(b?.drives).toHaveLength(4);
    // Node B gained the new drive without losing the others; node A kept what it had.
    expect((await sharedDrives(nodeB)).map((d) => d.devicePath)).toEqual([...PATHS, EXTRA.path]);
    expect(await capacityOf(nodeB)).toMatchObject({ tlc: String(11520 + EXTRA.capacityGiB), qlc: '15360' });
    expect((await sharedDrives(nodeA)).map((d) => d.devicePath)).toEqual(PATHS);
    expect((await signProxyCounts(nodeB)).get(EXTRA.path)).toBe(1);
    expect(done.status?.conditions?.find((c) => c.type === 'Succeeded')).toMatchObject({
      status: 'True',
      reason: 'SignedSomeSkipped',
    });
    expect(await eventReasons(ns, ref.name)).toContain('Warning/DevicesSkipped');
  });

  it('removes only the finalizer when the operation is deleted: the drives stay signed and published', async () => {
    const drivesBefore = await sharedDrives(nodeA);
    await deleteOperation(op, first.ref, first.uid);
    await op.client.workflow.getHandle(operationWorkflowId(first.uid)).result();

    expect(await readOperation(first.ref)).toBeNull();
    expect(await sharedDrives(nodeA)).toEqual(drivesBefore);
    expect(Object.fromEntries(await signProxyCounts(nodeA))).toEqual(Object.fromEntries(PATHS.map((p) => [p, 1])));
  });

  it('goes straight to removing the finalizer when started for an operation already being deleted', async () => {
    const logBefore = (await simulatorLog(nodeA)).length;
    const ref = { namespace: ns, name: 'sign-deleted-early' };
    const created = await createSignDrivesOperation(ref, {
      type: 'device-paths',
      nodeSelector: selector,
      devicePaths: PATHS,
      shared: true,
    });
    await deleteOperationObject(ref);
    expect((await readOperation(ref))?.metadata.deletionTimestamp).toBeDefined();
    await (await startSignDrivesWorkflow(op, ref, created.uid)).result();

    expect(await readOperation(ref)).toBeNull();
    expect((await simulatorLog(nodeA)).length).toBe(logBefore);
  });

  it('stops signing and removes the finalizer when the operation is deleted while it runs', async () => {
    // Slow every Weka command down so the deletion arrives while a node's devices are being probed.
    await Promise.all([nodeA, nodeB].map((node) => sim(node, 'faults', '--latency-ms', '1000')));
    try {
      const ref = { namespace: ns, name: 'sign-deleted-running' };
      const logBefore = new Map(
        await Promise.all([nodeA, nodeB].map(async (n) => [n, (await simulatorLog(n)).length] as const)),
      );
      const { uid, handle } = await startSignDrivesOperation(op, ref, {
        type: 'device-paths',
        nodeSelector: selector,
        devicePaths: PATHS,
        shared: true,
      });
      await eventually('a node to be signing', async () =>
        /signing \d+ devices/.test((await handle.query(stateQuery)).detail) ? true : undefined,
      );
      await deleteOperation(op, ref, uid);
      await handle.result();
      await recordHistory(handle.workflowId, 'sign-drives-deleted-while-running');

      expect(await readOperation(ref)).toBeNull();
      // The device being probed when the deletion came is finished by the node's mutex; no other
      // device is asked for after it.
      await sleep(3_000);
      for (const node of [nodeA, nodeB]) {
        const probed = (await simulatorLog(node)).slice(logBefore.get(node)).filter((e) => e.argv[1] === 'list');
        expect(probed.length).toBeLessThan(PATHS.length);
      }
    } finally {
      await Promise.all([nodeA, nodeB].map((node) => sim(node, 'faults', '--clear')));
    }
  });
});
