// A fault of a person tidying storage: a claim of a WekaCluster's device set deleted, before its
// device is signed, once it is, or under the member's virtual drives. The operator's finalizer must
// keep a claim while anything (a virtual drive on its device, an allocation in the node's ledger)
// lies on it, and the drives on it must stay while their cluster lives. The fault brings its own
// node of local block volumes (the rounds' nodes have none) and takes it away again, with the
// cluster, its claims and its ssdproxy, before its promise resolves.
import { CoreV1Api, StorageV1Api, type V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { SIGNED_UUID_ANNOTATION } from '../../activities/device-sets.js';
import type { SimulatedDevice } from '../../deploy/local/fake-nodes.js';
import { createLocalBlockVolumes } from '../../deploy/local/local-volumes.js';
import type { WekaCluster } from '../../src/api/index.js';
import { ALLOCATIONS_ANNOTATION, decodeLedger } from '../../src/node/allocation-ledger.js';
import { CLUSTER_UID_LABEL } from '../../src/manifests/device-set-pods.js';
import { proxyName } from '../../src/api/names.js';
import { driveAt, parseSignDriveList, type DriveInfo } from '../../src/weka/index.js';
import { eventually, sleep } from '../support/async.js';
import {
  createWekaClusterObject,
  deleteObject,
  ensureNamespace,
  listContainers,
  readObject,
  WEKA_CLUSTERS,
} from '../support/containers.js';
import type { Random } from '../support/random.js';
import { simRetryingFaultsAt } from '../support/sim-access.js';
import { deleteNamespace, retried, waitObjectGone } from './forced-faults.js';
import type { ChaosWorld } from './world.js';

/** Three disks for a set of two claims: a claim made again after its volume was let go still binds. */
const DISKS: SimulatedDevice[] = [
  { path: '/dev/nvme4n1', capacityGiB: 2000, type: 'TLC' },
  { path: '/dev/nvme5n1', capacityGiB: 2000, type: 'TLC' },
  { path: '/dev/nvme6n1', capacityGiB: 2000, type: 'TLC' },
];
const DEVICES_LABEL = 'weka.weka.io/chaos-devices';
const MEMBER = { driveContainers: 1, driveCores: 1, containerCapacity: 1000, driveTypesRatio: { tlc: 1, qlc: 0 } };

type Moment = 'claimed' | 'signed' | 'in use';

/** What lies on a device: its virtual drives, and the node ledger's allocations on it. */
interface OnDevice {
  virtualDrives: number;
  allocated: number;
}

export async function deleteDeviceSetClaim(world: ChaosWorld, random: Random): Promise<string> {
  const kc = world.cp.kubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const k = random.int(1, 1_000_000_000);
  const node = `chaos-devices-${k}`;
  const storageClass = `chaos-nvme-${k}`;
  const namespace = `chaos-devsets-${k}`;
  const ref = { namespace, name: 'disks' };
  const operatorNamespace = world.operatorNamespace;

  const claims = async (uid: string) =>
    (
      await retried('listing the claims', () =>
        core.listNamespacedPersistentVolumeClaim({
          namespace: operatorNamespace,
          labelSelector: `${CLUSTER_UID_LABEL}=${uid}`,
        }),
      )
    ).items;
  const show = async (path: string): Promise<DriveInfo> =>
    driveAt(
      parseSignDriveList(await simRetryingFaultsAt(world.cp.simulatorRoot, node, 'weka-sign-drive', 'list', '-j')),
      path,
    );
  const onDevice = async (path: string): Promise<OnDevice> => {
    const info = await show(path);
    const text = (await retried('reading the node', () => core.readNode({ name: node }))).metadata?.annotations?.[
      ALLOCATIONS_ANNOTATION
    ];
    const decoded = decodeLedger(text);
    if (!decoded.ok) throw new Error(`node ${node}'s ledger cannot be read: ${decoded.message}`);
    const allocated = Object.values(decoded.ledger.containers)
      .flatMap((e) => e.allocation.virtualDrives)
      .filter((d) => info.physicalUUID !== null && d.physicalUUID === info.physicalUUID).length;
    return { virtualDrives: info.virtualDrives.length, allocated };
  };
  const devicePath = async (claim: V1PersistentVolumeClaim): Promise<string | undefined> => {
    const volume = claim.spec?.volumeName;
    if (!volume) return undefined;
    return (await retried('reading the volume', () => core.readPersistentVolume({ name: volume }))).spec?.local?.path;
  };

  await world.cp.addNode({ name: node, devices: DISKS, labels: { [DEVICES_LABEL]: node } });
  world.faultNodes.push(node);
  for (const d of DISKS) world.faultNodeCapacities.set(`${node} ${d.path}`, d.capacityGiB);
  const volumes = await retried('creating the local volumes', () =>
    createLocalBlockVolumes(
      kc,
      storageClass,
      DISKS.map((d) => ({ node, path: d.path, capacityGiB: d.capacityGiB })),
    ),
  );
  await retried(`creating namespace ${namespace}`, () => ensureNamespace(kc, namespace));
  const uid = await retried(`creating WekaCluster ${namespace}/disks`, () =>
    createWekaClusterObject(kc, ref, { [DEVICES_LABEL]: node }, MEMBER, {
      storageClassDeviceSets: [
        {
          name: 'fast',
          count: 2,
          config: { driveType: 'TLC' },
          volumeClaimTemplates: [
            {
              spec: {
                storageClassName: storageClass,
                volumeMode: 'Block',
                resources: { requests: { storage: '1000Gi' } },
              },
            },
          ],
        },
      ],
    }),
  );

  // The moment the person deletes a claim: once it exists, once its device is signed, or once the
  // member has virtual drives on it.
  const moment = random.sample<Moment>(['claimed', 'signed', 'in use'], 1)[0]!;
  const victim = await eventually(
    `a claim of ${namespace}/disks ${moment}`,
    async () => {
      for (const claim of await claims(uid)) {
        if (moment === 'claimed') return claim;
        if (!claim.metadata?.annotations?.[SIGNED_UUID_ANNOTATION]) continue;
        if (moment === 'signed') return claim;
        const path = await devicePath(claim);
        if (path && (await onDevice(path)).virtualDrives > 0) return claim;
      }
      return undefined;
    },
    480_000,
    { intervalMs: 1_000 },
  );
  const name = victim.metadata!.name!;
  const path = await devicePath(victim);
  const before = path ? await onDevice(path) : { virtualDrives: 0, allocated: 0 };
  await retried(`deleting claim ${name}`, () =>
    core
      .deleteNamespacedPersistentVolumeClaim({ name, namespace: operatorNamespace })
      .catch((err: { code?: number }) => {
        if (err.code !== 404) throw err;
      }),
  );
  // Half the time an operator replica crashes at once, in the middle of whatever the deletion set off.
  const crashed = random.next() < 0.5 ? world.replicas[random.int(0, world.replicas.length - 1)]! : undefined;
  if (crashed) {
    await crashed.kill();
    await sleep(random.int(500, 3_000));
    await crashed.start();
  }

  // While the cluster lives: the claim is kept as long as anything lies on its device, and no
  // virtual drive of the member's leaves it.
  const watchMs = random.int(20_000, 40_000);
  const deadline = Date.now() + watchMs;
  let letGo = false;
  while (Date.now() < deadline && path) {
    const now = await onDevice(path);
    if (now.virtualDrives < before.virtualDrives)
      throw new Error(
        `the virtual drives on ${node}:${path} went from ${before.virtualDrives} to ${now.virtualDrives} after its claim ${name} was deleted, while their cluster lives`,
      );
    const claim = (await claims(uid)).find((c) => c.metadata?.name === name && c.metadata.uid === victim.metadata?.uid);
    if (!claim && !letGo) {
      letGo = true;
      const after = await onDevice(path);
      if (after.virtualDrives > 0 || after.allocated > 0)
        throw new Error(
          `claim ${name} was let go while its device ${node}:${path} held ${after.virtualDrives} virtual drives and ${after.allocated} allocations`,
        );
    }
    await sleep(2_000);
  }

  const cluster = await retried('reading the cluster', () => readObject<WekaCluster>(kc, WEKA_CLUSTERS, ref));
  const phase = cluster?.status?.phase ?? 'no phase';
  if (cluster?.status?.clusterGUID) world.formedClusterGUIDs.push(cluster.status.clusterGUID);
  await retried('deleting the cluster', () => deleteObject(kc, WEKA_CLUSTERS, ref));
  await waitObjectGone(world, WEKA_CLUSTERS, ref);
  await eventually(
    `the claims of ${namespace}/disks to be deleted`,
    async () => ((await claims(uid)).length === 0 ? true : undefined),
    240_000,
    { intervalMs: 2_000 },
  );
  for (const disk of DISKS) {
    // Signed while the set was claimed (the volumes are Retain: they stay signed), for the replay.
    const { physicalUUID } = await show(disk.path);
    if (physicalUUID) world.faultNodeCapacities.set(`${node} ${physicalUUID}`, disk.capacityGiB);
    const left = await onDevice(disk.path);
    if (left.virtualDrives > 0 || left.allocated > 0)
      throw new Error(
        `${node}:${disk.path} still holds ${left.virtualDrives} virtual drives and ${left.allocated} allocations after its cluster went`,
      );
  }
  await eventually(
    `the ssdproxy of ${node} to be gone`,
    async () =>
      (await retried('listing the proxies', () => listContainers(kc, operatorNamespace))).some(
        (c) => c.metadata.name === proxyName(node),
      )
        ? undefined
        : true,
    240_000,
    { intervalMs: 2_000 },
  );
  await deleteNamespace(world, namespace);
  await world.cp.removeNode(node);
  for (const volume of volumes)
    await retried(`deleting volume ${volume}`, () =>
      core.deletePersistentVolume({ name: volume }).catch((err: { code?: number }) => {
        if (err.code !== 404) throw err;
      }),
    );
  await retried(`deleting StorageClass ${storageClass}`, () =>
    kc
      .makeApiClient(StorageV1Api)
      .deleteStorageClass({ name: storageClass })
      .catch((err: { code?: number }) => {
        if (err.code !== 404) throw err;
      }),
  );
  return `deleted claim ${name} of WekaCluster ${namespace}/disks (${phase}) once ${moment} (${before.virtualDrives} virtual drives, ${before.allocated} allocations on it)${crashed ? `, SIGKILLed replica ${crashed.name}` : ''}; ${letGo ? 'it was let go' : 'it was kept'} while the cluster lived, and everything went with the cluster`;
}
