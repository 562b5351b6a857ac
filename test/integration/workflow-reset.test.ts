// Workflows Reset from the Temporal UI (to their first workflow task): a new run replays the old
// one's first steps and carries on. For a live container it must come back to what it holds; for
// one that ended with its object's deletion it must touch nothing of a successor of the name, a
// drive container's or a WekaCluster's.
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import type { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerOf } from '../../activities/kube/node-ledger.js';
import type { WekaContainer } from '../../src/api/index.js';
import { clusterWorkflowId, containerWorkflowId } from '../../src/protocol.js';
import { eventually, sleep } from '../support/async.js';
import { POOL_LABEL, readCluster, SMALL_MEMBER, WEKA_CLUSTERS } from '../support/clusters.js';
import {
  createContainerObject,
  createWekaClusterObject,
  listContainers,
  WEKA_CONTAINERS,
} from '../support/containers.js';
import { kubeConfig, temporalNamespace, uniqueName, uniqueNamespace } from '../support/harness.js';
import {
  sharedDrivesNode,
  startWatchedTestOperator,
  waitForPhase,
  waitGone,
  type TestOperator,
} from '../support/operator.js';
import { createWekaCluster, showDevice } from '../support/simulator.js';
import { resetToFirstTask } from '../support/temporal-reset.js';

const DEVICES = [{ path: '/dev/nvme0n1', capacityGiB: 7680, type: 'TLC' as const }];
const CLUSTER_DEVICES = [
  { path: '/dev/nvme0n1', capacityGiB: 7680, type: 'TLC' as const },
  { path: '/dev/nvme1n1', capacityGiB: 30720, type: 'QLC' as const },
];
const SPEC = { driveCores: 1, numDrives: 2, driveCapacity: 1000 };

let op: TestOperator;
let core: CoreV1Api;
beforeAll(async () => {
  op = await startWatchedTestOperator();
  core = kubeConfig().makeApiClient(CoreV1Api);
});
afterAll(async () => {
  await op?.stop();
});

const custom = () => kubeConfig().makeApiClient(CustomObjectsApi);

/** Resets the workflow and waits until the new run is no longer running. */
async function resetAndWaitEnded(client: Client, workflowId: string): Promise<void> {
  const runId = await resetToFirstTask(client, temporalNamespace(), workflowId);
  await eventually(
    `the reset run of ${workflowId} to end`,
    async () =>
      (await client.workflow.getHandle(workflowId, runId).describe()).status.name !== 'RUNNING' ? true : undefined,
    120_000,
    { intervalMs: 500 },
  );
}

/** What a node holds for a container: its ledger entry's virtual drives, and the device's. */
async function held(node: string): Promise<{ ledger: Record<string, string[]>; device: string[] }> {
  const ledger = ledgerOf(await core.readNode({ name: node }));
  const byUid = Object.fromEntries(
    Object.entries(ledger.containers).map(([uid, e]) => [
      uid,
      (e.allocation.virtualDrives ?? []).map((d) => d.virtualUUID).sort(),
    ]),
  );
  const device = (await showDevice(node, DEVICES[0]!.path)).virtualDrives.map((v) => v.virtualUUID).sort();
  return { ledger: byUid, device };
}

const drivesOf = (c: WekaContainer) => (c.status?.allocations?.virtualDrives ?? []).map((d) => d.virtualUUID).sort();

describe('a workflow Reset from the Temporal UI', () => {
  it(
    'of a Ready container comes back to the same drives, with nothing allocated twice',
    { timeout: 240_000 },
    async () => {
      const node = await sharedDrivesNode(DEVICES, 'reset-live');
      const guid = await createWekaCluster(node, uniqueName('reset-live'));
      const ref = { namespace: await uniqueNamespace('reset-live'), name: 'drive' };
      const created = await createContainerObject(
        kubeConfig(),
        ref,
        { nodeName: node, ...SPEC },
        { clusterGUID: guid },
      );
      const ready = await waitForPhase(ref, 'Ready', 120_000);
      const before = await held(node);

      const id = containerWorkflowId(created.metadata.uid!);
      await resetToFirstTask(op.client, temporalNamespace(), id);
      // The new run starts from its first step and settles again: parked, Ready, the same drives.
      await eventually(
        'the reset run to park again with the container Ready',
        async () => {
          const d = await op.client.workflow.getHandle(id).describe();
          const c = await waitForPhase(ref, 'Ready', 1_000).catch(() => undefined);
          return d.status.name === 'RUNNING' && c && d.historyLength > 10 ? c : undefined;
        },
        120_000,
        { intervalMs: 1_000 },
      );
      await sleep(3_000);
      const after = await waitForPhase(ref, 'Ready', 60_000);
      expect(drivesOf(after)).toEqual(drivesOf(ready));
      expect(await held(node)).toEqual(before);
    },
  );

  it("of a container's ended run touches nothing of a successor of the name", { timeout: 300_000 }, async () => {
    const node = await sharedDrivesNode(DEVICES, 'reset-ended');
    const guid = await createWekaCluster(node, uniqueName('reset-ended'));
    const ref = { namespace: await uniqueNamespace('reset-ended'), name: 'drive' };
    const first = await createContainerObject(kubeConfig(), ref, { nodeName: node, ...SPEC }, { clusterGUID: guid });
    await waitForPhase(ref, 'Ready', 120_000);
    await custom().deleteNamespacedCustomObject({ ...WEKA_CONTAINERS, ...ref });
    await waitGone(ref, 120_000);
    const firstId = containerWorkflowId(first.metadata.uid!);
    await eventually('the first run to end', async () =>
      (await op.client.workflow.getHandle(firstId).describe()).status.name === 'COMPLETED' ? true : undefined,
    );

    const second = await createContainerObject(
      kubeConfig(),
      ref,
      { nodeName: node, driveCores: 1, numDrives: 1, driveCapacity: 500 },
      { clusterGUID: guid },
    );
    const ready = await waitForPhase(ref, 'Ready', 120_000);
    const before = await held(node);

    await resetAndWaitEnded(op.client, firstId);
    await sleep(3_000);
    const after = await waitForPhase(ref, 'Ready', 10_000);
    expect(after.metadata.uid).toBe(second.metadata.uid);
    expect(after.metadata.deletionTimestamp).toBeUndefined();
    expect(drivesOf(after)).toEqual(drivesOf(ready));
    expect(await held(node)).toEqual(before);
    expect(Object.keys(before.ledger)).toEqual([second.metadata.uid]);
  });

  it(
    "of a WekaCluster's ended run touches nothing of a cluster created again under its name",
    { timeout: 420_000 },
    async () => {
      const pool = uniqueName('reset-cluster');
      await Promise.all([0, 1].map(() => sharedDrivesNode(CLUSTER_DEVICES, 'reset-cluster', { [POOL_LABEL]: pool })));
      const ns = await uniqueNamespace('reset-cluster');
      const ref = { namespace: ns, name: 'stores' };
      const readyCluster = () =>
        eventually(
          'the cluster Ready',
          async () => {
            const c = await readCluster(ns, ref.name);
            return c?.status?.phase === 'Ready' ? c : undefined;
          },
          180_000,
          { intervalMs: 1_000 },
        );
      const oldUid = await createWekaClusterObject(
        kubeConfig(),
        ref,
        { [POOL_LABEL]: pool },
        {
          driveContainers: 1,
          ...SMALL_MEMBER,
        },
      );
      await readyCluster();
      await custom().deleteNamespacedCustomObject({ ...WEKA_CLUSTERS, ...ref });
      await eventually(
        'the old cluster gone',
        async () => ((await readCluster(ns, ref.name)) === null ? true : undefined),
        180_000,
      );
      const oldId = clusterWorkflowId(oldUid);
      await eventually('the old run to end', async () =>
        (await op.client.workflow.getHandle(oldId).describe()).status.name === 'COMPLETED' ? true : undefined,
      );

      const newUid = await createWekaClusterObject(
        kubeConfig(),
        ref,
        { [POOL_LABEL]: pool },
        {
          driveContainers: 2,
          ...SMALL_MEMBER,
        },
      );
      const ready = await readyCluster();
      const members = await listContainers(kubeConfig(), ns);
      expect(members).toHaveLength(2);

      await resetAndWaitEnded(op.client, oldId);
      await sleep(5_000);
      const now = await readCluster(ns, ref.name);
      expect(now?.metadata.uid).toBe(newUid);
      expect(now?.metadata.deletionTimestamp).toBeUndefined();
      expect(now?.status?.ports).toEqual(ready.status?.ports);
      expect(now?.status?.phase).toBe('Ready');
      const still = await listContainers(kubeConfig(), ns);
      expect(still.map((m) => [m.metadata.uid, m.metadata.deletionTimestamp ?? null, m.status?.phase])).toEqual(
        members.map((m) => [m.metadata.uid, null, 'Ready']),
      );

      await custom().deleteNamespacedCustomObject({ ...WEKA_CLUSTERS, ...ref });
      await eventually(
        'the new cluster gone',
        async () => ((await readCluster(ns, ref.name)) === null ? true : undefined),
        180_000,
      );
    },
  );
});
