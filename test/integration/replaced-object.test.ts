// GitOps deletes an object and creates it again under the same name; when the first one's
// finalizer was removed by hand, its workflow can still be running. Told to tear down, that
// workflow frees what its own uid holds on the node and never touches the new object: not its
// drives, allocation, pod or finalizer.
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerOf } from '../../activities/kube/node-ledger.js';
import { FINALIZER } from '../../src/api/names.js';
import { deleteRequestedSignal } from '../../src/protocol.js';
import { WEKA_CONTAINERS } from '../support/containers.js';
import { kubeConfig, uniqueNamespace } from '../support/harness.js';
import {
  createDriveContainer,
  deleteDriveContainer,
  readContainer,
  sharedDrivesNode,
  startTestOperator,
  waitForPhase,
  waitGone,
  type TestOperator,
} from '../support/operator.js';
import { changeCounts, createWekaCluster, simulatorLog } from '../support/simulator.js';

let op: TestOperator;
beforeAll(async () => {
  op = await startTestOperator();
});
afterAll(async () => {
  await op?.stop();
});

const DEVICES = [{ path: '/dev/nvme0n1', capacityGiB: 7680, type: 'TLC' as const }];
const SPEC = { driveCores: 1, numDrives: 1, driveCapacity: 1000 };

describe('a workflow whose object was replaced', () => {
  it(
    'frees its own drives and allocation without touching the new object of the same name',
    { timeout: 240_000 },
    async () => {
      const node = await sharedDrivesNode(DEVICES, 'replaced');
      const guid = await createWekaCluster(node, 'replaced');
      const ref = { namespace: await uniqueNamespace('replaced'), name: 'drive-0' };
      const custom = kubeConfig().makeApiClient(CustomObjectsApi);

      const old = await createDriveContainer(op, ref, { ...SPEC, nodeName: node }, guid);
      const oldDrives = (await waitForPhase(ref, 'Ready')).status!.allocations!.virtualDrives!.map(
        (d) => d.virtualUUID,
      );
      // Someone removes the finalizer by hand and deletes the object; GitOps creates it again.
      await custom.patchNamespacedCustomObject(
        { ...WEKA_CONTAINERS, ...ref, body: { metadata: { finalizers: null } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      await custom.deleteNamespacedCustomObject({ ...WEKA_CONTAINERS, ...ref });
      await waitGone(ref);
      const renewed = await createDriveContainer(op, ref, { ...SPEC, nodeName: node }, guid);
      const ready = await waitForPhase(ref, 'Ready');
      expect(ready.metadata.uid).toBe(renewed.uid);
      const drives = ready.status!.allocations!.virtualDrives!.map((d) => d.virtualUUID);
      const pod = await kubeConfig()
        .makeApiClient(CoreV1Api)
        .readNamespacedPod({ ...ref });

      // The old workflow is told to tear down (a late watcher, a stray signal).
      await op.client.workflow.getHandle(old.handle.workflowId).signal(deleteRequestedSignal);
      await old.handle.result();

      const now = await readContainer(ref);
      expect(now?.metadata.uid).toBe(renewed.uid);
      expect(now?.metadata.finalizers).toContain(FINALIZER);
      expect(now?.status?.phase).toBe('Ready');
      expect(now?.status?.allocations?.virtualDrives?.map((d) => d.virtualUUID)).toEqual(drives);
      const podNow = await kubeConfig()
        .makeApiClient(CoreV1Api)
        .readNamespacedPod({ ...ref });
      expect(podNow.metadata?.uid).toBe(pod.metadata?.uid);
      expect(podNow.metadata?.deletionTimestamp).toBeUndefined();
      const removed = changeCounts(await simulatorLog(node), 'virtual-remove', 'virtualUUID');
      for (const d of drives) expect(removed.get(d)).toBeUndefined();
      for (const d of oldDrives) expect(removed.get(d)).toBe(1);
      const ledger = ledgerOf(await kubeConfig().makeApiClient(CoreV1Api).readNode({ name: node }));
      expect(Object.keys(ledger.containers)).toEqual([renewed.uid]);

      await deleteDriveContainer(op, ref, renewed.uid);
      await waitGone(ref);
    },
  );
});
