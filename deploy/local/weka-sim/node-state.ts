// One simulated node's state directory: a JSON header per device, the fault settings, the lock and
// the append-only command log. Cluster state lives elsewhere (cluster-state.ts) because a Weka
// cluster spans nodes.
import { appendFile, mkdir, readdir } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { isRecord, readJsonIfExists, writeJsonAtomic } from './files.js';
import type { Change } from './outcome.js';

export type DriveType = 'TLC' | 'QLC';

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
  signature: 'none' | 'proxy';
  physicalUUID: string | null;
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

function checkHeader(value: unknown, file: string): DeviceHeader | undefined {
  if (value === undefined) return undefined; // removed between readdir and read: a temp file
  const ok =
    isRecord(value) &&
    typeof value['devicePath'] === 'string' &&
    typeof value['serial'] === 'string' &&
    typeof value['capacityGiB'] === 'number' &&
    (value['type'] === 'TLC' || value['type'] === 'QLC') &&
    (value['signature'] === 'none' || value['signature'] === 'proxy') &&
    (value['physicalUUID'] === null || typeof value['physicalUUID'] === 'string') &&
    Array.isArray(value['virtualDrives']);
  if (!ok) throw new Error(`corrupt device header ${file}`);
  return value as unknown as DeviceHeader;
}
