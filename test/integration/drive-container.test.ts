// The drive container's lifecycle on the real servers: proxy, pod, allocation, signing and adding
// through Kubernetes exec into the simulator, Ready; then deletion tears everything down.
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { proxyName } from '../../src/api/names.js';
import { eventually } from '../support/async.js';
import { kubeConfig, uniqueNamespace } from '../support/harness.js';
import {
  createDriveContainer,
  deleteDriveContainer,
  podExists,
  readContainer,
  sharedDrivesNode,
  useTestOperator,
  waitForPhase,
  waitGone,
} from '../support/operator.js';
import { changeCounts, createWekaCluster, showDevice, simulatorLog } from '../support/simulator.js';
import { eventsOf } from '../support/events.js';
import { activityTypes, localActivityTypes, recordHistory } from '../support/histories.js';
import { specChangedSignal, stateQuery, nodeMutexId } from '../../src/protocol.js';

const op = useTestOperator();

const TLC_QLC = [
  { path: '/dev/nvme0n1', capacityGiB: 7680, type: 'TLC' as const },
  { path: '/dev/nvme1n1', capacityGiB: 7680, type: 'TLC' as const },
  { path: '/dev/nvme2n1', capacityGiB: 15360, type: 'QLC' as const },
];

describe('drive container workflow', () => {
  it('brings a standalone container to Ready and tears it down on deletion', async () => {
    const node = await sharedDrivesNode(TLC_QLC);
    const guid = await createWekaCluster(node, 'standalone-a');
    const ns = await uniqueNamespace('drive');
    const ref = { namespace: ns, name: 'drive-0' };
    const { uid, handle } = await createDriveContainer(
      op,
      ref,
      { nodeName: node, driveCores: 2, containerCapacity: 6000, driveTypesRatio: { tlc: 1, qlc: 1 } },
      guid,
    );

    const ready = await waitForPhase(ref, 'Ready');
    const drives = ready.status?.allocations?.virtualDrives ?? [];
    expect(drives.reduce((s, d) => s + d.capacityGiB, 0)).toBe(6000);
    expect(new Set(drives.map((d) => d.type))).toEqual(new Set(['TLC', 'QLC']));
    expect([...(ready.status?.addedVirtualDrives ?? [])].sort()).toEqual(drives.map((d) => d.virtualUUID).sort());
    expect(ready.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(await podExists(op.operatorNamespace, proxyName(node))).toBe(true);
    expect(await podExists(ns, 'drive-0')).toBe(true);
    const view = await handle.query(stateQuery);
    expect(view.phase).toBe('Ready');
    // The status says which run wrote it, and where in the run, so that a late write of an earlier
    // workflow task is refused (stale-status-writes.test.ts).
    const { runId } = await handle.describe();
    expect(ready.status?.writtenBy).toMatchObject({ run: runId, sequence: expect.any(Number) });
    expect(ready.status?.writtenBy?.historyLength).toBeGreaterThan(5);

    // One status apply per step the user sees: pending at the proxy, allocating, starting the pod,
    // waiting for the cluster, joining it, then adding each drive, the last one with Ready. The
    // Events go out with the apply that shows their condition, not in a call of their own, and
    // name the object by its uid.
    const history = await handle.fetchHistory();
    const local = localActivityTypes(history);
    expect(local.filter((t) => t === 'writeStatus').length).toBeLessThanOrEqual(5 + drives.length + 1);
    expect(local).not.toContain('recordEvent');
    const events = await eventsOf(ref);
    for (const reason of ['Allocated', 'DrivesAdded']) {
      expect(events.find((e) => e.reason === reason)?.involvedObject.uid).toBe(uid);
    }
    // One activity makes the pod and waits for it to run.
    expect(activityTypes(history).filter((t) => /Pod/.test(t))).toEqual(['startContainerPod']);

    // Every virtual drive is on its device, signed for this cluster, exactly once.
    const log = await simulatorLog(node);
    const adds = changeCounts(log, 'virtual-add', 'virtualUUID');
    const driveAdds = changeCounts(log, 'drive-add', 'virtualUUID');
    for (const d of drives) {
      expect(adds.get(d.virtualUUID)).toBe(1);
      expect(driveAdds.get(d.virtualUUID)).toBe(1);
    }

    await deleteDriveContainer(op, ref, uid);
    await waitGone(ref);
    await handle.result();
    await recordHistory(handle.workflowId, 'drive-container-standalone');
    await recordHistory(nodeMutexId(node), 'node-mutex-one-container');
    for (const device of TLC_QLC) expect((await showDevice(node, device.path)).virtualDrives).toEqual([]);
    const after = await simulatorLog(node);
    for (const d of drives) {
      expect(changeCounts(after, 'virtual-remove', 'virtualUUID').get(d.virtualUUID)).toBe(1);
      expect(changeCounts(after, 'drive-remove', 'virtualUUID').get(d.virtualUUID)).toBe(1);
    }
    // It was the last drive-sharing container on the node: the proxy goes too.
    expect(await podExists(ns, 'drive-0')).toBe(false);
    expect(await podExists(op.operatorNamespace, proxyName(node))).toBe(false);
    expect(await readContainer({ namespace: op.operatorNamespace, name: proxyName(node) })).toBeNull();
  });

  it('shares one node between containers of two clusters and keeps the proxy until the last one goes', async () => {
    const node = await sharedDrivesNode(TLC_QLC);
    const guidA = await createWekaCluster(node, 'tenant-a');
    const guidB = await createWekaCluster(node, 'tenant-b');
    const nsA = await uniqueNamespace('tenant-a');
    const nsB = await uniqueNamespace('tenant-b');
    const a = { namespace: nsA, name: 'drive' };
    const b = { namespace: nsB, name: 'drive' };
    const spec = { nodeName: node, driveCores: 2, numDrives: 2, driveCapacity: 1500 };
    const [ca, cb] = await Promise.all([
      createDriveContainer(op, a, spec, guidA),
      createDriveContainer(op, b, spec, guidB),
    ]);
    const [ra, rb] = await Promise.all([waitForPhase(a, 'Ready'), waitForPhase(b, 'Ready')]);

    // Both live on the TLC drives (numDrives x driveCapacity is TLC only), without over-commit.
    const all = [...(ra.status?.allocations?.virtualDrives ?? []), ...(rb.status?.allocations?.virtualDrives ?? [])];
    expect(all).toHaveLength(4);
    expect(all.every((d) => d.type === 'TLC' && d.capacityGiB === 1500)).toBe(true);
    for (const device of TLC_QLC.filter((d) => d.type === 'TLC')) {
      const info = await showDevice(node, device.path);
      expect(info.virtualDrives.reduce((s, v) => s + v.sizeGiB, 0)).toBeLessThanOrEqual(info.capacityGiB);
      for (const v of info.virtualDrives) expect([guidA, guidB]).toContain(v.ownerClusterGUID);
    }

    await deleteDriveContainer(op, a, ca.uid);
    await waitGone(a);
    expect(await podExists(op.operatorNamespace, proxyName(node))).toBe(true);
    expect((await readContainer(b))?.status?.phase).toBe('Ready');

    await deleteDriveContainer(op, b, cb.uid);
    await waitGone(b);
    expect(await podExists(op.operatorNamespace, proxyName(node))).toBe(false);
  });

  it('shows an invalid spec on the container and proceeds once the spec is fixed', async () => {
    const node = await sharedDrivesNode(TLC_QLC);
    const guid = await createWekaCluster(node, 'fix-me');
    const ns = await uniqueNamespace('invalid');
    const ref = { namespace: ns, name: 'no-cores' };
    const { uid, handle } = await createDriveContainer(
      op,
      ref,
      { nodeName: node, containerCapacity: 2000, driveTypesRatio: { tlc: 1, qlc: 0 } },
      guid,
    );

    const refused = await eventually('the refusal on the container', async () => {
      const c = await readContainer(ref);
      const cond = c?.status?.conditions?.find((x) => x.type === 'Allocated');
      return cond?.status === 'False' ? cond : undefined;
    });
    expect(refused.reason).toBe('InvalidDriveSharingConfig');
    expect(refused.message).toMatch(/driveCores/);
    // The Event follows the condition (same step, written right after it).
    await eventually('a Warning Event about the invalid spec', async () => {
      const events = await kubeConfig().makeApiClient(CoreV1Api).listNamespacedEvent({ namespace: ns });
      return events.items.some(
        (e) => e.involvedObject.name === 'no-cores' && e.type === 'Warning' && e.reason === 'InvalidDriveSharingConfig',
      )
        ? true
        : undefined;
    });

    // driveCores was never set, so setting it is allowed; the watcher would signal the change.
    await kubeConfig()
      .makeApiClient(CustomObjectsApi)
      .patchNamespacedCustomObject(
        {
          group: 'weka.weka.io',
          version: 'v1alpha1',
          plural: 'wekacontainers',
          ...ref,
          body: { spec: { driveCores: 2 } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    await handle.signal(specChangedSignal);
    const ready = await waitForPhase(ref, 'Ready');
    expect(ready.status?.allocations?.virtualDrives?.length).toBeGreaterThanOrEqual(2);
    await deleteDriveContainer(op, ref, uid);
    await waitGone(ref);
    await handle.result();
    await recordHistory(handle.workflowId, 'drive-container-spec-fixed');
  });
});
