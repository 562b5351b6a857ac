// A drive container's pod asks Kubernetes for what its node's mutex gave it, so that the scheduler
// and a namespace's ResourceQuota count it: a quota on shared GiB caps a tenant (its container
// beyond the quota is refused its allocation and says why, and proceeds once the quota allows; a
// growth in place is counted too, though its pod's requests stay as they were), and a pod whose
// node has not the room the scheduler counts stays Pending, shown on its container, until it has.
// What exists only for a node (its proxy) is owned by the node: the garbage collector deletes it
// with the node.
import { CoreV1Api, PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { SimulatedDevice } from '../../deploy/local/fake-nodes.js';
import type { Condition, WekaContainer } from '../../src/api/index.js';
import { specChangedSignal } from '../../src/protocol.js';
import { ALLOCATIONS_ANNOTATION } from '../../src/node/allocation-ledger.js';
import { quantityValue } from '../../src/api/quantity.js';
import { proxyName, SHARED_DRIVES_CAPACITY_TLC, type ObjectRef } from '../../src/api/names.js';
import { eventually } from '../support/async.js';
import { warningEvent } from '../support/events.js';
import { createResourceQuota, kubeConfig, removeNode, uniqueName, uniqueNamespace } from '../support/harness.js';
import { listContainers, patchContainerSpec } from '../support/containers.js';
import {
  createDriveContainer,
  podExists,
  readContainer,
  sharedDrivesNode,
  useTestOperator,
  waitForPhase,
} from '../support/operator.js';
import { createWekaCluster } from '../support/simulator.js';

const ONE_TLC: SimulatedDevice[] = [{ path: '/dev/nvme0n1', capacityGiB: 3000, type: 'TLC' }];
const QUOTA = `requests.${SHARED_DRIVES_CAPACITY_TLC}`;

const op = useTestOperator();

const core = () => kubeConfig().makeApiClient(CoreV1Api);

/** A node with one shared TLC drive, a Weka cluster for its containers and a namespace of their own. */
async function oneDriveNode(prefix: string): Promise<{ node: string; guid: string; ns: string }> {
  const node = await sharedDrivesNode(ONE_TLC, prefix);
  return { node, guid: await createWekaCluster(node, uniqueName(prefix)), ns: await uniqueNamespace(prefix) };
}
const tlc = (nodeName: string, containerCapacity: number) => ({
  nodeName,
  driveCores: 1,
  containerCapacity,
  driveTypesRatio: { tlc: 1, qlc: 0 },
});

async function conditionOf(ref: ObjectRef, type: string, status: string, reason: string): Promise<Condition> {
  return eventually(
    `${ref.namespace}/${ref.name}: condition ${type}=${status} reason ${reason}`,
    async () => {
      const c = (await readContainer(ref))?.status?.conditions?.find((x) => x.type === type);
      return c?.status === status && c.reason === reason ? c : undefined;
    },
    120_000,
    { progress: async () => JSON.stringify((await readContainer(ref))?.status ?? {}) },
  );
}

/** The uids the node's allocation ledger holds something for. */
async function ledgerHolders(node: string): Promise<string[]> {
  const text = (await core().readNode({ name: node })).metadata?.annotations?.[ALLOCATIONS_ANNOTATION] ?? '{}';
  return Object.keys((JSON.parse(text) as { containers?: Record<string, unknown> }).containers ?? {});
}

const gibOf = (c: WekaContainer | null) =>
  (c?.status?.allocations?.virtualDrives ?? []).reduce((sum, d) => sum + d.capacityGiB, 0);

const podOf = (ref: ObjectRef): Promise<V1Pod> =>
  core().readNamespacedPod({ namespace: ref.namespace, name: ref.name });

describe('drive container pods and the scheduler', () => {
  it(
    "asks for its GiB, so that a namespace's quota refuses a container beyond it, which holds nothing until the quota allows",
    { timeout: 300_000 },
    async () => {
      const { node, guid, ns } = await oneDriveNode('quota');
      await createResourceQuota(ns, 'weka-drives', { [QUOTA]: '1500' });
      const within = { namespace: ns, name: 'within' };
      const beyond = { namespace: ns, name: 'beyond' };
      await createDriveContainer(op, within, tlc(node, 1000), guid);
      await waitForPhase(within, 'Ready', 120_000);
      const pod = await podOf(within);
      expect(pod.spec?.nodeName).toBe(node); // placed by the scheduler: the pod names no node itself
      const requested = pod.spec?.containers[0]?.resources?.requests ?? {};
      // Of the drives, only its TLC GiB (CPU, memory and huge pages besides: pod-resources.ts).
      expect(Object.keys(requested).filter((r) => r.startsWith('weka.io/'))).toEqual([SHARED_DRIVES_CAPACITY_TLC]);
      expect(quantityValue(requested[SHARED_DRIVES_CAPACITY_TLC]!)).toBe(1000);

      const { uid } = await createDriveContainer(op, beyond, tlc(node, 1000), guid);
      const refused = await conditionOf(beyond, 'Allocated', 'False', 'QuotaExceeded');
      expect(refused.message).toContain('exceeded quota: weka-drives');
      expect(await warningEvent(beyond, 'QuotaExceeded')).toContain('exceeded quota');
      // Refused before anything was given: the node's capacity is never held by a tenant beyond its quota.
      expect(await ledgerHolders(node)).not.toContain(uid);
      expect((await readContainer(beyond))?.status?.allocations?.virtualDrives ?? []).toEqual([]);
      expect(await podExists(ns, beyond.name)).toBe(false);

      await core().patchNamespacedResourceQuota(
        { namespace: ns, name: 'weka-drives', body: { spec: { hard: { [QUOTA]: '2000' } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      await waitForPhase(beyond, 'Ready', 120_000);
      await conditionOf(beyond, 'Allocated', 'True', 'Allocated');
      await eventually('the quota to count both pods', async () => {
        const q = await core().readNamespacedResourceQuota({ namespace: ns, name: 'weka-drives' });
        return quantityValue(q.status?.used?.[QUOTA] ?? '') === 2000 ? q : undefined;
      });
    },
  );

  it(
    "counts a growth in place against the namespace's quota, by what every container holds: beyond it, the container keeps what it has until the quota allows",
    { timeout: 300_000 },
    async () => {
      const { node, guid, ns } = await oneDriveNode('quota-growth');
      await createResourceQuota(ns, 'weka-drives', { [QUOTA]: '1200' });
      const growing = { namespace: ns, name: 'growing' };
      const other = { namespace: ns, name: 'other' };
      const { handle } = await createDriveContainer(op, growing, tlc(node, 500), guid);
      await createDriveContainer(op, other, tlc(node, 500), guid);
      await waitForPhase(growing, 'Ready', 120_000);
      await waitForPhase(other, 'Ready', 120_000);

      // Its pod still asks for 500 GiB, so the quota's own count (1000 of 1200) would let it grow.
      await patchContainerSpec(kubeConfig(), growing, { containerCapacity: 1000 });
      await handle.signal(specChangedSignal);
      const refused = await conditionOf(growing, 'Grown', 'False', 'QuotaExceeded');
      expect(refused.message).toContain('exceeded quota: weka-drives');
      expect(refused.message).toContain(`used: ${QUOTA}=500, limited: ${QUOTA}=1200`);
      const held = await readContainer(growing);
      expect(held?.status?.phase).toBe('Ready');
      expect(gibOf(held)).toBe(500);

      await core().patchNamespacedResourceQuota(
        { namespace: ns, name: 'weka-drives', body: { spec: { hard: { [QUOTA]: '1500' } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      await conditionOf(growing, 'Grown', 'True', 'Grown');
      expect(gibOf(await readContainer(growing))).toBe(1000);
    },
  );

  it(
    'leaves a pod the scheduler cannot place on its node Pending, says so on its container, and runs it once there is room',
    { timeout: 300_000 },
    async () => {
      const { node, guid, ns } = await oneDriveNode('unschedulable');
      // Another workload on the node asks for shared capacity outside the operator: the scheduler
      // counts it, the node's mutex does not.
      await core().createNamespacedPod({
        namespace: ns,
        body: {
          metadata: { name: 'other-workload' },
          spec: {
            nodeName: node,
            containers: [
              {
                name: 'main',
                image: 'busybox',
                resources: {
                  requests: { [SHARED_DRIVES_CAPACITY_TLC]: '2500' },
                  limits: { [SHARED_DRIVES_CAPACITY_TLC]: '2500' },
                },
              },
            ],
          },
        },
      });
      const ref = { namespace: ns, name: 'waits' };
      await createDriveContainer(op, ref, tlc(node, 1000), guid);
      const waiting = await conditionOf(ref, 'PodScheduled', 'False', 'Unschedulable');
      expect(waiting.message).toContain(`Insufficient ${SHARED_DRIVES_CAPACITY_TLC}`);
      expect((await readContainer(ref))?.status?.phase).toBe('Pending');
      expect((await podOf(ref)).spec?.nodeName).toBeUndefined();

      await core().deleteNamespacedPod({ namespace: ns, name: 'other-workload', gracePeriodSeconds: 0 });
      await waitForPhase(ref, 'Ready', 120_000);
      await conditionOf(ref, 'PodScheduled', 'True', 'Scheduled');
      expect((await podOf(ref)).spec?.nodeName).toBe(node);
    },
  );

  it("deletes a node's proxy with the node, through Kubernetes' garbage collector", { timeout: 300_000 }, async () => {
    const { node, guid, ns } = await oneDriveNode('owned-proxy');
    const ref = { namespace: ns, name: 'on-node' };
    await createDriveContainer(op, ref, tlc(node, 500), guid);
    await waitForPhase(ref, 'Ready', 120_000);
    const proxy = { namespace: op.deps.operatorNamespace, name: proxyName(node) };
    const proxyPod = await core().readNamespacedPod(proxy);
    expect(proxyPod.metadata?.ownerReferences?.map((o) => `${o.kind}/${o.name}`)).toEqual([`Node/${node}`]);

    await removeNode(node);
    await eventually(
      "the node's proxy WekaContainer to be collected",
      async () =>
        (await listContainers(kubeConfig(), proxy.namespace)).some((c) => c.metadata.name === proxy.name)
          ? undefined
          : true,
      120_000,
    );
    // No kubelet is left to confirm the pod's end: it is being deleted, as the collector asked.
    await eventually('the proxy pod to be deleted', async () => {
      const pod = await core()
        .readNamespacedPod(proxy)
        .catch(() => null);
      return pod === null || pod.metadata?.deletionTimestamp !== undefined ? true : undefined;
    });
  });
});
