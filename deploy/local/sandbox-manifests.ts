// What the sandbox creates: three nodes with two TLC and two QLC drives each for sharing and two
// more TLC drives for exclusive use, a sign-drives operation for each kind, two WekaClusters that
// share the first four drives of every node, and a third that takes the other two whole.
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
) {
  return {
    apiVersion: 'weka.weka.io/v1alpha1',
    kind: 'WekaCluster',
    metadata: { name, namespace },
    spec: {
      image: 'quay.io/weka.io/weka-in-container:4.4.10.183',
      nodeSelector: { 'weka.weka.io/sandbox': 'true' },
      dynamicTemplate,
    },
  };
}

/**
 * One cluster per allocation mode: containerCapacity with a TLC:QLC ratio, numDrives x
 * driveCapacity, and numDrives alone (whole drives for each member's exclusive use).
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
];
