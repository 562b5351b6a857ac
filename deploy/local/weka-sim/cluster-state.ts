// Cluster state shared by all nodes under one simulator root: clusters, their containers and the
// drives added to them. Container IDs and drive UUIDs are unique across the root, so a container
// ID alone names its cluster and a drive UUID alone names its drive.
import { isRecord, readJsonIfExists, writeJsonAtomic } from './files.js';
import type { SimPaths } from './node-state.js';

export interface ClusterRecord {
  name: string;
  guid: string;
}

export type ContainerStatus = 'ACTIVE' | 'INACTIVE';

export interface ContainerRecord {
  containerId: number;
  clusterGUID: string;
  name: string;
  hostname: string;
  /** First of the WEKA_PORT_BLOCK_SIZE ports the container listens on, on its host (`--base-port`). */
  basePort?: number;
  /** Its agent's port on its host (`--agent-port`). */
  agentPort?: number;
  /** ACTIVE from `container add`, INACTIVE after `container deactivate`; `container remove` needs INACTIVE. */
  status: ContainerStatus;
}

export interface DriveRecord {
  driveUUID: string;
  virtualUUID: string;
  containerId: number;
  sizeGiB: number;
  /** The node whose device holds the virtual drive (where `drive add` ran). */
  node: string;
  status: 'ACTIVE';
}

export interface ClusterState {
  nextContainerId: number;
  clusters: ClusterRecord[];
  containers: ContainerRecord[];
  drives: DriveRecord[];
}

export function emptyClusterState(): ClusterState {
  return { nextContainerId: 0, clusters: [], containers: [], drives: [] };
}

export async function loadClusters(paths: SimPaths): Promise<ClusterState> {
  const value = await readJsonIfExists(paths.clustersFile);
  if (value === undefined) return emptyClusterState();
  const ok =
    isRecord(value) &&
    typeof value['nextContainerId'] === 'number' &&
    Array.isArray(value['clusters']) &&
    Array.isArray(value['containers']) &&
    Array.isArray(value['drives']);
  if (!ok) throw new Error(`corrupt cluster state ${paths.clustersFile}`);
  const state = value as unknown as ClusterState;
  // State written before containers had a status: every container then was active.
  for (const container of state.containers) container.status ??= 'ACTIVE';
  return state;
}

export async function saveClusters(paths: SimPaths, state: ClusterState): Promise<void> {
  await writeJsonAtomic(paths.clustersFile, state);
}
