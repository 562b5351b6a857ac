// Local block PersistentVolumes as sig-storage-local-static-provisioner creates them for a node's
// disks, and the StorageClass they belong to (no provisioner, WaitForFirstConsumer): a claim binds
// once the scheduler has placed its first consumer, to a volume on that consumer's node. In the
// local control plane each volume's path is one of the node's simulated devices.
import { CoreV1Api, StorageV1Api, type KubeConfig, type V1PersistentVolume } from '@kubernetes/client-node';
import { shortHash } from '../../src/manifests/device-set-pods.js';

export interface LocalBlockVolume {
  readonly node: string;
  /** The device on the node, e.g. /dev/nvme2n1. */
  readonly path: string;
  readonly capacityGiB: number;
  readonly storageClass: string;
}

export function localBlockVolume(v: LocalBlockVolume): V1PersistentVolume {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: {
      // As the provisioner names them: a hash of the path, the node and the class.
      name: `local-pv-${shortHash(`${v.path}\0${v.node}\0${v.storageClass}`)}`,
      annotations: { 'pv.kubernetes.io/provisioned-by': `local-volume-provisioner-${v.node}` },
    },
    spec: {
      capacity: { storage: `${v.capacityGiB}Gi` },
      accessModes: ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: 'Retain',
      storageClassName: v.storageClass,
      volumeMode: 'Block',
      local: { path: v.path },
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [v.node] }] },
          ],
        },
      },
    },
  };
}

/** Creates the StorageClass (when missing) and the volumes; returns the volumes' names. */
export async function createLocalBlockVolumes(
  kc: KubeConfig,
  storageClass: string,
  volumes: readonly Omit<LocalBlockVolume, 'storageClass'>[],
): Promise<string[]> {
  const alreadyThere = (err: unknown) => {
    if ((err as { code?: number }).code !== 409) throw err;
  };
  await kc
    .makeApiClient(StorageV1Api)
    .createStorageClass({
      body: {
        metadata: { name: storageClass },
        provisioner: 'kubernetes.io/no-provisioner',
        volumeBindingMode: 'WaitForFirstConsumer',
        reclaimPolicy: 'Retain',
      },
    })
    .catch(alreadyThere);
  const core = kc.makeApiClient(CoreV1Api);
  const names: string[] = [];
  for (const v of volumes) {
    const body = localBlockVolume({ ...v, storageClass });
    await core.createPersistentVolume({ body }).catch(alreadyThere);
    names.push(body.metadata!.name!);
  }
  return names;
}
