// Pods that fail come back: an ssdproxy pod or a drive container's pod in phase Failed (evicted, its
// node rebooted) is replaced by a new pod, and a pod that is being deleted is waited out and
// created again, on the real servers.
//
// How a pod is made Failed here: the way the issue reproduced it, by patching the pod's status
// subresource to phase Failed, reason Evicted. kwok (deploy/local/kwok/stages.yaml) only moves pods
// in phase Pending to Running, and deletes pods that have a deletionTimestamp, so a Failed phase
// sticks; the test checks that it does before going on. A pod being deleted is made by giving it a
// finalizer of the test's own and deleting it: kwok's delete cannot remove it until the test takes
// the finalizer away.
import { CoreV1Api, PatchStrategy, setHeaderOptions, Watch, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FINALIZER, proxyName, refText, type ObjectRef } from '../../src/api/names.js';
import { wekaPod } from '../../src/manifests/pods.js';
import { containerWorkflowId, WORKFLOW, type LifecycleWorkflow } from '../../src/protocol.js';
import { eventually, sleep } from '../support/async.js';
import { readPod } from '../support/pods.js';
import { createContainerObject, patchContainerSpec, TEST_IMAGE } from '../support/containers.js';
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
import { changeCounts, createWekaCluster, joinIpsOf, showDevice, simulatorLog } from '../support/simulator.js';
import { specChangedSignal } from '../../src/protocol.js';

const DEVICES = [
  { path: '/dev/nvme0n1', capacityGiB: 3840, type: 'TLC' as const },
  { path: '/dev/nvme1n1', capacityGiB: 3840, type: 'TLC' as const },
];
const SPEC = { driveCores: 1, numDrives: 1, driveCapacity: 500 };
/** A test's own finalizer, which holds a deleted pod in its deletion until the test removes it. */
const HOLD = 'test.weka.io/hold';

let op: TestOperator;
let core: CoreV1Api;
beforeAll(async () => {
  op = await startTestOperator();
  core = kubeConfig().makeApiClient(CoreV1Api);
});
afterAll(async () => {
  await op?.stop();
});

async function waitPodRunning(namespace: string, name: string): Promise<V1Pod> {
  return eventually(`pod ${namespace}/${name} to run`, async () => {
    const pod = await readPod(namespace, name);
    return pod?.status?.phase === 'Running' && !pod.metadata?.deletionTimestamp ? pod : undefined;
  });
}

/**
 * Marks a running pod Failed as an eviction does (the status subresource: phase Failed, reason
 * Evicted), and checks that it stays so: nothing on the node brings it back.
 */
async function evict(namespace: string, name: string): Promise<string> {
  const pod = await waitPodRunning(namespace, name);
  await core.patchNamespacedPodStatus(
    {
      namespace,
      name,
      body: {
        status: {
          phase: 'Failed',
          reason: 'Evicted',
          message: 'The node was low on resource: ephemeral-storage.',
        },
      },
    },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
  await sleep(1_000);
  const after = await readPod(namespace, name);
  expect(after?.metadata?.uid).toBe(pod.metadata?.uid);
  expect(after?.status?.phase).toBe('Failed');
  return pod.metadata!.uid!;
}

/** The container's pod, as the operator creates it, created ahead of the operator. */
async function createContainerPod(ref: ObjectRef, node: string, finalizers: string[] = []): Promise<string> {
  const manifest = wekaPod({
    name: ref.name,
    namespace: ref.namespace,
    node,
    image: TEST_IMAGE,
    role: 'drive',
    owner: refText(ref),
  });
  const created = await core.createNamespacedPod({
    namespace: ref.namespace,
    body: { ...manifest, metadata: { ...manifest.metadata, finalizers } } as V1Pod,
  });
  await waitPodRunning(ref.namespace, ref.name);
  return created.metadata!.uid!;
}

/** A drive container object with the operator's finalizer and its standalone cluster's GUID; no workflow yet. */
async function createContainerOnly(ref: ObjectRef, node: string, guid: string): Promise<string> {
  const created = await createContainerObject(
    kubeConfig(),
    ref,
    { nodeName: node, ...SPEC },
    { finalizers: [FINALIZER], clusterGUID: guid },
  );
  return created.metadata!.uid!;
}

async function startWorkflow(ref: ObjectRef, uid: string) {
  return op.client.workflow.start<LifecycleWorkflow>(WORKFLOW.driveContainer, {
    taskQueue: op.deps.taskQueue,
    workflowId: containerWorkflowId(uid),
    args: [{ ...ref, uid }],
  });
}

/** Deletes the container and checks that its virtual drives left their devices and its pod went. */
async function deleteAndCheck(node: string, ref: ObjectRef, uid: string): Promise<void> {
  const drives = (await readContainer(ref))?.status?.allocations?.virtualDrives ?? [];
  expect(drives.length).toBeGreaterThan(0);
  await deleteDriveContainer(op, ref, uid);
  await waitGone(ref);
  for (const device of DEVICES) {
    const left = (await showDevice(node, device.path)).virtualDrives.map((v) => v.virtualUUID);
    for (const drive of drives) expect(left).not.toContain(drive.virtualUUID);
  }
  expect(await readPod(ref.namespace, ref.name)).toBeNull();
}

describe('failed pods', () => {
  it('replaces an evicted ssdproxy pod: a new container on its node becomes Ready', async () => {
    const node = await sharedDrivesNode(DEVICES, 'evicted-proxy');
    const guid = await createWekaCluster(node, 'evicted-proxy');
    const ns = await uniqueNamespace('evicted-proxy');
    const first = { namespace: ns, name: 'first' };
    const a = await createDriveContainer(op, first, { nodeName: node, ...SPEC }, guid);
    await waitForPhase(first, 'Ready');

    const proxy = proxyName(node);
    const evictedUid = await evict(op.operatorNamespace, proxy);

    const second = { namespace: ns, name: 'second' };
    const b = await createDriveContainer(op, second, { nodeName: node, ...SPEC }, guid);
    const ready = await waitForPhase(second, 'Ready', 45_000);
    expect(ready.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    const now = await readPod(op.operatorNamespace, proxy);
    expect(now?.metadata?.uid).not.toBe(evictedUid);
    expect(now?.status?.phase).toBe('Running');

    await deleteAndCheck(node, first, a.uid);
    await deleteAndCheck(node, second, b.uid);
    expect(await readPod(op.operatorNamespace, proxy)).toBeNull();
  });

  it('gives a container whose pod failed before its bring-up a fresh pod', async () => {
    const node = await sharedDrivesNode(DEVICES, 'evicted-drive');
    const guid = await createWekaCluster(node, 'evicted-drive');
    const ns = await uniqueNamespace('evicted-drive');
    const ref = { namespace: ns, name: 'drive' };
    const uid = await createContainerOnly(ref, node, guid);
    await createContainerPod(ref, node);
    const evictedUid = await evict(ns, ref.name);

    await startWorkflow(ref, uid);
    const ready = await waitForPhase(ref, 'Ready', 45_000);
    expect(ready.status?.addedVirtualDrives).toHaveLength(1);
    const pod = await readPod(ns, ref.name);
    expect(pod?.metadata?.uid).not.toBe(evictedUid);
    expect(pod?.status?.phase).toBe('Running');

    await deleteAndCheck(node, ref, uid);
  });

  it('tears down a Ready container whose pod was evicted: the teardown runs in a fresh pod', async () => {
    const node = await sharedDrivesNode(DEVICES, 'evicted-ready');
    const guid = await createWekaCluster(node, 'evicted-ready');
    const ns = await uniqueNamespace('evicted-ready');
    const ref = { namespace: ns, name: 'drive' };
    const { uid } = await createDriveContainer(op, ref, { nodeName: node, ...SPEC }, guid);
    const ready = await waitForPhase(ref, 'Ready');
    const [drive] = ready.status?.allocations?.virtualDrives ?? [];
    await evict(ns, ref.name);

    await deleteDriveContainer(op, ref, uid);
    await waitGone(ref, 45_000);
    // The virtual drive was removed from the cluster and its device, once each.
    const log = await simulatorLog(node);
    expect(changeCounts(log, 'drive-remove', 'virtualUUID').get(drive!.virtualUUID)).toBe(1);
    expect(changeCounts(log, 'virtual-remove', 'virtualUUID').get(drive!.virtualUUID)).toBe(1);
    for (const device of DEVICES) expect((await showDevice(node, device.path)).virtualDrives).toEqual([]);
    expect(await readPod(ns, ref.name)).toBeNull();
  });

  it('waits out a pod that is being deleted, then creates it again', async () => {
    const node = await sharedDrivesNode(DEVICES, 'deleting-pod');
    const guid = await createWekaCluster(node, 'deleting-pod');
    const ns = await uniqueNamespace('deleting-pod');
    const ref = { namespace: ns, name: 'drive' };
    const uid = await createContainerOnly(ref, node, guid);
    const oldUid = await createContainerPod(ref, node, [HOLD]);
    await core.deleteNamespacedPod({ namespace: ns, name: ref.name });
    await sleep(1_000);
    const deleting = await readPod(ns, ref.name);
    expect(deleting?.metadata?.uid).toBe(oldUid);
    expect(deleting?.metadata?.deletionTimestamp).toBeDefined();

    await startWorkflow(ref, uid);
    // The pod is held in its deletion: the container must not get past its pod meanwhile.
    await sleep(5_000);
    expect((await readContainer(ref))?.status?.phase).toBe('Pending');
    await core.patchNamespacedPod(
      { namespace: ns, name: ref.name, body: { metadata: { finalizers: null } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );

    const ready = await waitForPhase(ref, 'Ready', 45_000);
    expect(ready.status?.addedVirtualDrives).toHaveLength(1);
    const pod = await readPod(ns, ref.name);
    expect(pod?.metadata?.uid).not.toBe(oldUid);
    expect(pod?.metadata?.deletionTimestamp).toBeUndefined();
    expect(pod?.status?.phase).toBe('Running');

    await deleteAndCheck(node, ref, uid);
  });

  it('makes the pod again when it is deleted while its container waits for it to run', async () => {
    const node = await sharedDrivesNode(DEVICES, 'vanished-pod');
    const guid = await createWekaCluster(node, 'vanished-pod');
    const ns = await uniqueNamespace('vanished-pod');
    const ref = { namespace: ns, name: 'drive' };
    // Someone (a person, a controller) deletes the pod the moment the operator makes it.
    let deletedUid: string | undefined;
    const watch = await new Watch(kubeConfig()).watch(
      `/api/v1/namespaces/${ns}/pods`,
      {},
      (type: string, pod: V1Pod) => {
        if (type !== 'ADDED' || pod.metadata?.name !== ref.name || deletedUid) return;
        deletedUid = pod.metadata.uid;
        void core.deleteNamespacedPod({ namespace: ns, name: ref.name, gracePeriodSeconds: 0 }).catch(() => undefined);
      },
      () => undefined,
    );
    try {
      const { uid } = await createDriveContainer(op, ref, { nodeName: node, ...SPEC }, guid);
      const ready = await waitForPhase(ref, 'Ready', 45_000);
      expect(deletedUid).toBeDefined();
      expect(ready.status?.addedVirtualDrives).toHaveLength(1);
      const pod = await readPod(ns, ref.name);
      expect(pod?.metadata?.uid).not.toBe(deletedUid);
      expect(pod?.status?.phase).toBe('Running');
      await deleteAndCheck(node, ref, uid);
    } finally {
      watch.abort();
    }
  });
});

describe('a pod deleted after it ran', () => {
  it('is made again when it is gone before the container joined its cluster', async () => {
    const node = await sharedDrivesNode(DEVICES, 'ran-then-gone');
    const guid = await createWekaCluster(node, 'ran-then-gone');
    const ns = await uniqueNamespace('ran-then-gone');
    const ref = { namespace: ns, name: 'drive' };
    // Without spec.joinIps the container waits, its pod running, before its first Weka command.
    const { uid, handle } = await createDriveContainer(op, ref, { nodeName: node, ...SPEC });
    await waitForPhase(ref, 'WaitingForCluster');
    const ran = await waitPodRunning(ns, ref.name);
    await core.deleteNamespacedPod({ namespace: ns, name: ref.name, gracePeriodSeconds: 0 });
    await eventually('the pod gone', async () => ((await readPod(ns, ref.name)) === null ? true : undefined));

    await patchContainerSpec(kubeConfig(), ref, { joinIps: await joinIpsOf(guid) });
    await handle.signal(specChangedSignal);
    const ready = await waitForPhase(ref, 'Ready', 60_000);
    expect(ready.status?.addedVirtualDrives).toHaveLength(1);
    const pod = await readPod(ns, ref.name);
    expect(pod?.metadata?.uid).not.toBe(ran.metadata?.uid);
    expect(pod?.status?.phase).toBe('Running');
    await deleteAndCheck(node, ref, uid);
  });
});
