// Drive containers on whole drives signed for exclusive use: each gets numDrives of the node's
// exclusive drives through the node's mutex, adds them to its Weka cluster by device path, and on
// deletion takes them out and signs them again, which wipes the cluster's claim, so the next
// container can be given them. Exclusive and shared drives live side by side on one node, under
// concurrent allocation, and no drive is ever given to both or to two containers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatedDevice } from '../../deploy/local/fake-nodes.js';
import type { WekaContainer } from '../../src/api/index.js';
import { parseDriveList, type ClusterDrive } from '../../src/weka/index.js';
import { eventually } from '../support/async.js';
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { WEKA_CONTAINERS } from '../support/containers.js';
import { addNode, kubeConfig, uniqueName, uniqueNamespace } from '../support/harness.js';
import { specChangedSignal } from '../../src/protocol.js';
import { startSignDrivesOperation, waitFinished } from '../support/manual-operation.js';
import {
  createDriveContainer,
  deleteDriveContainer,
  readContainer,
  startTestOperator,
  waitForPhase,
  waitGone,
  type TestOperator,
} from '../support/operator.js';
import { createWekaCluster, showDevice, sim } from '../support/simulator.js';

const SHARED: SimulatedDevice[] = [
  { path: '/dev/nvme0n1', capacityGiB: 3840, type: 'TLC' },
  { path: '/dev/nvme1n1', capacityGiB: 3840, type: 'TLC' },
];
const WHOLE: SimulatedDevice[] = [
  { path: '/dev/nvme2n1', capacityGiB: 7680, type: 'TLC', serial: 'EXCL-A' },
  { path: '/dev/nvme3n1', capacityGiB: 7680, type: 'TLC', serial: 'EXCL-B' },
  { path: '/dev/nvme4n1', capacityGiB: 7680, type: 'TLC', serial: 'EXCL-C' },
];

let op: TestOperator;
let ns: string;
let node: string;
let guid: string;

beforeAll(async () => {
  op = await startTestOperator();
  ns = await uniqueNamespace('exclusive');
  node = uniqueName('excl-node');
  const selector = { 'weka.io/drive-sharing': uniqueName('excl') };
  await addNode({ name: node, labels: selector, devices: [...SHARED, ...WHOLE] });
  const sign = async (name: string, devicePaths: string[], shared: boolean) => {
    const ref = { namespace: ns, name };
    await startSignDrivesOperation(op, ref, { type: 'device-paths', nodeSelector: selector, devicePaths, shared });
    expect((await waitFinished(ref)).status?.phase).toBe('Succeeded');
  };
  await sign(
    'shared',
    SHARED.map((d) => d.path),
    true,
  );
  await sign(
    'whole',
    WHOLE.map((d) => d.path),
    false,
  );
  guid = await createWekaCluster(node, uniqueName('cluster'));
});
afterAll(async () => {
  await op?.stop();
});

async function clusterDrives(containerId: number, on = node): Promise<ClusterDrive[]> {
  return parseDriveList(await sim(on, '--', 'weka', 'cluster', 'drive', '--container', String(containerId), '--json'));
}

const whole = (numDrives: number) => ({ nodeName: node, driveCores: 1, numDrives });
const shared = () => ({ nodeName: node, driveCores: 1, numDrives: 2, driveCapacity: 500 });

describe('drive containers on exclusive drives', () => {
  it('side by side with shared containers under concurrent allocation: every whole drive given once, added by path, and released on deletion', async () => {
    const refs = [
      { ref: { namespace: ns, name: 'whole-1' }, spec: whole(1) },
      { ref: { namespace: ns, name: 'whole-2' }, spec: whole(2) },
      { ref: { namespace: ns, name: 'shared-1' }, spec: shared() },
      { ref: { namespace: ns, name: 'shared-2' }, spec: shared() },
      { ref: { namespace: ns, name: 'shared-3' }, spec: shared() },
    ];
    const created = await Promise.all(refs.map((r) => createDriveContainer(op, r.ref, r.spec, guid)));
    const ready = await Promise.all(refs.map((r) => waitForPhase(r.ref, 'Ready', 120_000)));

    const byName = new Map(ready.map((c) => [c.metadata.name!, c]));
    const given = ['whole-1', 'whole-2'].flatMap((n) => byName.get(n)!.status?.allocations?.drives ?? []);
    expect(given.sort()).toEqual(['EXCL-A', 'EXCL-B', 'EXCL-C']);
    for (const n of ['whole-1', 'whole-2']) expect(byName.get(n)!.status?.allocations?.virtualDrives ?? []).toEqual([]);
    // The shared containers' virtual drives are all on the proxy's drives, never on a whole one.
    const sharedSerials = new Set(await Promise.all(SHARED.map(async (d) => (await showDevice(node, d.path)).serial)));
    for (const n of ['shared-1', 'shared-2', 'shared-3'])
      for (const vd of byName.get(n)!.status?.allocations?.virtualDrives ?? [])
        expect(sharedSerials.has(vd.serial!)).toBe(true);

    // Each whole drive is in the Weka cluster as its container's drive, by device path, and claimed.
    const two = byName.get('whole-2')!;
    const drives = await clusterDrives(two.status!.containerID!);
    expect(drives.map((d) => d.serial).sort()).toEqual([...two.status!.allocations!.drives!].sort());
    expect(drives.every((d) => d.devicePath?.startsWith('/dev/nvme'))).toBe(true);
    expect(drives.map((d) => d.uuid).sort()).toEqual((two.status?.addedDrives ?? []).map((d) => d.uuid).sort());
    expect((two.status?.addedDrives ?? []).map((d) => d.serial).sort()).toEqual(drives.map((d) => d.serial).sort());
    for (const d of drives) expect((await showDevice(node, d.devicePath!)).clusterGUID).toBe(guid);

    // A third whole container waits for a drive; deleting whole-2 releases two, and it gets one.
    const waiting = { namespace: ns, name: 'whole-waits' };
    await createDriveContainer(op, waiting, whole(1), guid);
    const refused = await eventually('the third whole container to be refused', async () => {
      const c = await readContainer(waiting);
      return c?.status?.conditions?.find((x) => x.type === 'Allocated' && x.status === 'False');
    });
    expect(refused.reason).toBe('InsufficientDrives');

    await deleteDriveContainer(op, refs[1]!.ref, created[1]!.uid);
    await waitGone(refs[1]!.ref, 90_000);
    // Taken out of the cluster and signed again: no cluster's claim is left on the drives.
    for (const d of drives) {
      const shown = await showDevice(node, d.devicePath!);
      expect(shown.signature).toBe('exclusive');
      expect(shown.clusterGUID ?? null).toBeNull();
    }
    const woke = await waitForPhase(waiting, 'Ready', 90_000);
    expect(woke.status?.allocations?.drives).toHaveLength(1);
    expect(two.status!.allocations!.drives).toContain(woke.status!.allocations!.drives![0]);
  });

  it('grows by whole drives when numDrives is raised, keeping the drives it holds in the cluster', async () => {
    // A node of its own, with two whole drives and nothing else.
    const own = uniqueName('excl-grow');
    const selector = { 'weka.io/drive-sharing': uniqueName('excl-grow') };
    await addNode({
      name: own,
      labels: selector,
      devices: WHOLE.slice(0, 2).map((d) => ({ ...d, serial: `G-${d.serial!}` })),
    });
    const signRef = { namespace: ns, name: 'grow-sign' };
    await startSignDrivesOperation(op, signRef, {
      type: 'all-not-root',
      nodeSelector: selector,
      shared: false,
    });
    expect((await waitFinished(signRef)).status?.phase).toBe('Succeeded');
    const ownGuid = await createWekaCluster(own, uniqueName('cluster'));
    const ref = { namespace: ns, name: 'grows' };
    const { handle } = await createDriveContainer(op, ref, { nodeName: own, driveCores: 1, numDrives: 1 }, ownGuid);
    const before = await waitForPhase(ref, 'Ready', 90_000);
    const [first] = before.status!.allocations!.drives!;
    await kubeConfig()
      .makeApiClient(CustomObjectsApi)
      .patchNamespacedCustomObject(
        { ...WEKA_CONTAINERS, ...ref, body: { spec: { numDrives: 2 } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    await handle.signal(specChangedSignal);
    const grown = await eventually(
      'the container to hold two whole drives, both added',
      async () => {
        const c = await readContainer(ref);
        return c?.status?.phase === 'Ready' && c.status.addedDrives?.length === 2 ? c : undefined;
      },
      90_000,
    );
    expect(grown.status?.allocations?.drives?.[0]).toBe(first);
    expect(grown.status?.conditions?.find((c) => c.type === 'Grown')).toMatchObject({ status: 'True' });
    const listed = await clusterDrives(grown.status!.containerID!, own);
    expect(listed.map((d) => d.serial).sort()).toEqual(['G-EXCL-A', 'G-EXCL-B']);
  });

  it('refuses a container that asks for neither shared capacity nor whole drives, with the reason', async () => {
    const ref = { namespace: ns, name: 'asks-nothing' };
    await createDriveContainer(op, ref, { nodeName: node, driveCores: 1 }, guid);
    const c = await eventually('the refusal', async () => {
      const read: WekaContainer | null = await readContainer(ref);
      return read?.status?.conditions?.find((x) => x.type === 'Allocated' && x.status === 'False');
    });
    expect(c).toMatchObject({ reason: 'InvalidDriveSharingConfig' });
    expect(c.message).toMatch(/nor numDrives \(whole drives for its exclusive use\)/);
  });
});
