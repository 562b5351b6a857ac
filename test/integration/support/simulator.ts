// Direct access to a fake node's Weka simulator, for preparing nodes and checking invariants
// (the operator itself only reaches the simulator through Kubernetes exec).
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { simulatorMainPath } from '../../../deploy/local/weka-sim/shims.js';
import { parseDriveShow, type DriveInfo } from '../../../src/weka/index.js';
import { simulatorNodeDir } from '../harness.js';

const run = promisify(execFile);

export async function sim(node: string, ...args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [simulatorMainPath(), '--state', simulatorNodeDir(node), ...args]);
  return stdout;
}

export async function showDevice(node: string, device: string): Promise<DriveInfo> {
  return parseDriveShow(await sim(node, '--', 'weka-sign-drive', 'show', '--json', device));
}

export async function createWekaCluster(node: string, name: string): Promise<string> {
  return (JSON.parse(await sim(node, '--', 'weka', 'cluster', 'create', name, '--json')) as { guid: string }).guid;
}

export interface SimLogEntry {
  argv: string[];
  exitCode: number;
  changes: Array<{ kind: string; [k: string]: unknown }>;
}

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
