// One simulated node's state directory: a JSON header per device, the fault settings, the lock and
// the append-only command log. Cluster state lives elsewhere (cluster-state.ts) because a Weka
// cluster spans nodes.
import { appendFile, mkdir, readdir } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { checkHeader } from './device-header.js';
import { readJsonIfExists, writeJsonAtomic } from './files.js';
import type { Change } from './outcome.js';

export type DriveType = 'TLC' | 'QLC';

/** 'exclusive': signed for one Weka cluster's own use (no subcommand); 'proxy': for drive sharing. */
export type DeviceSignature = 'none' | 'proxy' | 'exclusive';

/** A partition that is not Weka's, as a node admin left it (`weka-sim device --partition`). */
export interface PartitionRecord {
  /** The partition's device path, e.g. /dev/nvme0n1p1 or /dev/sda1. */
  name: string;
  fstype: string | null;
  mountpoint: string | null;
}

export interface VirtualDriveRecord {
  virtualUUID: string;
  ownerClusterGUID: string;
  sizeGiB: number;
}

/** The header the simulator keeps for one physical device (what the real tool writes on disk). */
export interface DeviceHeader {
  devicePath: string;
  serial: string;
  capacityGiB: number;
  type: DriveType;
  /** lsblk's MODEL and VENDOR. */
  model: string;
  vendor: string;
  /** Non-Weka partitions; signing for Weka replaces them with its one partition. */
  partitions: PartitionRecord[];
  /** A filesystem directly on the disk (no partition table), and where it is mounted. */
  fstype: string | null;
  mountpoint: string | null;
  /** Non-zero content with no recognised signature (no partition table, filesystem or Weka header). */
  dataPresent: boolean;
  signature: DeviceSignature;
  /** Assigned by signing, proxy or exclusive. */
  physicalUUID: string | null;
  /** An exclusive drive's claiming cluster; null: signed but unclaimed (always null unless exclusive). */
  clusterGUID: string | null;
  virtualDrives: VirtualDriveRecord[];
}

export interface SimPaths {
  readonly stateDir: string;
  /** The node's name: the state directory's base name. */
  readonly nodeName: string;
  readonly devicesDir: string;
  readonly faultsFile: string;
  /** The over-commit mode (overcommit.ts); absent: refuse. */
  readonly overcommitFile: string;
  readonly nodeLock: string;
  readonly logFile: string;
  readonly clustersDir: string;
  readonly clustersFile: string;
  readonly clustersLock: string;
}

/** Clusters default to <state>/../../clusters: shared by every node under the same root. */
export function simPaths(stateDir: string, clustersDir?: string): SimPaths {
  const state = resolve(stateDir);
  const clusters = resolve(clustersDir ?? join(state, '..', '..', 'clusters'));
  return {
    stateDir: state,
    nodeName: basename(state),
    devicesDir: join(state, 'devices'),
    faultsFile: join(state, 'faults.json'),
    overcommitFile: join(state, 'overcommit.json'),
    nodeLock: join(state, 'lock'),
    logFile: join(state, 'commands.log'),
    clustersDir: clusters,
    clustersFile: join(clusters, 'clusters.json'),
    clustersLock: join(clusters, 'lock'),
  };
}

export async function ensureNodeDirs(paths: SimPaths): Promise<void> {
  await mkdir(paths.devicesDir, { recursive: true });
}

/** "/dev/nvme0n1" → "nvme0n1.json"; "/dev/disk/by-id/x" → "disk%2Fby-id%2Fx.json". */
export function deviceFileName(devicePath: string): string {
  return `${encodeURIComponent(devicePath.slice('/dev/'.length))}.json`;
}

export async function loadDevices(paths: SimPaths): Promise<Map<string, DeviceHeader>> {
  const devices = new Map<string, DeviceHeader>();
  for (const name of (await readdir(paths.devicesDir)).filter((n) => n.endsWith('.json')).sort()) {
    const file = join(paths.devicesDir, name);
    const header = checkHeader(await readJsonIfExists(file), file);
    if (header) devices.set(header.devicePath, header);
  }
  return devices;
}

export async function saveDevice(paths: SimPaths, header: DeviceHeader): Promise<void> {
  await writeJsonAtomic(join(paths.devicesDir, deviceFileName(header.devicePath)), header);
}

export interface LogEntry {
  readonly time: string;
  readonly argv: readonly string[];
  readonly exitCode: number;
  readonly changes: readonly Change[];
  /** Set when fault injection decided the outcome. */
  readonly fault?: 'fail-before-effect' | 'fail-after-effect';
  /** The stderr message of a refused or failed command. */
  readonly message?: string;
}

/** One JSON line per command; written under the node lock, so lines never interleave. */
export async function appendLog(paths: SimPaths, entry: LogEntry): Promise<void> {
  await appendFile(paths.logFile, `${JSON.stringify(entry)}\n`);
}
