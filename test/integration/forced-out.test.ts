// An object forced out while its workflow runs a bring-up or waits (its finalizer removed by hand,
// then deleted, as people clear a stuck object): no deletion ever starts, so nothing but the
// watcher's sight of it gone can tell the workflow. It must still free what the uid holds, and
// end, with nobody signalling it by hand.
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerOf } from '../../activities/kube/node-ledger.js';
import { clusterWorkflowId, containerWorkflowId } from '../../src/protocol.js';
import { eventually } from '../support/async.js';
import { POOL_LABEL, readCluster, SMALL_MEMBER, WEKA_CLUSTERS } from '../support/clusters.js';
import {
  createContainerObject,
  createWekaClusterObject,
  listContainers,
  WEKA_CONTAINERS,
} from '../support/containers.js';
import { kubeConfig, uniqueName, uniqueNamespace } from '../support/harness.js';
import {
  sharedDrivesNode,
  startTestWatcher,
  startWatchedTestOperator,
  waitForPhase,
  waitGone,
  type TestOperator,
} from '../support/operator.js';
import type { RunningWatcher } from '../../deploy/operator/watcher/watcher.js';
import { createWekaCluster, showDevice } from '../support/simulator.js';

const DEVICES = [
  { path: '/dev/nvme0n1', capacityGiB: 7680, type: 'TLC' as const },
  { path: '/dev/nvme1n1', capacityGiB: 30720, type: 'QLC' as const },
];
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

let op: TestOperator & { watcher: RunningWatcher };
/** The watcher a test starts again in place of the operator's, stopped with it. */
let restarted: RunningWatcher | undefined;
let core: CoreV1Api;
beforeAll(async () => {
  op = await startWatchedTestOperator();
  core = kubeConfig().makeApiClient(CoreV1Api);
});
afterAll(async () => {
  await restarted?.stop();
  await op?.stop();
});

const custom = () => kubeConfig().makeApiClient(CustomObjectsApi);

/** Finalizer removed by hand, then deleted: gone at once, with no deletion the workflow could see. */
async function forceOut(kind: typeof WEKA_CONTAINERS | typeof WEKA_CLUSTERS, ref: { namespace: string; name: string }) {
  await custom().patchNamespacedCustomObject({ ...kind, ...ref, body: { metadata: { finalizers: null } } }, mergePatch);
  await custom().deleteNamespacedCustomObject({ ...kind, ...ref });
}

async function workflowEnded(id: string): Promise<void> {
  await eventually(
    `workflow ${id} to end`,
    async () => ((await op.client.workflow.getHandle(id).describe()).status.name === 'RUNNING' ? undefined : true),
    90_000,
    { intervalMs: 1_000 },
  );
}

describe('an object forced out while its workflow runs', () => {
  it('a Ready drive container: its workflow frees the node and ends', { timeout: 240_000 }, async () => {
    const node = await sharedDrivesNode(DEVICES, 'forced-container');
    const guid = await createWekaCluster(node, uniqueName('forced-container'));
    const ref = { namespace: await uniqueNamespace('forced-container'), name: 'drive' };
    const created = await createContainerObject(
      kubeConfig(),
      ref,
      { nodeName: node, driveCores: 1, numDrives: 2, driveCapacity: 1000 },
      { clusterGUID: guid },
    );
    const uid = created.metadata.uid!;
    const ready = await waitForPhase(ref, 'Ready', 120_000);
    const drives = ready.status!.allocations!.virtualDrives!.map((d) => d.virtualUUID);

    await forceOut(WEKA_CONTAINERS, ref);
    await waitGone(ref);
    await workflowEnded(containerWorkflowId(uid));
    expect(ledgerOf(await core.readNode({ name: node })).containers[uid]).toBeUndefined();
    const onDevice = (await showDevice(node, DEVICES[0]!.path)).virtualDrives.map((v) => v.virtualUUID);
    expect(onDevice.filter((d) => drives.includes(d))).toEqual([]);
  });

  it(
    'a forming WekaCluster: its workflow ends and its members go, freeing their nodes',
    { timeout: 300_000 },
    async () => {
      const pool = uniqueName('forced-cluster');
      const nodes = await Promise.all(
        [0, 1].map(() => sharedDrivesNode(DEVICES, 'forced-cluster', { [POOL_LABEL]: pool })),
      );
      const ns = await uniqueNamespace('forced-cluster');
      const ref = { namespace: ns, name: 'stores' };
      const uid = await createWekaClusterObject(
        kubeConfig(),
        ref,
        { [POOL_LABEL]: pool },
        {
          driveContainers: 2,
          ...SMALL_MEMBER,
        },
      );
      await eventually(
        'its members created',
        async () => ((await listContainers(kubeConfig(), ns)).length === 2 ? true : undefined),
        90_000,
      );

      await forceOut(WEKA_CLUSTERS, ref);
      await eventually('the cluster gone', async () => ((await readCluster(ns, ref.name)) === null ? true : undefined));
      await workflowEnded(clusterWorkflowId(uid));
      await eventually(
        'its members gone, and nothing of theirs in the nodes ledgers',
        async () => {
          if ((await listContainers(kubeConfig(), ns)).length > 0) return undefined;
          for (const node of nodes)
            if (Object.keys(ledgerOf(await core.readNode({ name: node })).containers).length > 0) return undefined;
          return true;
        },
        120_000,
        { intervalMs: 1_000 },
      );
    },
  );

  it(
    'a Ready drive container forced out while no watcher ran: the watcher, started again, tells its workflow',
    { timeout: 240_000 },
    async () => {
      const node = await sharedDrivesNode(DEVICES, 'forced-unwatched');
      const guid = await createWekaCluster(node, uniqueName('forced-unwatched'));
      const ref = { namespace: await uniqueNamespace('forced-unwatched'), name: 'drive' };
      const created = await createContainerObject(
        kubeConfig(),
        ref,
        { nodeName: node, driveCores: 1, numDrives: 1, driveCapacity: 1000 },
        { clusterGUID: guid },
      );
      const uid = created.metadata.uid!;
      await waitForPhase(ref, 'Ready', 120_000);

      // The watcher is down (the operator restarting) while a person forces the object out.
      await op.watcher.stop();
      await forceOut(WEKA_CONTAINERS, ref);
      await waitGone(ref);
      restarted = startTestWatcher(op);
      await restarted.ready;
      await workflowEnded(containerWorkflowId(uid));
      expect(ledgerOf(await core.readNode({ name: node })).containers[uid]).toBeUndefined();
    },
  );
});
