// `kubectl delete namespace` with drive containers in every state: the namespace controller deletes
// their pods and marks them deleted, nothing can be created in the namespace any more (no pod, no
// Event), and each teardown still completes: the namespace goes, and every ledger entry and
// virtual drive of theirs is removed from the node, or recorded there as left behind.
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerOf } from '../../activities/kube/node-ledger.js';
import { eventually } from '../support/async.js';
import { createContainerObject } from '../support/containers.js';
import { kubeConfig, uniqueName, uniqueNamespace } from '../support/harness.js';
import {
  readContainer,
  sharedDrivesNode,
  startWatchedTestOperator,
  waitForPhase,
  type TestOperator,
} from '../support/operator.js';
import { SIMULATED_BACKEND_PREFIX } from '../../deploy/local/shared-drives.js';
import { clusterContainers, createWekaCluster, showDevice } from '../support/simulator.js';
import { recordHistory } from '../support/histories.js';
import { containerWorkflowId } from '../../src/protocol.js';

const DEVICES = [{ path: '/dev/nvme0n1', capacityGiB: 3840, type: 'TLC' as const }];

let op: TestOperator;
let core: CoreV1Api;
beforeAll(async () => {
  op = await startWatchedTestOperator();
  core = kubeConfig().makeApiClient(CoreV1Api);
});
afterAll(async () => {
  await op?.stop();
});

/** `kubectl delete namespace` and its wait: done once the namespace is gone. */
async function deleteNamespace(ns: string): Promise<void> {
  await core.deleteNamespace({ name: ns });
  await eventually(
    `namespace ${ns} gone`,
    async () => ((await core.readNamespace({ name: ns }).catch(() => null)) === null ? true : undefined),
    240_000,
  );
}

describe('deleting a namespace with drive containers in it', () => {
  it(
    'completes with containers Ready, waiting for capacity, refused, and with their pod gone, and leaves nothing of theirs on the node',
    { timeout: 300_000 },
    async () => {
      const node = await sharedDrivesNode(DEVICES, 'ns-delete');
      const guid = await createWekaCluster(node, uniqueName('ns-delete'));
      const ns = await uniqueNamespace('ns-delete');
      const create = async (name: string, spec: object) =>
        (
          await createContainerObject(
            kubeConfig(),
            { namespace: ns, name },
            { nodeName: node, ...spec },
            { clusterGUID: guid },
          )
        ).metadata.uid!;
      const uids = [
        await create('ready', { driveCores: 1, numDrives: 2, driveCapacity: 1500 }),
        await create('pod-gone', { driveCores: 1, numDrives: 1, driveCapacity: 500 }),
      ];
      await waitForPhase({ namespace: ns, name: 'ready' }, 'Ready', 120_000);
      await waitForPhase({ namespace: ns, name: 'pod-gone' }, 'Ready', 120_000);
      // Waits for capacity (3840 GiB, 3500 taken), and one the operator refuses (8 drives a core at most).
      uids.push(await create('waiting', { driveCores: 1, numDrives: 1, driveCapacity: 1000 }));
      uids.push(await create('refused', { driveCores: 1, numDrives: 20, driveCapacity: 10 }));
      await eventually(
        'the waiting and refused containers to say so',
        async () => {
          const reasons = await Promise.all(
            ['waiting', 'refused'].map(
              async (name) =>
                (await readContainer({ namespace: ns, name }))?.status?.conditions?.find((c) => c.type === 'Allocated')
                  ?.reason,
            ),
          );
          return reasons[0] === 'InsufficientDriveCapacity' && reasons[1] === 'InvalidDriveSharingConfig'
            ? true
            : undefined;
        },
        60_000,
      );

      await core.deleteNamespacedPod({ namespace: ns, name: 'pod-gone', gracePeriodSeconds: 0 });
      await deleteNamespace(ns);

      // The replay fixture of a container that waited for capacity until it was deleted.
      await recordHistory(containerWorkflowId(uids[2]!), 'drive-container-waited-for-capacity');
      const ledger = ledgerOf(await core.readNode({ name: node }));
      for (const uid of uids) expect(ledger.containers[uid], `ledger entry of ${uid}`).toBeUndefined();
      const left = (await showDevice(node, DEVICES[0]!.path)).virtualDrives;
      expect(left).toEqual([]);
      expect(ledger.found).toEqual([]);
      // A Weka container of theirs still in the Weka cluster (its pod was gone, and no other
      // member's pod could take it out) is named in a Warning Event on the Node.
      const inCluster = (await clusterContainers(guid)).filter((c) => c.name.startsWith(`${ns}_`));
      const nodeEvents = await eventually('the Node Events', async () => {
        const events = await core.listNamespacedEvent({
          namespace: 'default',
          fieldSelector: `involvedObject.name=${node}`,
        });
        const said = events.items.filter((e) => e.reason === 'WekaContainerLeftBehind').map((e) => e.message ?? '');
        return inCluster.every((c) => said.some((m) => m.includes(c.name) || m.includes(String(c.containerId))))
          ? said
          : undefined;
      });
      expect(nodeEvents.length).toBeGreaterThanOrEqual(inCluster.length);
    },
  );

  it(
    "gives the ports of a container left in its Weka cluster to the node's next container, which joins on them",
    { timeout: 300_000 },
    async () => {
      const node = await sharedDrivesNode(DEVICES, 'ns-delete-ports');
      const guid = await createWekaCluster(node, uniqueName('ns-delete-ports'));
      const ns = await uniqueNamespace('ns-delete-ports');
      const spec = { nodeName: node, driveCores: 1, numDrives: 1, driveCapacity: 500 };
      await createContainerObject(kubeConfig(), { namespace: ns, name: 'left' }, spec, { clusterGUID: guid });
      const ports = (await waitForPhase({ namespace: ns, name: 'left' }, 'Ready', 120_000)).status?.allocations
        ?.wekaPort;
      // Its pod gone before the namespace: no member's pod can take its Weka container out.
      await core.deleteNamespacedPod({ namespace: ns, name: 'left', gracePeriodSeconds: 0 });
      await deleteNamespace(ns);
      const listed = (await clusterContainers(guid)).map((c) => c.name);
      expect(listed).toContain(`${ns}_left`);

      // Its process went with its pod, so its ports on the host are free: the ledger gives them again.
      const next = { namespace: await uniqueNamespace('ns-delete-ports'), name: 'next' };
      await createContainerObject(kubeConfig(), next, spec, { clusterGUID: guid });
      const ready = await eventually(
        `${next.name} Ready`,
        async () => {
          const c = await readContainer(next);
          if (c?.status?.phase === 'Error')
            throw new Error(`${next.name} failed: ${JSON.stringify(c.status.conditions)}`);
          return c?.status?.phase === 'Ready' ? c : undefined;
        },
        120_000,
      );
      expect(ready.status?.allocations?.wekaPort).toBe(ports);
    },
  );

  it(
    'takes a container whose pod is gone out of its Weka cluster from a member in another namespace',
    { timeout: 300_000 },
    async () => {
      const node = await sharedDrivesNode(DEVICES, 'ns-delete-peer');
      const guid = await createWekaCluster(node, uniqueName('ns-delete-peer'));
      const spec = { nodeName: node, driveCores: 1, numDrives: 1, driveCapacity: 500 };
      const peer = { namespace: await uniqueNamespace('ns-delete-peer'), name: 'peer' };
      const doomed = { namespace: await uniqueNamespace('ns-delete-peer'), name: 'doomed' };
      for (const ref of [peer, doomed]) {
        await createContainerObject(kubeConfig(), ref, spec, { clusterGUID: guid });
        await waitForPhase(ref, 'Ready', 120_000);
      }
      await core.deleteNamespacedPod({ ...doomed, gracePeriodSeconds: 0 });
      await deleteNamespace(doomed.namespace);
      const listed = (await clusterContainers(guid))
        .map((c) => c.name)
        .filter((n) => !n.startsWith(SIMULATED_BACKEND_PREFIX));
      // Weka lets a container go only once its drives are out.
      expect(listed).toEqual([`${peer.namespace}_${peer.name}`]);
      expect((await readContainer(peer))?.status?.phase).toBe('Ready');
    },
  );
});
