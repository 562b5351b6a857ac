// Direct access to a fake node's Weka simulator, for preparing nodes, injecting faults and checking
// invariants (the operator itself only reaches the simulator through Kubernetes exec). The same
// calls as the benchmarks' (deploy/local/shared-drives.ts), on the harness's control plane.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createSimulatedCluster, simulate } from '../../deploy/local/shared-drives.js';
import { parseDriveShow, type DriveInfo } from '../../src/weka/index.js';
import { simulatorNodeDir, simulatorRoot } from './harness.js';

/** The exit code of a command an injected fault failed (EX_TEMPFAIL). */
const FAULT_EXIT_CODE = 75;

/**
 * Runs the simulator on a node's state: its own commands (`sim(node, 'faults', '--clear')`), or a
 * Weka tool's after `--` (`sim(node, '--', 'weka', ...)`).
 */
export async function sim(node: string, ...args: string[]): Promise<string> {
  return simulate(simulatorRoot(), node, ...args);
}

/**
 * A Weka tool's command on a node (the `--` is added), run again while an injected fault fails it,
 * at most 20 times: for the invariant checker's reads, which must see through the faults.
 */
export async function simRetryingFaults(node: string, ...argv: string[]): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await sim(node, '--', ...argv);
    } catch (err) {
      if ((err as { code?: unknown }).code !== FAULT_EXIT_CODE || attempt >= 20) throw err;
    }
  }
}

export async function showDevice(node: string, device: string): Promise<DriveInfo> {
  return parseDriveShow(await sim(node, '--', 'weka-sign-drive', 'show', '--json', device));
}

export async function createWekaCluster(node: string, name: string): Promise<string> {
  return createSimulatedCluster(simulatorRoot(), node, name);
}

export interface SimLogEntry {
  argv: string[];
  exitCode: number;
  /** Set on the commands an injected fault failed, e.g. `fail-after-effect`. */
  fault?: string;
  changes: Array<{ kind: string; [k: string]: unknown }>;
}

/** Every command the node's simulator ran, in order (none while it has run none). */
export async function simulatorLog(node: string): Promise<SimLogEntry[]> {
  const text = await readFile(join(simulatorNodeDir(node), 'commands.log'), 'utf8').catch(() => '');
  return text.trim() === ''
    ? []
    : text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as SimLogEntry);
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
