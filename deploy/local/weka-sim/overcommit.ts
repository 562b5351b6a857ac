// What a node does with a `virtual add` beyond a device's free capacity: refuse it, as the real
// tool does (the default), or sign it and record by how much the device is over-committed. Chaos
// runs use the recording mode, so that a double allocation by the operator reaches the devices
// and the invariant checker, not the simulator, has to catch it. Set per node state directory in
// overcommit.json, under the node lock.
import { isRecord, readJsonIfExists, writeJsonAtomic } from './files.js';
import { OVERCOMMIT_MODES, type OvercommitMode, type SimPaths } from './node-records.js';
import { UsageError, type ToolOutput } from './outcome.js';

export const OVERCOMMIT_USAGE = `usage:
  weka-sim --state DIR overcommit record
  weka-sim --state DIR overcommit refuse`;

function isMode(value: unknown): value is OvercommitMode {
  return (OVERCOMMIT_MODES as readonly unknown[]).includes(value);
}

/** The node's mode; `refuse` when it was never set. */
export function readOvercommitMode(paths: SimPaths): OvercommitMode {
  const value = readJsonIfExists(paths.overcommitFile);
  if (value === undefined) return 'refuse';
  if (!isRecord(value) || !isMode(value['mode']))
    throw new Error(`corrupt over-commit setting ${paths.overcommitFile}`);
  return value['mode'];
}

/** The `overcommit` subcommand. Call under the node lock. */
export function runOvercommitCommand(args: readonly string[], paths: SimPaths): ToolOutput {
  const [mode] = args;
  if (args.length !== 1 || !isMode(mode)) {
    throw new UsageError(`overcommit takes record or refuse, got ${JSON.stringify(args)}\n${OVERCOMMIT_USAGE}`);
  }
  writeJsonAtomic(paths.overcommitFile, { mode });
  const effect = mode === 'record' ? 'signed and recorded' : 'refused';
  return {
    stdout: `Over-commit mode set to ${mode}: a virtual add beyond a device's free capacity is ${effect}\n`,
    changes: [{ kind: 'overcommit-set', mode }],
  };
}
