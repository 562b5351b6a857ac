// The local control plane schedules, binds and collects as a cluster does: kube-scheduler places
// pods by the extended resources nodes publish, a ResourceQuota caps what a namespace's pods
// request, the PersistentVolume controller binds a WaitForFirstConsumer claim to a local block
// volume on the node its pod is scheduled to (whose exec then sees the device at the pod's path), and the garbage collector deletes what an owner
// leaves behind.
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { DEVICE_MAP_ENV, KWOK_GROUP, KWOK_VERSION } from '../../deploy/local/pod-exec-env.js';
import { createLocalBlockVolumes } from '../../deploy/local/local-volumes.js';
import { describe, expect, it } from 'vitest';
import { SHARED_DRIVES_CAPACITY_TLC } from '../../src/api/names.js';
import { quantityValue } from '../../src/api/quantity.js';
import { eventually } from '../support/async.js';
import { addNode, createResourceQuota, kubeConfig, uniqueName, uniqueNamespace } from '../support/harness.js';

const core = () => kubeConfig().makeApiClient(CoreV1Api);

/** A fresh node that offers `gib` GiB of shared TLC capacity, as the operator publishes it. */
async function nodeWithCapacity(gib: number): Promise<string> {
  const name = uniqueName('sched');
  await addNode({ name });
  const resources = { cpu: '64', memory: '512Gi', pods: '1000', [SHARED_DRIVES_CAPACITY_TLC]: String(gib) };
  await core().patchNodeStatus(
    { name, body: { status: { capacity: resources, allocatable: resources } } },
    setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
  );
  return name;
}

/** A pod pinned to `node` the way DaemonSets pin theirs (by affinity, through the scheduler). */
function podOn(node: string, name: string, gib: number): V1Pod {
  return {
    metadata: { name },
    spec: {
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [node] }] }],
          },
        },
      },
      containers: [
        {
          name: 'main',
          image: 'busybox',
          resources: {
            requests: { [SHARED_DRIVES_CAPACITY_TLC]: String(gib) },
            limits: { [SHARED_DRIVES_CAPACITY_TLC]: String(gib) },
          },
        },
      ],
    },
  };
}

async function scheduledTo(namespace: string, name: string): Promise<string | undefined> {
  const pod = await core().readNamespacedPod({ namespace, name });
  if (!pod.spec?.nodeName) throw new Error(`not scheduled: ${JSON.stringify(pod.status?.conditions ?? [])}`);
  return pod.spec.nodeName;
}

describe('Kubernetes controllers in the local control plane', () => {
  it('schedules a pod by the extended resources its node has left, and leaves one that does not fit Pending', async () => {
    const ns = await uniqueNamespace('sched');
    const node = await nodeWithCapacity(1000);
    await core().createNamespacedPod({ namespace: ns, body: podOn(node, 'first', 600) });
    expect(await eventually('the first pod to be scheduled', () => scheduledTo(ns, 'first'))).toBe(node);
    await eventually('the first pod to run', async () =>
      (await core().readNamespacedPod({ namespace: ns, name: 'first' })).status?.phase === 'Running' ? true : undefined,
    );
    await core().createNamespacedPod({ namespace: ns, body: podOn(node, 'second', 600) });
    const unschedulable = await eventually('the scheduler to refuse the second pod', async () => {
      const pod = await core().readNamespacedPod({ namespace: ns, name: 'second' });
      return pod.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.reason === 'Unschedulable');
    });
    expect(unschedulable.message).toContain(`Insufficient ${SHARED_DRIVES_CAPACITY_TLC}`);
    expect((await core().readNamespacedPod({ namespace: ns, name: 'second' })).spec?.nodeName).toBeUndefined();
    await core().deleteNamespacedPod({ namespace: ns, name: 'first' });
    expect(
      await eventually(
        'the second pod to be scheduled once the first is gone',
        () => scheduledTo(ns, 'second'),
        60_000,
      ),
    ).toBe(node);
  });

  it("refuses a pod beyond its namespace's quota of shared capacity", async () => {
    const ns = await uniqueNamespace('quota');
    const node = await nodeWithCapacity(10_000);
    const resource = `requests.${SHARED_DRIVES_CAPACITY_TLC}`;
    await createResourceQuota(ns, 'drives', { [resource]: '1000' });
    await core().createNamespacedPod({ namespace: ns, body: podOn(node, 'within', 700) });
    const refused = await core()
      .createNamespacedPod({ namespace: ns, body: podOn(node, 'beyond', 400) })
      .then(
        () => undefined,
        (err: unknown) => err as { code?: number; body?: string },
      );
    expect(refused?.code).toBe(403);
    expect(refused?.body).toContain('exceeded quota: drives');
    await eventually('the quota to show what is used', async () =>
      quantityValue(
        (await core().readNamespacedResourceQuota({ namespace: ns, name: 'drives' })).status?.used?.[resource] ?? '',
      ) === 700
        ? true
        : undefined,
    );
  });

  it('binds a WaitForFirstConsumer claim to the local block volume of the node its pod is scheduled to', async () => {
    const ns = await uniqueNamespace('pvc');
    const node = await nodeWithCapacity(0);
    const storageClass = uniqueName('local-block');
    const [pv] = await createLocalBlockVolumes(kubeConfig(), storageClass, [
      { node, path: '/dev/nvme9n1', capacityGiB: 100 },
    ]);
    await core().createNamespacedPersistentVolumeClaim({
      namespace: ns,
      body: {
        metadata: { name: 'data' },
        spec: {
          storageClassName: storageClass,
          volumeMode: 'Block',
          accessModes: ['ReadWriteOnce'],
          resources: { requests: { storage: '50Gi' } },
        },
      },
    });
    // Nothing consumes it yet: the claim waits.
    await eventually('the claim to wait for its first consumer', async () => {
      const events = await core().listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=data' });
      return events.items.find((e) => e.reason === 'WaitForFirstConsumer');
    });
    expect((await core().readNamespacedPersistentVolumeClaim({ namespace: ns, name: 'data' })).status?.phase).toBe(
      'Pending',
    );
    await core().createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'consumer' },
        spec: {
          containers: [
            { name: 'main', image: 'busybox', volumeDevices: [{ name: 'data', devicePath: '/dev/weka-data' }] },
          ],
          volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }],
        },
      },
    });
    expect(await eventually('the consumer to be scheduled', () => scheduledTo(ns, 'consumer'), 60_000)).toBe(node);
    const claim = await eventually(
      'the claim to be bound',
      async () => {
        const c = await core().readNamespacedPersistentVolumeClaim({ namespace: ns, name: 'data' });
        return c.status?.phase === 'Bound' ? c : undefined;
      },
      60_000,
    );
    expect(claim.spec?.volumeName).toBe(pv);
    // The node's "kubelet" maps the volume into the pod: its exec sees the local device at the pod's path.
    const exec = await eventually('the consumer to see its block volume', () =>
      kubeConfig()
        .makeApiClient(CustomObjectsApi)
        .getNamespacedCustomObject({
          group: KWOK_GROUP,
          version: KWOK_VERSION,
          plural: 'execs',
          namespace: ns,
          name: 'consumer',
        })
        .catch(() => undefined),
    );
    expect(exec).toMatchObject({
      spec: { execs: [{ local: { envs: [{ name: DEVICE_MAP_ENV, value: '/dev/weka-data=/dev/nvme9n1' }] } }] },
    });
  });

  it('deletes what an owner leaves behind once the owner is gone', async () => {
    const ns = await uniqueNamespace('gc');
    const owner = await core().createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'owner' } } });
    await core().createNamespacedConfigMap({
      namespace: ns,
      body: {
        metadata: {
          name: 'dependent',
          ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata!.uid! }],
        },
      },
    });
    await core().deleteNamespacedConfigMap({ namespace: ns, name: 'owner' });
    await eventually(
      'the garbage collector to delete the dependent',
      async () => {
        const left = await core().listNamespacedConfigMap({ namespace: ns, fieldSelector: 'metadata.name=dependent' });
        return left.items.length === 0 ? true : undefined;
      },
      60_000,
    );
  });
});
