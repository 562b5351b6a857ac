// One simulated node's state directory: a JSON header per device, the fault settings, the lock and
// the append-only command log. Cluster state lives elsewhere (cluster-state.ts) because a Weka
// cluster spans nodes.
import { appendFileSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { checkHeader } from './device-header.js';
import { isRecord, readJsonIfExists, removeIfExists, writeJsonAtomic } from './files.js';
import type { Change } from './outcome.js';
import type { DeviceHeader, SimPaths } from './node-records.js';

/**
 * The file in a node's state directory that names the directory of the clusters the node sees,
 * when the node has its own set (nodes that name the same directory share it).
 */
export const CLUSTERS_DIR_FILE = 'clusters-dir';

/**
 * Clusters are those of `clustersDir` when given, else those the node's CLUSTERS_DIR_FILE names,
 * else <state>/../../clusters: shared by every node under the same root.
 */
export function simPaths(stateDir: string, clustersDir?: string): SimPaths {
  const state = resolve(stateDir);
  const clusters = resolve(clustersDir ?? namedClustersDir(state) ?? join(state, '..', '..', 'clusters'));
  return {
    stateDir: state,
    nodeName: basename(state),
    devicesDir: join(state, 'devices'),
    faultsFile: join(state, 'faults.json'),
    latencyWaitsDir: join(state, 'latency-waits'),
    overcommitFile: join(state, 'overcommit.json'),
    nodeLock: join(state, 'lock'),
    logFile: join(state, 'commands.log'),
    journalFile: join(state, 'pending-commit.json'),
    clustersDir: clusters,
    clustersFile: join(clusters, 'clusters.json'),
    clustersLock: join(clusters, 'lock'),
  };
}

function namedClustersDir(state: string): string | undefined {
  const file = join(state, CLUSTERS_DIR_FILE);
  let named: string;
  try {
    named = readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  if (named === '') throw new Error(`${file} names no directory`);
  return named;
}

export function ensureNodeDirs(paths: SimPaths): void {
  mkdirSync(paths.devicesDir, { recursive: true });
}

/** "/dev/nvme0n1" → "nvme0n1.json"; "/dev/disk/by-id/x" → "disk%2Fby-id%2Fx.json". */
export function deviceFileName(devicePath: string): string {
  return `${encodeURIComponent(devicePath.slice('/dev/'.length))}.json`;
}

export function loadDevices(paths: SimPaths): Map<string, DeviceHeader> {
  const devices = new Map<string, DeviceHeader>();
  for (const name of readdirSync(paths.devicesDir)
    .filter((n) => n.endsWith('.json'))
    .sort()) {
    const file = join(paths.devicesDir, name);
    const header = checkHeader(readJsonIfExists(file), file);
    if (header) devices.set(header.devicePath, header);
  }
  return devices;
}

export function saveDevice(paths: SimPaths, header: DeviceHeader): void {
  writeJsonAtomic(join(paths.devicesDir, deviceFileName(header.devicePath)), header);
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
export function appendLog(paths: SimPaths, entry: LogEntry): void {
  appendFileSync(paths.logFile, `${JSON.stringify(entry)}\n`);
}

/**
 * Makes a command's device writes and its log line durable together: the journal first, then the
 * devices and the line, then the journal goes. A simulator killed in between (kwok kills a command
 * whose exec stream closed) leaves the journal, and the node's next command finishes the commit
 * before it runs (finishPendingCommit). Without it a change could be on a device with no line in
 * commands.log, and what the tests count from the log would be wrong. (The clusters file is
 * written inside its own lock, before the line, as the weka tool runs.)
 */
export function commitCommand(paths: SimPaths, devices: readonly DeviceHeader[], entry: LogEntry): void {
  if (devices.length > 0) writeJsonAtomic(paths.journalFile, { devices, entry });
  for (const header of devices) saveDevice(paths, header);
  appendLog(paths, entry);
  if (devices.length > 0) removeIfExists(paths.journalFile);
}

/** Finishes the commit a killed command left (under the node lock, before the next command). */
export function finishPendingCommit(paths: SimPaths): void {
  const pending = readJsonIfExists(paths.journalFile);
  if (pending === undefined) return;
  if (!isRecord(pending) || !Array.isArray(pending['devices']) || !isRecord(pending['entry']))
    throw new Error(`corrupt state file ${paths.journalFile}: not a pending commit`);
  for (const value of pending['devices']) {
    const header = checkHeader(value, paths.journalFile);
    if (header) saveDevice(paths, header);
  }
  // Killed after the line was written: it is the log's last line, and is not written twice.
  const entry = pending['entry'] as unknown as LogEntry;
  const log = readOrEmpty(paths.logFile);
  if (!log.endsWith(`${JSON.stringify(entry)}\n`)) appendLog(paths, entry);
  removeIfExists(paths.journalFile);
}

/** The file's text, or '' when it cannot be read: a log not written yet has no line to repeat. */
function readOrEmpty(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
