// Cluster state shared by all nodes under one simulator root: clusters, their containers and the
// drives added to them. Container IDs and drive UUIDs are unique across the root, so a container
// ID alone names its cluster and a drive UUID alone names its drive.
import { isRecord, readJsonIfExists, writeJsonAtomic } from './files.js';
import type { ClusterHealthOverride, SimPaths } from './node-records.js';

export type { ClusterHealthOverride } from './node-records.js';
import type { NodeView } from './node-view.js';
import { SimRefusal } from './outcome.js';

export interface ClusterRecord {
  name: string;
  guid: string;
  /** What `weka status` says of its health instead of a healthy cluster's figures, while set. */
  health?: ClusterHealthOverride;
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
  /** Its pod is gone, and with it its process: it holds no port on its host until its pod runs again. */
  processGone?: true;
}

/**
 * A drive in a cluster: a virtual drive signed on a proxy device (virtualUUID set), or a whole
 * device signed for exclusive use; devicePath and serial are those of the device either way.
 */
export interface DriveRecord {
  /** Weka's UUID of the drive: a virtual drive's own virtual UUID, a new one for a whole drive. */
  driveUUID: string;
  /** The virtual drive's UUID, as given to `drive add`; null for a whole drive. */
  virtualUUID: string | null;
  /** The device on `node` the drive is on. */
  devicePath: string;
  serial: string;
  /** The pool given to `drive add` (`--pool`), null when none was. */
  pool: string | null;
  containerId: number;
  sizeGiB: number;
  /** The node whose device holds the drive (where `drive add` ran). */
  node: string;
  /** ACTIVE from `drive add`; INACTIVE after `drive deactivate`; `drive remove` needs INACTIVE. */
  status: 'ACTIVE' | 'INACTIVE';
  /** When it was added, as an ISO 8601 time. */
  addedTime: string;
}

/**
 * The Weka container a pod runs, as its image sets it up from the pod's environment (NAME, PORT,
 * AGENT_PORT, MANAGEMENT_IP, JOIN_IPS): it lives on its host, across pods of the same name there,
 * as the real one's configuration does under /opt/weka. In a cluster when a ContainerRecord of its
 * host and name is; a "stem" otherwise.
 */
export interface LocalContainerRecord {
  hostname: string;
  name: string;
  basePort: number;
  agentPort: number;
  /** Its management IP, from its latest pod's MANAGEMENT_IP. */
  ip?: string;
  /** Set by `weka local resources join-ips`, in force once applied (`apply -f`). */
  stagedJoinIps?: string[];
  /** Where it joins through when it starts (JOIN_IPS, or applied resources). */
  joinIps?: string[];
}

export interface ClusterState {
  nextContainerId: number;
  clusters: ClusterRecord[];
  containers: ContainerRecord[];
  drives: DriveRecord[];
  locals: LocalContainerRecord[];
  /** The physical drives that failed (`weka-sim fail-drive`, failed-drives.ts); absent: none. */
  failedDevices?: FailedDeviceRecord[];
}

/**
 * A node's physical drive that failed, named by its serial: its physical UUID changes when it is
 * signed again, its hardware does not. Kept here, beside the drives on it, because every member's
 * `weka` lists those drives, on whatever node it runs.
 */
export interface FailedDeviceRecord {
  node: string;
  serial: string;
}

/** What a pod's environment says of the Weka container it runs (its shim passes it on). */
export interface PodWekaEnv {
  readonly name: string;
  readonly basePort: number;
  readonly agentPort: number;
  readonly ip?: string | undefined;
  readonly joinIps?: readonly string[] | undefined;
}

/** What a `weka` command handler works on: the node it runs on and the cluster state, both in memory. */
export interface WekaContext {
  readonly node: NodeView;
  readonly clusters: ClusterState;
  readonly newUUID: () => string;
  /** The Weka container of the pod the command runs in; undefined on the node or in a pod without one. */
  readonly pod?: PodWekaEnv | undefined;
}

export function emptyClusterState(): ClusterState {
  return { nextContainerId: 0, clusters: [], containers: [], drives: [], locals: [] };
}

export function loadClusters(paths: SimPaths): ClusterState {
  const value = readJsonIfExists(paths.clustersFile);
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
  state.locals ??= [];
  return state;
}

export function saveClusters(paths: SimPaths, state: ClusterState): void {
  writeJsonAtomic(paths.clustersFile, state);
}

export function requireCluster(clusters: ClusterState, guid: string): ClusterRecord {
  const cluster = clusters.clusters.find((c) => c.guid === guid);
  if (!cluster) throw new SimRefusal(`no cluster with GUID ${guid}`);
  return cluster;
}

export function requireContainer(clusters: ClusterState, containerId: number): ContainerRecord {
  const container = clusters.containers.find((c) => c.containerId === containerId);
  if (!container) throw new SimRefusal(`no container with ID ${containerId}`);
  return container;
}
