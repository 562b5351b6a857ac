// Fault injection, set per node state directory in faults.json. Each tool command draws two
// numbers from a seeded sequence (one for "fail before effect", one for "fail after effect"), and
// the draw counter is kept in the same file under the node lock, so a given seed and command
// order always fail the same commands.
import { integerArg, optional, parseArgs, positionals } from './args.js';
import { isRecord, readJsonIfExists, removeIfExists, writeJsonAtomic } from './files.js';
import type { SimPaths } from './node-state.js';
import { UsageError, type ToolOutput } from './outcome.js';

export interface FaultSettings {
  /** Added before each tool command, outside the lock (commands on one node still overlap). */
  readonly latencyMs: number;
  /** Probability that a command fails with exit 75 and changes nothing. */
  readonly failRate: number;
  /** Probability that a command makes its change, logs it, then exits 75 with no stdout. */
  readonly failAfterEffectRate: number;
  readonly seed: number;
  /** How many commands have drawn from the sequence so far. */
  readonly draws: number;
}

export interface FaultDraw {
  readonly failBeforeEffect: boolean;
  readonly failAfterEffect: boolean;
}

export const FAULTS_USAGE = `usage:
  weka-sim --state DIR faults [--latency-ms N] [--fail-rate P] [--fail-after-effect-rate P] [--seed S]
  weka-sim --state DIR faults --clear`;

export function readFaults(paths: SimPaths): FaultSettings | undefined {
  const value = readJsonIfExists(paths.faultsFile);
  if (value === undefined) return undefined;
  const ok =
    isRecord(value) &&
    ['latencyMs', 'failRate', 'failAfterEffectRate', 'seed', 'draws'].every((key) => typeof value[key] === 'number');
  if (!ok) throw new Error(`corrupt fault settings ${paths.faultsFile}`);
  return value as unknown as FaultSettings;
}

/** Draws this command's fate and records that it drew. Call under the node lock. */
export function drawFaults(paths: SimPaths, settings: FaultSettings): FaultDraw {
  const n = settings.draws;
  writeJsonAtomic(paths.faultsFile, { ...settings, draws: n + 1 });
  return {
    failBeforeEffect: uniform(settings.seed, 2 * n) < settings.failRate,
    failAfterEffect: uniform(settings.seed, 2 * n + 1) < settings.failAfterEffectRate,
  };
}

/** The `faults` subcommand. Call under the node lock. */
export function runFaultsCommand(args: readonly string[], paths: SimPaths): ToolOutput {
  const parsed = parseArgs(args, {
    values: ['--latency-ms', '--fail-rate', '--fail-after-effect-rate', '--seed'],
    flags: ['--clear'],
  });
  positionals(parsed, []);
  if (parsed.flags.has('--clear')) {
    if (parsed.values.size > 0) throw new UsageError(`--clear takes no other options\n${FAULTS_USAGE}`);
    removeIfExists(paths.faultsFile);
    return { stdout: 'Fault injection cleared\n', changes: [{ kind: 'faults-clear' }] };
  }
  if (parsed.values.size === 0) throw new UsageError(`nothing to set\n${FAULTS_USAGE}`);
  const latency = optional(parsed, '--latency-ms');
  const seed = optional(parsed, '--seed');
  const settings: FaultSettings = {
    latencyMs: latency === undefined ? 0 : integerArg('--latency-ms', latency, 0),
    failRate: rate(optional(parsed, '--fail-rate'), '--fail-rate'),
    failAfterEffectRate: rate(optional(parsed, '--fail-after-effect-rate'), '--fail-after-effect-rate'),
    seed: seed === undefined ? 1 : integerArg('--seed', seed, 0),
    draws: 0,
  };
  writeJsonAtomic(paths.faultsFile, settings);
  return {
    stdout: `Fault injection set: ${JSON.stringify(settings)}\n`,
    changes: [{ kind: 'faults-set', faults: settings }],
  };
}

function rate(text: string | undefined, option: string): number {
  if (text === undefined) return 0;
  const value = Number(text);
  if (!/^\d*\.?\d+$/.test(text) || !(value >= 0 && value <= 1)) {
    throw new UsageError(`${option} must be a probability between 0 and 1, got ${JSON.stringify(text)}`);
  }
  return value;
}

/** A number in [0, 1) determined by (seed, n): an integer hash, so no state beyond the counter. */
export function uniform(seed: number, n: number): number {
  return mix(mix(seed >>> 0) ^ (n >>> 0)) / 2 ** 32;
}

function mix(input: number): number {
  let x = input >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x7feb352d) >>> 0;
  x = Math.imul(x ^ (x >>> 15), 0x846ca68b) >>> 0;
  return (x ^ (x >>> 16)) >>> 0;
}
