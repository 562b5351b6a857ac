// A Node deleted and registered again under the same name (a replaced VM, `kubectl delete node`
// and a kubelet that registers again) comes back without the operator's annotations: its
// allocation ledger is gone, while its drive containers still hold their virtual drives on its
// devices. Here a provisioning tool puts the shared-drives annotation back, and a container then
// grows: the node's mutex must rebuild the ledger from the devices and the statuses before it
// decides anything, so the container keeps the drives it has and no GiB is given twice.
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { decodeSharedDrivesAnnotation, SHARED_DRIVES_ANNOTATION } from '../../src/annotations/index.js';
import { FINALIZER, proxyName } from '../../src/api/names.js';
import type { WekaContainer } from '../../src/api/index.js';
import { ALLOCATIONS_ANNOTATION } from '../../src/node/allocation-ledger.js';
import { changeLedger, readLedger } from '../support/ledger.js';
import { mutexStateQuery, nodeMutexId, specChangedSignal } from '../../src/protocol.js';
import { sendMutexRequest } from '../../activities/requester.js';
import { ledgerRebuildRequest } from '../../deploy/operator/watcher/node-watch.js';
import { eventually } from '../support/async.js';
import { createContainerObject, WEKA_CONTAINERS } from '../support/containers.js';
import { kubeConfig, uniqueName, uniqueNamespace } from '../support/harness.js';
import {
  createDriveContainer,
  deleteDriveContainer,
  readContainer,
  sharedDrivesNode,
  startTestWatcher,
  useTestOperator,
  waitForPhase,
  waitGone,
} from '../support/operator.js';
import { createWekaCluster, showDevice } from '../support/simulator.js';

const DEVICE = { path: '/dev/nvme0n1', capacityGiB: 3840, type: 'TLC' as const };

const op = useTestOperator();

const core = () => kubeConfig().makeApiClient(CoreV1Api);
const drivesOf = (c: WekaContainer | null) => c?.status?.allocations?.virtualDrives ?? [];
const gibOf = (c: WekaContainer | null) => drivesOf(c).reduce((sum, d) => sum + d.capacityGiB, 0);

/** Deletes the Node object and registers it again under its name, with only `annotations` of its own. */
async function registerAgain(node: string, annotations: Record<string, string>): Promise<void> {
  const old = await core().readNode({ name: node });
  await core().deleteNode({ name: node });
  await eventually(`node ${node} to be gone`, async () =>
    (await core()
      .readNode({ name: node })
      .then(() => false)
      .catch(() => true))
      ? true
      : undefined,
  );
  await core().createNode({
    body: {
      metadata: {
        name: node,
        labels: old.metadata?.labels ?? {},
        annotations: { 'kwok.x-k8s.io/node': 'fake', ...annotations },
      },
    },
  });
  await eventually(`node ${node} to be Ready again`, async () => {
    const n = await core().readNode({ name: node });
    return n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? n : undefined;
  });
}

describe('a Node registered again under the same name', () => {
  it('gets its ledger back from the devices before its mutex decides, so a container there keeps its drives', async () => {
    const node = await sharedDrivesNode([DEVICE], 'reregistered');
    const guid = await createWekaCluster(node, uniqueName('reregistered'));
    const ref = { namespace: await uniqueNamespace('reregistered'), name: 'drive-0' };
    const spec = { nodeName: node, driveCores: 1, containerCapacity: 1000, driveTypesRatio: { tlc: 1, qlc: 0 } };
    const { uid, handle } = await createDriveContainer(op, ref, spec, guid);
    const before = drivesOf(await waitForPhase(ref, 'Ready', 120_000));
    const shared = (await core().readNode({ name: node })).metadata?.annotations?.[SHARED_DRIVES_ANNOTATION] ?? '';

    await registerAgain(node, { [SHARED_DRIVES_ANNOTATION]: shared });
    expect((await core().readNode({ name: node })).metadata?.annotations?.[ALLOCATIONS_ANNOTATION]).toBeUndefined();
    await kubeConfig()
      .makeApiClient(CustomObjectsApi)
      .patchNamespacedCustomObject(
        { ...WEKA_CONTAINERS, ...ref, body: { spec: { containerCapacity: 1500 } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    await handle.signal(specChangedSignal);

    const grown = await eventually(
      `${ref.name} Ready with 1500 GiB, every drive added`,
      async () => {
        const c = await readContainer(ref);
        const added = new Set(c?.status?.addedVirtualDrives ?? []);
        const all = drivesOf(c).every((d) => added.has(d.virtualUUID));
        return c?.status?.phase === 'Ready' && gibOf(c) === 1500 && all ? c : undefined;
      },
      120_000,
      { progress: async () => JSON.stringify((await readContainer(ref))?.status ?? {}) },
    );
    // The drives it had, kept as they were, and one more beside them.
    expect(drivesOf(grown).slice(0, before.length)).toEqual(before);
    const ledger = await readLedger(node);
    expect(ledger.containers[uid]?.allocation.virtualDrives.map((d) => d.virtualUUID)).toEqual(
      drivesOf(grown).map((d) => d.virtualUUID),
    );
    expect(ledger.found).toEqual([]);
    const onDevice = (await showDevice(node, DEVICE.path)).virtualDrives;
    expect(onDevice.map((v) => v.virtualUUID).sort()).toEqual(
      drivesOf(grown)
        .map((d) => d.virtualUUID)
        .sort(),
    );
  });

  it('has its ledger rebuilt from the devices and the statuses on its own, before any decision needs it', async () => {
    const node = await sharedDrivesNode([DEVICE], 'reregistered-idle');
    const guid = await createWekaCluster(node, uniqueName('reregistered-idle'));
    const ref = { namespace: await uniqueNamespace('reregistered-idle'), name: 'drive-0' };
    const spec = { nodeName: node, driveCores: 1, containerCapacity: 1000, driveTypesRatio: { tlc: 1, qlc: 0 } };
    const { uid } = await createDriveContainer(op, ref, spec, guid);
    const held = drivesOf(await waitForPhase(ref, 'Ready', 120_000)).map((d) => d.virtualUUID);
    const shared = (await core().readNode({ name: node })).metadata?.annotations?.[SHARED_DRIVES_ANNOTATION] ?? '';

    // Kubernetes' garbage collector is slow to delete the proxy pod the old Node owned (it was, after
    // an etcd restart): here it never does. Nothing about the container changes either, so no
    // decision on the node asks for the ledger; the operator's watcher sees the Node come back.
    await core().patchNamespacedPod(
      { namespace: op.operatorNamespace, name: proxyName(node), body: { metadata: { ownerReferences: null } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const watcher = startTestWatcher(op);
    await watcher.ready;
    await registerAgain(node, { [SHARED_DRIVES_ANNOTATION]: shared });
    await eventually(
      `node ${node}'s ledger to hold ${ref.name}'s drives again`,
      async () => {
        const annotation = (await core().readNode({ name: node })).metadata?.annotations?.[ALLOCATIONS_ANNOTATION];
        if (annotation === undefined) return undefined;
        const ledger = await readLedger(node);
        const drives = ledger.containers[uid]?.allocation.virtualDrives.map((d) => d.virtualUUID);
        return JSON.stringify(drives) === JSON.stringify(held) ? ledger : undefined;
      },
      45_000,
    ).finally(() => watcher.stop());
    // Its pod went with the old Node; made again, it is Ready on the drives it had.
    const again = await waitForPhase(ref, 'Ready', 120_000);
    expect(drivesOf(again).map((d) => d.virtualUUID)).toEqual(held);
  });

  it('lets go of the drives a ledger counts as found for a container when its teardown removed them', async () => {
    const node = await sharedDrivesNode([DEVICE], 'reregistered-found');
    const guid = await createWekaCluster(node, uniqueName('reregistered-found'));
    const ref = { namespace: await uniqueNamespace('reregistered-found'), name: 'drive-0' };
    const spec = { nodeName: node, driveCores: 1, containerCapacity: 1000, driveTypesRatio: { tlc: 1, qlc: 0 } };
    const { uid } = await createDriveContainer(op, ref, spec, guid);
    const drives = drivesOf(await waitForPhase(ref, 'Ready', 120_000));
    // As a rebuild leaves a container it could not prove whole (caught mid-signing): no entry, its
    // signed drives counted as found.
    await changeLedger(node, (ledger) => {
      const { [uid]: _, ...containers } = ledger.containers;
      const found = drives.map(({ virtualUUID, physicalUUID, capacityGiB }) => ({
        virtualUUID,
        physicalUUID,
        capacityGiB,
        ownerClusterGUID: guid,
      }));
      return { containers, found };
    });

    await deleteDriveContainer(op, ref, uid);
    await waitGone(ref, 120_000);
    expect((await showDevice(node, DEVICE.path)).virtualDrives).toEqual([]);
    expect(await readLedger(node)).toEqual({ containers: {}, found: [] });
  });

  it('keeps counting the allocation of a container being deleted that its release has not let go of yet', async () => {
    const node = await sharedDrivesNode([DEVICE], 'reregistered-deleting');
    const guid = await createWekaCluster(node, uniqueName('reregistered-deleting'));
    const shared = (await core().readNode({ name: node })).metadata?.annotations?.[SHARED_DRIVES_ANNOTATION] ?? '';
    const decoded = decodeSharedDrivesAnnotation(shared);
    if (!decoded.ok) throw new Error(decoded.error.message);
    const drive = decoded.drives[0]!;
    // Allocated 3000 GiB and deleted before it signed anything: its teardown has not released it
    // (no workflow runs it here), so its status and the ledger both still show the allocation.
    const held = { namespace: await uniqueNamespace('reregistered-deleting'), name: 'held' };
    const created = await createContainerObject(
      kubeConfig(),
      held,
      { nodeName: node, driveCores: 1, containerCapacity: 3000, driveTypesRatio: { tlc: 1, qlc: 0 } },
      { finalizers: [FINALIZER], clusterGUID: guid },
    );
    const uid = created.metadata.uid!;
    const allocation = {
      virtualDrives: [
        {
          virtualUUID: crypto.randomUUID(),
          physicalUUID: drive.physicalUUID,
          capacityGiB: 3000,
          serial: drive.serial,
          type: 'TLC' as const,
        },
      ],
      wekaPort: 14000,
      agentPort: 14100,
    };
    await changeLedger(node, (ledger) => ({
      ...ledger,
      containers: { ...ledger.containers, [uid]: { container: `${held.namespace}/${held.name}`, allocation } },
    }));
    await kubeConfig()
      .makeApiClient(CustomObjectsApi)
      .patchNamespacedCustomObjectStatus(
        { ...WEKA_CONTAINERS, ...held, body: { status: { allocations: { ...allocation, virtualDriveCount: 1 } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    await kubeConfig()
      .makeApiClient(CustomObjectsApi)
      .deleteNamespacedCustomObject({ ...WEKA_CONTAINERS, ...held });

    await registerAgain(node, { [SHARED_DRIVES_ANNOTATION]: shared });
    const next = { namespace: await uniqueNamespace('reregistered-deleting'), name: 'next' };
    const spec = { nodeName: node, driveCores: 1, containerCapacity: 1000, driveTypesRatio: { tlc: 1, qlc: 0 } };
    await createDriveContainer(op, next, spec, guid);
    const waiting = await eventually(
      `${next.name} to wait for capacity or be given some`,
      async () => {
        const c = await readContainer(next);
        const reason = c?.status?.conditions?.find((x) => x.type === 'Allocated')?.reason;
        return reason === 'InsufficientDriveCapacity' || gibOf(c) > 0 ? c : undefined;
      },
      120_000,
    );
    expect(gibOf(waiting)).toBe(0);
    expect((await readLedger(node)).containers[uid]?.allocation.virtualDrives).toEqual(allocation.virtualDrives);
    await kubeConfig()
      .makeApiClient(CustomObjectsApi)
      .patchNamespacedCustomObject(
        { ...WEKA_CONTAINERS, ...held, body: { metadata: { finalizers: [] } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
  });
});

describe("a ledger rebuild the node's mutex runs after the node's last container went", () => {
  it('makes no ssdproxy for nobody: the node is left as its last teardown left it', async () => {
    const node = await sharedDrivesNode([DEVICE], 'rebuild-late');
    // The watcher asked for the rebuild while a container there still held its allocation; its
    // teardown then ended and removed the proxy before the mutex came to the request.
    const request = ledgerRebuildRequest(node, (await core().readNode({ name: node })).metadata!.uid!);
    await sendMutexRequest(op.client, op.deps.taskQueue, { mutexId: nodeMutexId(node), node, request });
    const mutex = op.client.workflow.getHandle(nodeMutexId(node));
    await eventually('the mutex to run the request', async () => {
      const state = await mutex.query(mutexStateQuery).catch(() => undefined);
      return state && state.executed >= 1 && state.queue.length + state.running.length === 0 ? true : undefined;
    });
    const proxy = await kubeConfig()
      .makeApiClient(CustomObjectsApi)
      .getNamespacedCustomObject({ ...WEKA_CONTAINERS, namespace: op.deps.operatorNamespace, name: proxyName(node) })
      .then(
        () => 'made',
        (err: { code?: number }) => (err.code === 404 ? 'none' : Promise.reject(err)),
      );
    expect(proxy).toBe('none');
    const pods = await core().listNamespacedPod({ namespace: op.deps.operatorNamespace });
    expect(pods.items.map((p) => p.metadata?.name)).not.toContain(proxyName(node));
  });
});
