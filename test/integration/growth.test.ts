// Growing a drive container in place on the real servers: raising containerCapacity (Mode 2) or
// numDrives (Mode 1) adds new virtual drives through the node's mutex, signs and adds them, and
// never touches the ones the container holds (checked from the simulator's log); a growth that
// does not fit waits, Ready with what it has, until capacity is released; what would take drives
// away is refused by the apiserver.
import { CustomObjectsApi } from '@kubernetes/client-node';
import type { WorkflowHandle } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import type { SimulatedDevice } from '../../deploy/local/fake-nodes.js';
import type { WekaContainer } from '../../src/api/index.js';
import type { ObjectRef } from '../../src/api/names.js';
import {
  containerWorkflowId,
  deleteRequestedSignal,
  mutexStateQuery,
  nodeMutexId,
  specChangedSignal,
  type LifecycleWorkflow,
} from '../../src/protocol.js';
import { eventually } from '../support/async.js';
import { listContainers, patchContainerSpec, rejection, WEKA_API } from '../support/containers.js';
import { kubeConfig, simulatorRoot, uniqueName, uniqueNamespace } from '../support/harness.js';
import { recordHistory } from '../support/histories.js';
import { simLogReplayViolations } from '../support/instant-invariants.js';
import { checkSteadyState } from '../support/invariants.js';
import {
  type ContainerSpecInput,
  createDriveContainer,
  deleteDriveContainer,
  readContainer,
  sharedDrivesNode,
  startWekaCluster,
  useTestOperator,
  waitForPhase,
  waitGone,
} from '../support/operator.js';
import { createWekaCluster, simulatorLog, virtualDriveHistory } from '../support/simulator.js';

const op = useTestOperator();

const TLC_QLC: SimulatedDevice[] = [
  { path: '/dev/nvme0n1', capacityGiB: 7680, type: 'TLC' },
  { path: '/dev/nvme1n1', capacityGiB: 7680, type: 'TLC' },
  { path: '/dev/nvme2n1', capacityGiB: 15360, type: 'QLC' },
];
const ONE_TLC: SimulatedDevice[] = [{ path: '/dev/nvme0n1', capacityGiB: 3000, type: 'TLC' }];
const TLC_ONLY = { tlc: 1, qlc: 0 };
const TLC_QLC_1_1 = { tlc: 1, qlc: 1 };

/** Changes the spec as a user would, and tells the workflow (the watcher's job). */
async function patchSpec(
  ref: ObjectRef,
  spec: Partial<ContainerSpecInput>,
  handle?: WorkflowHandle<LifecycleWorkflow>,
): Promise<void> {
  await patchContainerSpec(kubeConfig(), ref, spec);
  if (handle) await handle.signal(specChangedSignal);
}

const drivesOf = (c: WekaContainer | null) => c?.status?.allocations?.virtualDrives ?? [];
const gibOf = (c: WekaContainer | null) => drivesOf(c).reduce((sum, d) => sum + d.capacityGiB, 0);
const condition = (c: WekaContainer | null, type: string) => c?.status?.conditions?.find((x) => x.type === type);

/** Ready with `gib` GiB (or `count` virtual drives), every one of them added to the cluster. */
async function waitGrown(ref: ObjectRef, want: { gib?: number; count?: number }, timeoutMs = 120_000) {
  return eventually(
    `${ref.name} Ready with ${JSON.stringify(want)}`,
    async () => {
      const c = await readContainer(ref);
      const drives = drivesOf(c);
      const added = new Set(c?.status?.addedVirtualDrives ?? []);
      const sized = want.gib !== undefined ? gibOf(c) === want.gib : drives.length === want.count;
      return c?.status?.phase === 'Ready' && sized && drives.every((d) => added.has(d.virtualUUID)) ? c : undefined;
    },
    timeoutMs,
    { progress: async () => JSON.stringify((await readContainer(ref))?.status ?? {}) },
  );
}

/** Each virtual drive was signed once with its size and added once, and nothing was undone. */
async function expectUntouched(node: string, drives: ReturnType<typeof drivesOf>): Promise<void> {
  const log = await simulatorLog(node);
  for (const d of drives)
    expect(virtualDriveHistory(log, d.virtualUUID), d.virtualUUID).toEqual([
      `virtual-add ${d.capacityGiB}`,
      'drive-add',
    ]);
}

describe('growing a drive container in place', () => {
  it('Mode 2: a higher containerCapacity adds virtual drives and leaves the old ones as they are', async () => {
    const node = await sharedDrivesNode(TLC_QLC, 'grow-mode2');
    const guid = await createWekaCluster(node, uniqueName('grow'));
    const ref = { namespace: await uniqueNamespace('grow'), name: 'drive-0' };
    const spec = { nodeName: node, driveCores: 2, containerCapacity: 6000, driveTypesRatio: { tlc: 1, qlc: 1 } };
    const { uid, handle } = await createDriveContainer(op, ref, spec, guid);
    const before = drivesOf(await waitForPhase(ref, 'Ready'));
    expect(before.reduce((s, d) => s + d.capacityGiB, 0)).toBe(6000);

    await patchSpec(ref, { containerCapacity: 10000 }, handle);
    const grown = await waitGrown(ref, { gib: 10000 });
    const after = drivesOf(grown);
    // The old virtual drives first, exactly as they were; the new ones keep the ratio.
    expect(after.slice(0, before.length)).toEqual(before);
    const added = after.slice(before.length);
    expect(added.length).toBeGreaterThan(0);
    const ofType = (t: string) => after.filter((d) => d.type === t).reduce((s, d) => s + d.capacityGiB, 0);
    expect([ofType('TLC'), ofType('QLC')]).toEqual([5000, 5000]);
    expect(condition(grown, 'Grown')?.status).toBe('True');
    expect(grown.status?.observedGeneration).toBe(grown.metadata.generation);
    await expectUntouched(node, after);

    // What would take drives away, or reshape them, is refused by the apiserver, with why.
    for (const [change, message] of [
      [{ containerCapacity: 8000 }, /containerCapacity can only grow.*Weka must phase the data out of a drive/],
      [{ driveTypesRatio: { tlc: 1, qlc: 2 } }, /driveTypesRatio cannot change once set: .*Weka must phase the data/],
      [{ driveCores: 3 }, /driveCores cannot change once set: .*Weka must phase the data/],
    ] as const) {
      const refused = await rejection(patchSpec(ref, change));
      expect(refused.code).toBe(422);
      expect(refused.message).toMatch(message);
    }
    expect(drivesOf(await readContainer(ref))).toEqual(after);

    await deleteDriveContainer(op, ref, uid);
    await waitGone(ref);
    await handle.result();
    await recordHistory(handle.workflowId, 'drive-container-growth');
  });

  it('Mode 1: a higher numDrives adds virtual drives of driveCapacity', async () => {
    const node = await sharedDrivesNode(TLC_QLC, 'grow-mode1');
    const guid = await createWekaCluster(node, uniqueName('grow'));
    const ref = { namespace: await uniqueNamespace('grow'), name: 'drive-0' };
    const spec = { nodeName: node, driveCores: 2, numDrives: 2, driveCapacity: 1000 };
    const { uid, handle } = await createDriveContainer(op, ref, spec, guid);
    const before = drivesOf(await waitForPhase(ref, 'Ready'));
    expect(before).toHaveLength(2);

    await patchSpec(ref, { numDrives: 5 }, handle);
    const after = drivesOf(await waitGrown(ref, { count: 5 }));
    expect(after.slice(0, 2)).toEqual(before);
    expect(after.every((d) => d.capacityGiB === 1000 && d.type === 'TLC')).toBe(true);
    await expectUntouched(node, after);

    // Asked again with nothing changed (a retried or repeated ask), the ledger answers the same.
    const mutex = op.client.workflow.getHandle(nodeMutexId(node));
    const executed = (await mutex.query(mutexStateQuery)).executed;
    await handle.signal(specChangedSignal);
    await eventually('the ask to be decided again', async () =>
      (await mutex.query(mutexStateQuery)).executed > executed ? true : undefined,
    );
    expect(drivesOf(await readContainer(ref))).toEqual(after);
    await expectUntouched(node, after);

    await deleteDriveContainer(op, ref, uid);
    await waitGone(ref);
  });

  it(
    'a growth that does not fit waits, Ready with what it holds, and proceeds once capacity is released',
    { timeout: 240_000 },
    async () => {
      const node = await sharedDrivesNode(ONE_TLC, 'grow-waits');
      const guid = await createWekaCluster(node, uniqueName('grow'));
      const ns = await uniqueNamespace('grow');
      const a = { namespace: ns, name: 'grows' };
      const b = { namespace: ns, name: 'holds' };
      const tlc = (containerCapacity: number) => ({
        nodeName: node,
        driveCores: 1,
        containerCapacity,
        driveTypesRatio: TLC_ONLY,
      });
      const ca = await createDriveContainer(op, a, tlc(1000), guid);
      const cb = await createDriveContainer(op, b, tlc(1500), guid);
      const before = drivesOf(await waitForPhase(a, 'Ready', 120_000));
      await waitForPhase(b, 'Ready', 120_000);

      // 500 GiB are free: 1000 more do not fit.
      await patchSpec(a, { containerCapacity: 2000 }, ca.handle);
      const waiting = await eventually('the growth to wait with a condition', async () => {
        const c = await readContainer(a);
        return c && condition(c, 'Grown')?.status === 'False' ? c : undefined;
      });
      expect(condition(waiting, 'Grown')?.reason).toBe('InsufficientDriveCapacity');
      expect(condition(waiting, 'Grown')?.message).toMatch(
        /not enough TLC capacity: need 1000 GiB.*keeps using its 1 virtual drives, 1000 GiB/,
      );
      expect(waiting.status?.phase).toBe('Ready');
      expect(condition(waiting, 'Ready')?.status).toBe('True');
      expect(drivesOf(waiting)).toEqual(before);
      expect(waiting.status?.addedVirtualDrives).toEqual(before.map((d) => d.virtualUUID));
      await expectUntouched(node, before);
      // It waits as a refused allocation does: among the node mutex's waiters, told of releases.
      const waiters = (await op.client.workflow.getHandle(nodeMutexId(node)).query(mutexStateQuery)).waiters;
      expect(waiters).toContain(ca.handle.workflowId);

      // B goes: its release wakes A, which takes the freed capacity.
      await deleteDriveContainer(op, b, cb.uid);
      await waitGone(b);
      const grown = await waitGrown(a, { gib: 2000 }, 90_000);
      expect(drivesOf(grown).slice(0, before.length)).toEqual(before);
      expect(condition(grown, 'Grown')?.status).toBe('True');
      await expectUntouched(node, drivesOf(grown));

      await deleteDriveContainer(op, a, ca.uid);
      await waitGone(a);
    },
  );

  it(
    'a member of a WekaCluster grows when its spec does, keeping its ports and drives',
    { timeout: 240_000 },
    async () => {
      const pool = uniqueName('pool');
      const node = await sharedDrivesNode(TLC_QLC, 'grow-member', { 'weka.weka.io/pool': pool });
      const ns = await uniqueNamespace('grow-member');
      const template = { driveContainers: 1, driveCores: 1, containerCapacity: 2200, driveTypesRatio: TLC_QLC_1_1 };
      const { handle: cluster } = await startWekaCluster(op, { namespace: ns, name: 'grows' }, pool, template);
      const member = await eventually(
        'the member Ready',
        async () => {
          const [m] = await listContainers(kubeConfig(), ns, { fieldSelector: 'spec.cluster=grows' });
          return m?.status?.phase === 'Ready' ? m : undefined;
        },
        180_000,
      );
      const ref = { namespace: ns, name: member.metadata.name! };
      const before = drivesOf(member);
      expect(member.status?.allocations?.wekaPort).toBeDefined();

      // What the cluster's propagation of a larger dynamicTemplate does to each member.
      const handle = op.client.workflow.getHandle<LifecycleWorkflow>(containerWorkflowId(member.metadata.uid!));
      await patchSpec(ref, { containerCapacity: 4000 }, handle);
      const grown = await waitGrown(ref, { gib: 4000 });
      expect(drivesOf(grown).slice(0, before.length)).toEqual(before);
      expect(grown.status?.allocations?.wekaPort).toBe(member.status?.allocations?.wekaPort);
      expect(grown.status?.allocations?.agentPort).toBe(member.status?.allocations?.agentPort);
      await expectUntouched(node, drivesOf(grown));

      await kubeConfig()
        .makeApiClient(CustomObjectsApi)
        .deleteNamespacedCustomObject({ ...WEKA_API, plural: 'wekaclusters', namespace: ns, name: 'grows' });
      await cluster.signal(deleteRequestedSignal);
      await cluster.result();
      await waitGone(ref);
    },
  );

  it(
    'growing under load (several containers allocating and growing on one node at once) never changes a virtual drive',
    { timeout: 300_000 },
    async () => {
      const node = await sharedDrivesNode(TLC_QLC, 'grow-load');
      const guid = await createWekaCluster(node, uniqueName('grow'));
      const ns = await uniqueNamespace('grow-load');
      const ref = (name: string) => ({ namespace: ns, name });
      const mode2 = (containerCapacity: number) => ({
        nodeName: node,
        driveCores: 2,
        containerCapacity,
        driveTypesRatio: { tlc: 1, qlc: 1 },
      });
      const [a, b] = await Promise.all([
        createDriveContainer(op, ref('a'), mode2(4000), guid),
        createDriveContainer(op, ref('b'), mode2(4000), guid),
      ]);
      const first = await Promise.all([waitForPhase(ref('a'), 'Ready'), waitForPhase(ref('b'), 'Ready')]);

      // All at once: two grow, one is created and grows before it is Ready, one is created.
      const [c] = await Promise.all([
        createDriveContainer(op, ref('c'), { nodeName: node, driveCores: 2, numDrives: 2, driveCapacity: 1000 }, guid),
        createDriveContainer(op, ref('d'), mode2(4000), guid),
        patchSpec(ref('a'), { containerCapacity: 6000 }, a.handle),
        patchSpec(ref('b'), { containerCapacity: 8000 }, b.handle),
      ]);
      await patchSpec(ref('c'), { numDrives: 4 }, c.handle);
      const done = await Promise.all([
        waitGrown(ref('a'), { gib: 6000 }, 180_000),
        waitGrown(ref('b'), { gib: 8000 }, 180_000),
        waitGrown(ref('c'), { count: 4 }, 180_000),
        waitGrown(ref('d'), { gib: 4000 }, 180_000),
      ]);
      for (const [i, before] of first.entries())
        expect(drivesOf(done[i]!).slice(0, drivesOf(before).length)).toEqual(drivesOf(before));
      await expectUntouched(
        node,
        done.flatMap((x) => drivesOf(x)),
      );

      // The checker's invariants, at rest and at every instant of the node's log.
      const scope = {
        nodes: [node],
        devices: TLC_QLC.map((d) => d.path),
        clusterGUIDs: [guid],
        namespaces: [ns],
        operatorNamespace: op.operatorNamespace,
      };
      const { violations, state } = await checkSteadyState(scope, {
        kubeConfig: kubeConfig(),
        simulatorRoot: simulatorRoot(),
      });
      expect(violations).toEqual([]);
      const capacity = (_: string, path: string) => TLC_QLC.find((d) => d.path === path)?.capacityGiB;
      const replay = simLogReplayViolations(state.logs, capacity);
      expect(replay.violations).toEqual([]);
      expect(replay.checks).toBeGreaterThan(0);

      const all = [a, b, c].map((x, i) => ({ ...x, ref: ref('abc'[i]!) }));
      const d = await readContainer(ref('d'));
      await Promise.all(all.map((x) => deleteDriveContainer(op, x.ref, x.uid)));
      await deleteDriveContainer(op, ref('d'), d!.metadata.uid!);
      await Promise.all([...all.map((x) => waitGone(x.ref)), waitGone(ref('d'))]);
    },
  );
});
