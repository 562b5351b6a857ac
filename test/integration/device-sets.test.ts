// Drives from block-mode PVCs (a WekaCluster's storageClassDeviceSets): the operator claims each
// set's volumes on the nodes the cluster selects, the real PersistentVolume controller binds them to
// local block volumes once the scheduler has placed their device pods, the devices are signed for
// the node's ssdproxy inside those pods and shared like local drives; when the cluster goes they
// are released, but a claim is deleted only once no virtual drive (of any cluster) is left on it,
// nor allocated on it; the operator's finalizer keeps a claim a person deletes until then.
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { SIGNED_UUID_ANNOTATION } from '../../activities/device-sets.js';
import { createLocalBlockVolumes } from '../../deploy/local/local-volumes.js';
import type { SimulatedDevice } from '../../deploy/local/fake-nodes.js';
import type { Condition } from '../../src/api/index.js';
import { WITHHELD_DRIVES_ANNOTATION } from '../../src/annotations/index.js';
import { deleteOperation, startSignDrivesOperation, waitFinished } from '../support/manual-operation.js';
import { CLUSTER_UID_LABEL, DEVICE_CLAIM_FINALIZER } from '../../src/manifests/device-set-pods.js';
import { withAllocation } from '../../src/node/allocation-ledger.js';
import { changeLedger } from '../support/ledger.js';
import type { ObjectRef } from '../../src/api/names.js';
import { clusterWorkflowId, deleteRequestedSignal } from '../../src/protocol.js';
import { eventually, sleep } from '../support/async.js';
import { POOL_LABEL, readCluster } from '../support/clusters.js';
import { listContainers, WEKA_API } from '../support/containers.js';
import { warningEvent } from '../support/events.js';
import { addNode, kubeConfig, uniqueName, uniqueNamespace } from '../support/harness.js';
import { sharedDrivesOf, startWekaCluster, useTestOperator, waitProxiesGone } from '../support/operator.js';
import { showDevice, sim } from '../support/simulator.js';
import { recordHistory } from '../support/histories.js';

const op = useTestOperator();

const core = () => kubeConfig().makeApiClient(CoreV1Api);
const TLC_MEMBER = { driveContainers: 1, driveCores: 1, containerCapacity: 1000, driveTypesRatio: { tlc: 1, qlc: 0 } };
const DISKS: SimulatedDevice[] = [
  { path: '/dev/nvme4n1', capacityGiB: 2000, type: 'TLC' },
  { path: '/dev/nvme5n1', capacityGiB: 2000, type: 'TLC' },
];

/** A node whose disks are local block volumes of a fresh StorageClass, none of them signed. */
async function nodeWithLocalVolumes(pool: string): Promise<{ node: string; storageClass: string }> {
  const node = uniqueName('devset');
  await addNode({ name: node, devices: DISKS, labels: { [POOL_LABEL]: pool } });
  const storageClass = uniqueName('local-nvme');
  await createLocalBlockVolumes(
    kubeConfig(),
    storageClass,
    DISKS.map((d) => ({ node, path: d.path, capacityGiB: d.capacityGiB })),
  );
  return { node, storageClass };
}

function deviceSet(name: string, storageClassName: string, storage = '1000Gi', count = 2) {
  return {
    name,
    count,
    config: { driveType: 'TLC' },
    volumeClaimTemplates: [{ spec: { storageClassName, volumeMode: 'Block', resources: { requests: { storage } } } }],
  };
}

async function claimsOf(uid: string) {
  return (
    await core().listNamespacedPersistentVolumeClaim({
      namespace: op.deps.operatorNamespace,
      labelSelector: `${CLUSTER_UID_LABEL}=${uid}`,
    })
  ).items;
}

async function podsOf(uid: string) {
  return (
    await core().listNamespacedPod({
      namespace: op.deps.operatorNamespace,
      labelSelector: `${CLUSTER_UID_LABEL}=${uid}`,
    })
  ).items;
}

async function clusterCondition(ref: ObjectRef, type: string, reason: string, timeoutMs = 120_000): Promise<Condition> {
  return eventually(
    `${ref.name}: condition ${type} reason ${reason}`,
    async () => {
      const c = (await readCluster(ref.namespace, ref.name))?.status?.conditions?.find((x) => x.type === type);
      return c?.reason === reason ? c : undefined;
    },
    timeoutMs,
    { progress: async () => JSON.stringify((await readCluster(ref.namespace, ref.name))?.status?.conditions ?? []) },
  );
}

/** Deletes the cluster and tells its workflow, as the watcher would. */
async function deleteCluster(ref: ObjectRef, uid: string): Promise<void> {
  await kubeConfig()
    .makeApiClient(CustomObjectsApi)
    .deleteNamespacedCustomObject({ ...WEKA_API, plural: 'wekaclusters', namespace: ref.namespace, name: ref.name });
  await op.client.workflow.getHandle(clusterWorkflowId(uid)).signal(deleteRequestedSignal);
}

const gone = (ref: ObjectRef) => async () => ((await readCluster(ref.namespace, ref.name)) === null ? true : undefined);

describe('device sets', () => {
  it(
    'binds the claims on the selected node, signs them in their device pods, shares them, and releases them with the cluster',
    { timeout: 360_000 },
    async () => {
      const pool = uniqueName('pool');
      const { node, storageClass } = await nodeWithLocalVolumes(pool);
      const ref = { namespace: await uniqueNamespace('devsets'), name: 'alpha' };
      const { uid } = await startWekaCluster(op, ref, pool, TLC_MEMBER, {
        storageClassDeviceSets: [deviceSet('fast', storageClass)],
      });

      await eventually(
        'the cluster Ready',
        async () => ((await readCluster(ref.namespace, ref.name))?.status?.phase === 'Ready' ? true : undefined),
        240_000,
      );
      const ready = await clusterCondition(ref, 'DeviceSetsReady', 'DevicesSigned');
      expect(ready.status).toBe('True');

      // Bound by the PersistentVolume controller to this node's local volumes, each in a device pod on the node.
      const claims = await claimsOf(uid);
      expect(claims).toHaveLength(2);
      for (const claim of claims) {
        expect(claim.status?.phase).toBe('Bound');
        expect(claim.spec?.volumeMode).toBe('Block');
        expect(claim.metadata?.annotations?.[SIGNED_UUID_ANNOTATION]).toMatch(/^[0-9a-f-]{36}$/);
      }
      const pods = await podsOf(uid);
      expect(pods).toHaveLength(2);
      for (const pod of pods) {
        expect(pod.spec?.nodeName).toBe(node);
        expect(pod.status?.phase).toBe('Running');
      }
      const volumes = await Promise.all(claims.map((c) => core().readPersistentVolume({ name: c.spec!.volumeName! })));
      expect(volumes.map((v) => v.spec?.local?.path).sort()).toEqual(DISKS.map((d) => d.path));

      // Signed for the proxy and shared: the node offers them, and the member's virtual drives are on them.
      for (const d of DISKS) expect((await showDevice(node, d.path)).signature).toBe('proxy');
      const shared = await sharedDrivesOf(node);
      const uuids = claims.map((c) => c.metadata!.annotations![SIGNED_UUID_ANNOTATION]!).sort();
      expect(shared.map((d) => d.physicalUUID).sort()).toEqual(uuids);
      const [member] = await listContainers(kubeConfig(), ref.namespace);
      const carved = member!.status?.allocations?.virtualDrives ?? [];
      expect(carved.length).toBeGreaterThan(0);
      for (const vd of carved) expect(uuids).toContain(vd.physicalUUID);

      // A device pod goes (evicted, say) just before the cluster is deleted: its device is read anyway.
      await core().deleteNamespacedPod({ namespace: op.deps.operatorNamespace, name: pods[0]!.metadata!.name! });
      await eventually('the device pod gone', async () => ((await podsOf(uid)).length === 1 ? true : undefined));
      // Deleting the cluster tears the member down, then releases the claims: the node stops offering them.
      await deleteCluster(ref, uid);
      await eventually('the cluster gone', gone(ref), 240_000);
      await recordHistory(clusterWorkflowId(uid), 'cluster-device-set-released');
      await eventually('its claims and device pods deleted', async () =>
        (await claimsOf(uid)).length === 0 && (await podsOf(uid)).length === 0 ? true : undefined,
      );
      expect(await sharedDrivesOf(node)).toEqual([]);
      // No drive container is left on the node: neither is its ssdproxy.
      await waitProxiesGone(op.deps.operatorNamespace, [node], 60_000);

      // The devices are still signed (the volumes are Retain): a later publish of the node's drives,
      // here a sign-drives operation naming them, must not offer them again.
      const sign = { namespace: ref.namespace, name: 'sign-again' };
      const { uid: signUid } = await startSignDrivesOperation(op, sign, {
        type: 'device-paths',
        shared: true,
        nodeSelector: { [POOL_LABEL]: pool },
        devicePaths: DISKS.map((d) => d.path),
      });
      await waitFinished(sign);
      expect(await sharedDrivesOf(node)).toEqual([]);
      const withheld = (await core().readNode({ name: node })).metadata?.annotations?.[WITHHELD_DRIVES_ANNOTATION];
      expect(JSON.parse(withheld ?? '[]')).toEqual(uuids);
      await deleteOperation(op, sign, signUid);
    },
  );

  it(
    "keeps a claim while another cluster's virtual drive is on its device, and releases it once that is gone",
    { timeout: 480_000 },
    async () => {
      const pool = uniqueName('pool');
      const { node, storageClass } = await nodeWithLocalVolumes(pool);
      const ns = await uniqueNamespace('devsets');
      const owner = { namespace: ns, name: 'owner' };
      const tenant = { namespace: ns, name: 'tenant' };
      const { uid } = await startWekaCluster(op, owner, pool, TLC_MEMBER, {
        storageClassDeviceSets: [deviceSet('fast', storageClass)],
      });
      const { uid: tenantUid } = await startWekaCluster(op, tenant, pool, TLC_MEMBER);
      for (const ref of [owner, tenant])
        await eventually(
          `${ref.name} Ready`,
          async () => ((await readCluster(ref.namespace, ref.name))?.status?.phase === 'Ready' ? true : undefined),
          300_000,
        );

      await deleteCluster(owner, uid);
      const held = await clusterCondition(owner, 'DeviceSetsReady', 'DevicesInUse', 240_000);
      expect(held.message).toContain(`node ${node}`);
      expect(held.message).toMatch(/virtual drives/);
      expect(await warningEvent(owner, 'DevicesInUse')).toContain('virtual drives');
      expect(await claimsOf(uid)).toHaveLength(2);
      expect((await readCluster(ns, 'owner'))?.status?.phase).toBe('Deleting');

      // A person deletes the claim under the tenant's virtual drive: the operator's finalizer
      // keeps it (its volume is not reclaimed, and wiped), and the release still counts it.
      const tenantDrives = (await listContainers(kubeConfig(), ns))
        .filter((c) => c.spec.cluster === 'tenant')
        .flatMap((c) => c.status?.allocations?.virtualDrives ?? [])
        .map((d) => d.physicalUUID);
      const underTenant = (await claimsOf(uid)).find((c) =>
        tenantDrives.includes(c.metadata?.annotations?.[SIGNED_UUID_ANNOTATION] ?? ''),
      )!;
      const claimName = underTenant.metadata!.name!;
      expect(underTenant.metadata?.finalizers).toContain(DEVICE_CLAIM_FINALIZER);
      await core().deleteNamespacedPersistentVolumeClaim({ name: claimName, namespace: op.deps.operatorNamespace });
      // The teardown asks again every 30 s: after one more try, all is still there.
      await sleep(45_000);
      const still = (await readCluster(ns, 'owner'))?.status?.conditions?.find((x) => x.type === 'DeviceSetsReady');
      expect(still?.reason).toBe('DevicesInUse');
      expect(still?.message).toContain(`${claimName}: `);
      const kept = (await claimsOf(uid)).find((c) => c.metadata?.name === claimName);
      expect(kept?.metadata?.deletionTimestamp).toBeDefined();
      expect(kept?.metadata?.finalizers).toContain(DEVICE_CLAIM_FINALIZER);

      await deleteCluster(tenant, tenantUid);
      await eventually(
        'both clusters gone',
        async () =>
          (await readCluster(ns, 'owner')) === null && (await readCluster(ns, 'tenant')) === null ? true : undefined,
        300_000,
      );
      await eventually('the claims deleted', async () => ((await claimsOf(uid)).length === 0 ? true : undefined));
      expect(await sharedDrivesOf(node)).toEqual([]);
    },
  );

  it(
    'keeps a claim while the node has allocated a virtual drive on its device that is not signed yet',
    { timeout: 480_000 },
    async () => {
      const pool = uniqueName('pool');
      const { node, storageClass } = await nodeWithLocalVolumes(pool);
      const owner = { namespace: await uniqueNamespace('devsets'), name: 'owner' };
      const { uid } = await startWekaCluster(op, owner, pool, TLC_MEMBER, {
        storageClassDeviceSets: [deviceSet('fast', storageClass)],
      });
      await eventually(
        'owner Ready',
        async () => ((await readCluster(owner.namespace, owner.name))?.status?.phase === 'Ready' ? true : undefined),
        300_000,
      );
      // What the node's mutex writes when it decides an allocation, before the container signs it.
      const physicalUUID = (await claimsOf(uid))[0]!.metadata!.annotations![SIGNED_UUID_ANNOTATION]!;
      const waiting = `${owner.namespace}/waiting`;
      await changeLedger(node, (ledger) =>
        withAllocation(ledger, 'uid-waiting', waiting, {
          virtualDrives: [
            { virtualUUID: crypto.randomUUID(), physicalUUID, capacityGiB: 100, serial: '', type: 'TLC' },
          ],
        }),
      );

      await deleteCluster(owner, uid);
      const held = await clusterCondition(owner, 'DeviceSetsReady', 'DevicesInUse', 90_000);
      expect(held.message).toContain(`allocated to ${waiting} (virtual drives not signed yet)`);
      expect(await claimsOf(uid)).toHaveLength(2);

      await changeLedger(node, (ledger) => {
        const { ['uid-waiting']: _, ...containers } = ledger.containers;
        return { ...ledger, containers };
      });
      await eventually('owner gone', gone(owner), 300_000);
      await eventually('the claims deleted', async () => ((await claimsOf(uid)).length === 0 ? true : undefined));
    },
  );

  it(
    'forms the cluster from a member that is ready, while a slow node is still signing its device set',
    { timeout: 360_000 },
    async () => {
      // Two nodes with the set's volumes; the only member goes to the first by name, and every Weka
      // command on the second takes 3 s, so signing its two devices takes about half a minute.
      const pool = uniqueName('pool');
      const quick = uniqueName('devset-a');
      const slow = uniqueName('devset-b');
      const storageClass = uniqueName('local-nvme');
      for (const node of [quick, slow]) {
        await addNode({ name: node, devices: DISKS, labels: { [POOL_LABEL]: pool } });
        await createLocalBlockVolumes(
          kubeConfig(),
          storageClass,
          DISKS.map((d) => ({ node, path: d.path, capacityGiB: d.capacityGiB })),
        );
      }
      await sim(slow, 'faults', '--latency-ms', '3000');
      const ref = { namespace: await uniqueNamespace('devsets'), name: 'early' };
      const { uid } = await startWekaCluster(op, ref, pool, TLC_MEMBER, {
        storageClassDeviceSets: [deviceSet('fast', storageClass)],
      });
      const conditionOf = async (type: string) =>
        (await readCluster(ref.namespace, ref.name))?.status?.conditions?.find((c) => c.type === type);

      const formed = await clusterCondition(ref, 'Formed', 'Formed', 240_000);
      const signed = await clusterCondition(ref, 'DeviceSetsReady', 'DevicesSigned', 240_000);
      expect(signed.status).toBe('True');
      expect(Date.parse(formed.lastTransitionTime!)).toBeLessThan(Date.parse(signed.lastTransitionTime!));
      const [member] = await listContainers(kubeConfig(), ref.namespace);
      expect(member?.spec?.nodeName).toBe(quick);
      await eventually(
        'the cluster Ready',
        async () => ((await conditionOf('Ready'))?.status === 'True' ? true : undefined),
        240_000,
      );

      await sim(slow, 'faults', '--clear');
      await deleteCluster(ref, uid);
      await eventually('the cluster gone', gone(ref), 240_000);
      await eventually('its claims deleted', async () => ((await claimsOf(uid)).length === 0 ? true : undefined));
    },
  );

  it('says on the cluster why a set cannot be claimed: a claim below the smallest virtual drive, a missing StorageClass, a claim that does not bind', async () => {
    const pool = uniqueName('pool');
    const { storageClass } = await nodeWithLocalVolumes(pool);
    const ns = await uniqueNamespace('devsets');
    const cases = [
      { name: 'small', set: deviceSet('small', storageClass, '100Gi'), reason: 'ClaimTooSmall', says: '100Gi' },
      {
        name: 'nocls',
        set: deviceSet('nocls', 'no-such-class'),
        reason: 'StorageClassNotFound',
        says: 'no-such-class',
      },
      // Three devices of 1000 GiB, and the node has two volumes: the third claim does not bind.
      {
        name: 'unbound',
        set: deviceSet('unbound', storageClass, '1000Gi', 3),
        reason: 'ClaimPending',
        says: 'not bound',
      },
    ];
    for (const c of cases)
      await startWekaCluster(op, { namespace: ns, name: c.name }, pool, TLC_MEMBER, {
        storageClassDeviceSets: [c.set],
      });
    for (const c of cases) {
      const condition = await clusterCondition({ namespace: ns, name: c.name }, 'DeviceSetsReady', c.reason);
      expect(condition.status).toBe('False');
      expect(condition.message).toContain(c.says);
      expect(await warningEvent({ namespace: ns, name: c.name }, c.reason)).toContain(c.says);
    }
  }, 240_000);
});
