// Direct access to a fake node's Weka simulator, for preparing nodes, injecting faults and checking
// invariants (the operator itself only reaches the simulator through Kubernetes exec). The same
// calls as the benchmarks' (deploy/local/shared-drives.ts), on the harness's control plane.
import {
  createSimulatedCluster,
  readSimulatedClusters,
  simulate,
  simulatedClusterJoinIps,
  type SimulatedClusters,
} from '../../deploy/local/shared-drives.js';
import { driveAt, parseSignDriveList, type DriveInfo } from '../../src/weka/index.js';
import type { WekaContainer } from '../../src/api/index.js';
import { wekaContainerName } from '../../src/api/names.js';
import { simulatorRoot } from './harness.js';
import { simRetryingFaultsAt, simulatorLogAt, type SimLogEntry } from './sim-access.js';

export type { SimLogEntry } from './sim-access.js';

/**
 * Runs the simulator on a node's state: its own commands (`sim(node, 'faults', '--clear')`), or a
 * Weka tool's after `--` (`sim(node, '--', 'weka', ...)`).
 */
export async function sim(node: string, ...args: string[]): Promise<string> {
  return simulate(simulatorRoot(), node, ...args);
}

/**
 * Runs a Weka tool in the pod of a drive container (a WekaContainer with its allocation), as the
 * operator's exec does: `inContainerPod(c, 'weka', 'cluster', 'drive', '--json')`.
 */
export async function inContainerPod(c: WekaContainer, ...argv: string[]): Promise<string> {
  const { wekaPort, agentPort } = c.status?.allocations ?? {};
  return sim(
    c.spec.nodeName ?? '',
    ...['--in-pod', '--weka-name', wekaContainerName(c.metadata.namespace ?? '', c.metadata.name ?? '')],
    ...['--weka-port', String(wekaPort), '--agent-port', String(agentPort), '--'],
    ...argv,
  );
}

/**
 * What `weka status --json` is to say of a simulated cluster's health instead of a healthy
 * cluster's figures; each field left out reads as healthy (OK, no data moving, nothing lost).
 */
export interface SimulatedClusterHealth {
  /** The cluster's status instead of OK: REBUILDING, PARTIALLY_PROTECTED, ... */
  readonly status?: string;
  readonly movingData?: boolean;
  /** The rebuild's progress, 0 to 100. */
  readonly progressPercent?: number;
  /** This percentage of the data has lost numFailures (1 or more) of its copies. */
  readonly protection?: { readonly numFailures: number; readonly percent: number };
}

/**
 * Makes the simulated Weka cluster of that GUID unhealthy as `weka status --json` reports it, until
 * clearClusterHealth; replaces any earlier setting, and needs at least one field set. Run through
 * `node`'s simulator: any node that sees the cluster (they share the root's clusters) will do.
 */
export async function setClusterHealth(
  node: string,
  clusterGUID: string,
  health: SimulatedClusterHealth,
): Promise<void> {
  const args = [
    ...(health.status !== undefined ? ['--status', health.status] : []),
    ...(health.movingData ? ['--moving-data'] : []),
    ...(health.progressPercent !== undefined ? ['--progress', String(health.progressPercent)] : []),
    ...(health.protection
      ? ['--failures', String(health.protection.numFailures), '--percent', String(health.protection.percent)]
      : []),
  ];
  await sim(node, 'cluster-health', clusterGUID, ...args);
}

/** Makes the simulated cluster healthy again (a no-op when it has no override or is gone). */
export async function clearClusterHealth(node: string, clusterGUID: string): Promise<void> {
  await sim(node, 'cluster-health', clusterGUID, '--clear');
}

/**
 * Makes the node's physical drive of that serial or physical UUID fail, as a dying NVMe does,
 * until healDrive: the cluster drives on it list INACTIVE on every node and count as not active
 * in `weka status`, and signing on it ends in an I/O error (exit 74). A test switch of the
 * simulator (`weka-sim fail-drive`), not a Weka command; failing a failed drive changes nothing.
 */
export async function failDrive(node: string, serialOrPhysicalUUID: string): Promise<void> {
  await sim(node, 'fail-drive', serialOrPhysicalUUID);
}

/** Heals the drive failDrive failed: a drive on it that was not deactivated meanwhile lists ACTIVE again. */
export async function healDrive(node: string, serialOrPhysicalUUID: string): Promise<void> {
  await sim(node, 'fail-drive', serialOrPhysicalUUID, '--clear');
}

/** A Weka tool's command on a node, run again while an injected fault fails it (see simRetryingFaultsAt). */
export async function simRetryingFaults(node: string, ...argv: string[]): Promise<string> {
  return simRetryingFaultsAt(simulatorRoot(), node, ...argv);
}

export async function showDevice(node: string, device: string): Promise<DriveInfo> {
  return driveAt(parseSignDriveList(await sim(node, '--', 'weka-sign-drive', 'list', '-j')), device);
}

export async function createWekaCluster(node: string, name: string): Promise<string> {
  return createSimulatedCluster(simulatorRoot(), node, name);
}

/** The GUIDs of the simulated Weka clusters there are (of the root's shared set). */
export async function wekaClusters(): Promise<string[]> {
  return (await readSimulatedClusters(simulatorRoot())).clusters.map((c) => c.guid);
}

/** The Weka containers of the simulated cluster of that GUID, as the simulator's state holds them. */
export async function clusterContainers(clusterGUID: string): Promise<SimulatedClusters['containers']> {
  return (await readSimulatedClusters(simulatorRoot())).containers.filter(
    (c) => c.clusterGUID === clusterGUID.toLowerCase(),
  );
}

/** The addresses a standalone container joins the simulated cluster of that GUID through (spec.joinIps). */
export async function joinIpsOf(clusterGUID: string): Promise<string[]> {
  const joinIps = await simulatedClusterJoinIps(simulatorRoot(), clusterGUID);
  if (joinIps.length === 0)
    throw new Error(`the simulated Weka cluster ${clusterGUID} has no container with an address`);
  return joinIps;
}

/** Every command the node's simulator ran, in order (none while it has run none). */
export async function simulatorLog(node: string): Promise<SimLogEntry[]> {
  return simulatorLogAt(simulatorRoot(), node);
}

/** How many times each change kind happened per subject (e.g. virtual-add per virtual UUID). */
export function changeCounts(entries: SimLogEntry[], kind: string, key: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const e of entries) {
    for (const c of e.changes) {
      if (c.kind !== kind) continue;
      const subject = String(c[key]);
      counts.set(subject, (counts.get(subject) ?? 0) + 1);
    }
  }
  return counts;
}

/**
 * What happened to one virtual drive, in order: `virtual-add 500` (signed, with its GiB),
 * `drive-add`, `drive-remove`, `virtual-remove`. A drive left alone shows only what made it.
 */
export function virtualDriveHistory(entries: readonly SimLogEntry[], virtualUUID: string): string[] {
  return entries.flatMap((e) =>
    e.changes
      .filter((c) => c['virtualUUID'] === virtualUUID)
      .map((c) => (c.kind === 'virtual-add' ? `virtual-add ${String(c['sizeGiB'])}` : c.kind)),
  );
}
