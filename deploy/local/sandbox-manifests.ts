// What the sandbox creates: three nodes with two TLC and two QLC drives each for sharing, two more
// TLC drives for exclusive use and two that are local block volumes of a StorageClass; a
// sign-drives operation for each of the first two kinds; two WekaClusters that share the first four
// drives of every node, a third that takes the next two whole, and a fourth whose device set claims
// the volumes (and shares them with every cluster on the node).
import type { SimulatedDevice } from './fake-nodes.js';

export const SANDBOX_NODES = ['weka-node-1', 'weka-node-2', 'weka-node-3'];
export const SANDBOX_OPERATOR_NAMESPACE = 'weka-operator-system';

export const SANDBOX_DEVICES: SimulatedDevice[] = [
  { path: '/dev/nvme0n1', capacityGiB: 7680, type: 'TLC' },
  { path: '/dev/nvme1n1', capacityGiB: 7680, type: 'TLC' },
  { path: '/dev/nvme2n1', capacityGiB: 30720, type: 'QLC' },
  { path: '/dev/nvme3n1', capacityGiB: 30720, type: 'QLC' },
];

/** Devices of their own for the cluster on exclusive drives. */
export const SANDBOX_WHOLE_DEVICES: SimulatedDevice[] = [
  { path: '/dev/nvme4n1', capacityGiB: 7680, type: 'TLC' },
  { path: '/dev/nvme5n1', capacityGiB: 7680, type: 'TLC' },
];

/** Disks the sandbox offers as local block PersistentVolumes, as sig-storage-local-static-provisioner would. */
export const SANDBOX_VOLUME_DEVICES: SimulatedDevice[] = [
  { path: '/dev/nvme6n1', capacityGiB: 3840, type: 'TLC' },
  { path: '/dev/nvme7n1', capacityGiB: 3840, type: 'TLC' },
];
export const SANDBOX_STORAGE_CLASS = 'local-nvme';

function signOperation(name: string, shared: boolean, devices: readonly SimulatedDevice[]) {
  return {
    apiVersion: 'weka.weka.io/v1alpha1',
    kind: 'WekaManualOperation',
    metadata: { name, namespace: SANDBOX_OPERATOR_NAMESPACE },
    spec: {
      action: 'sign-drives',
      payload: {
        signDrivesPayload: {
          type: 'device-paths',
          shared,
          nodeSelector: { 'weka.weka.io/sandbox': 'true' },
          devicePaths: devices.map((d) => d.path),
        },
      },
    },
  };
}

export const SANDBOX_OPERATION = signOperation('sign-sandbox-drives', true, SANDBOX_DEVICES);
export const SANDBOX_WHOLE_OPERATION = signOperation('sign-sandbox-whole-drives', false, SANDBOX_WHOLE_DEVICES);

function sandboxCluster(
  namespace: string,
  name: string,
  dynamicTemplate: Record<string, unknown> & { driveContainers: number },
  spec: Record<string, unknown> = {},
) {
  return {
    apiVersion: 'weka.weka.io/v1alpha1',
    kind: 'WekaCluster',
    metadata: { name, namespace },
    spec: {
      image: 'quay.io/weka.io/weka-in-container:4.4.10.183',
      nodeSelector: { 'weka.weka.io/sandbox': 'true' },
      dynamicTemplate,
      ...spec,
    },
  };
}

/**
 * One cluster per allocation mode: containerCapacity with a TLC:QLC ratio, numDrives x
 * driveCapacity, and numDrives alone (whole drives for each member's exclusive use); and one that
 * brings drives of its own from block-mode PVCs (a device set).
 */
export const SANDBOX_CLUSTERS = [
  sandboxCluster('tenant-a', 'analytics', {
    driveContainers: 3,
    driveCores: 2,
    containerCapacity: 12000,
    driveTypesRatio: { tlc: 1, qlc: 3 },
  }),
  sandboxCluster('tenant-b', 'builds', { driveContainers: 3, driveCores: 2, numDrives: 4, driveCapacity: 1000 }),
  sandboxCluster('tenant-c', 'databases', { driveContainers: 3, driveCores: 2, numDrives: 2 }),
  sandboxCluster(
    'tenant-d',
    'streams',
    { driveContainers: 3, driveCores: 1, containerCapacity: 2000, driveTypesRatio: { tlc: 1, qlc: 0 } },
    {
      storageClassDeviceSets: [
        {
          name: 'nvme',
          count: SANDBOX_VOLUME_DEVICES.length,
          config: { driveType: 'TLC' },
          volumeClaimTemplates: [
            {
              spec: {
                storageClassName: SANDBOX_STORAGE_CLASS,
                volumeMode: 'Block',
                resources: { requests: { storage: '3840Gi' } },
              },
            },
          ],
        },
      ],
    },
  ),
];
