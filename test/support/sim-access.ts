// Reading a fake node's Weka simulator directly, given the simulator's root directory: for the
// invariant checker, which runs under vitest (support/simulator.ts finds the root through the
// harness) and in the chaos engine outside it (test/chaos/, on a control plane of its own).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { simulate } from '../../deploy/local/shared-drives.js';

/** The exit code of a command an injected fault failed (EX_TEMPFAIL). */
export const FAULT_EXIT_CODE = 75;

export interface SimLogEntry {
  argv: string[];
  exitCode: number;
  /** Set on the commands an injected fault failed, e.g. `fail-after-effect`. */
  fault?: string;
  changes: Array<{ kind: string; [k: string]: unknown }>;
}

/**
 * A Weka tool's command on a node (the `--` is added), run again while an injected fault fails it,
 * at most 20 times: the invariant checker's reads must see through the faults.
 */
export async function simRetryingFaultsAt(root: string, node: string, ...argv: string[]): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await simulate(root, node, '--', ...argv);
    } catch (err) {
      if ((err as { code?: unknown }).code !== FAULT_EXIT_CODE || attempt >= 20) throw err;
    }
  }
}

/** Every command the node's simulator ran, in order (none while it has run none). */
export async function simulatorLogAt(root: string, node: string): Promise<SimLogEntry[]> {
  const text = await readFile(join(root, 'nodes', node, 'commands.log'), 'utf8').catch(() => '');
  return text.trim() === ''
    ? []
    : text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as SimLogEntry);
}
