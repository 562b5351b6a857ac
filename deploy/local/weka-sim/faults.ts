// Fault injection, set per node state directory in faults.json. Each tool command draws two
// numbers from a seeded sequence (one for "fail before effect", one for "fail after effect"), and
// the draw counter is kept in the same file under the node lock, so a given seed and command
// order always fail the same commands.
import { mkdirSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { integerArg, optional, parseArgs, positionals } from './args.js';
import { isRecord, readJsonIfExists, removeIfExists, writeJsonAtomic } from './files.js';
import { errorCode } from './lock.js';
import type { SimPaths } from './node-records.js';
import { UsageError, type ToolOutput } from './outcome.js';

export interface FaultSettings {
  /** Added before each tool command, outside the lock (commands on one node still overlap). */
  readonly latencyMs: number;
  /** Only commands whose words start with these words are slowed (the tool's name first); all when absent. */
  readonly latencyFor?: readonly string[];
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
  weka-sim --state DIR faults [--latency-ms N [--latency-for "TOOL WORD..."]] [--fail-rate P]
                              [--fail-after-effect-rate P] [--seed S]
  weka-sim --state DIR faults --clear
  weka-sim --state DIR faults --waiting`;

export function readFaults(paths: SimPaths): FaultSettings | undefined {
  const value = readJsonIfExists(paths.faultsFile);
  if (value === undefined) return undefined;
  const ok =
    isRecord(value) &&
    ['latencyMs', 'failRate', 'failAfterEffectRate', 'seed', 'draws'].every((key) => typeof value[key] === 'number') &&
    (value['latencyFor'] === undefined ||
      (Array.isArray(value['latencyFor']) && value['latencyFor'].every((w) => typeof w === 'string')));
  if (!ok) throw new Error(`corrupt fault settings ${paths.faultsFile}`);
  return value as unknown as FaultSettings;
}

/** How long a tool command (its words, the tool's name first) sleeps before it runs. */
export function latencyOf(settings: FaultSettings | undefined, argv: readonly string[]): number {
  if (!settings) return 0;
  const words = [basename(argv[0] ?? ''), ...argv.slice(1)];
  const slowed = settings.latencyFor?.every((word, i) => words[i] === word) ?? true;
  return slowed ? settings.latencyMs : 0;
}

let waits = 0;

/**
 * Sleeps a command's latency with the command listed in the node's latencyWaitsDir meanwhile, so a
 * test can tell that a command has reached the node and not yet run (`faults --waiting`).
 */
export async function waitOutLatency(
  paths: SimPaths,
  argv: readonly string[],
  ms: number,
  sleep: (ms: number) => Promise<void>,
): Promise<void> {
  mkdirSync(paths.latencyWaitsDir, { recursive: true });
  const file = join(paths.latencyWaitsDir, `${process.pid}.${waits++}.json`);
  writeJsonAtomic(file, { argv: [basename(argv[0] ?? ''), ...argv.slice(1)], since: new Date().toISOString() });
  try {
    await sleep(ms);
  } finally {
    removeIfExists(file);
  }
}

/** The commands sleeping out their latency now, one JSON line each ({argv, since}), oldest first. */
function listLatencyWaits(paths: SimPaths): string {
  let names: string[];
  try {
    names = readdirSync(paths.latencyWaitsDir).filter((name) => name.endsWith('.json'));
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return '';
    throw err;
  }
  const waiting = names
    .map((name) => readJsonIfExists(join(paths.latencyWaitsDir, name)))
    .filter((wait): wait is Record<string, unknown> => isRecord(wait))
    .sort((a, b) => String(a['since']).localeCompare(String(b['since'])));
  return waiting.map((wait) => `${JSON.stringify(wait)}\n`).join('');
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
    values: ['--latency-ms', '--latency-for', '--fail-rate', '--fail-after-effect-rate', '--seed'],
    flags: ['--clear', '--waiting'],
  });
  positionals(parsed, []);
  if (parsed.flags.has('--waiting')) {
    if (parsed.values.size > 0 || parsed.flags.size > 1)
      throw new UsageError(`--waiting takes no other options\n${FAULTS_USAGE}`);
    return { stdout: listLatencyWaits(paths), changes: [] };
  }
  if (parsed.flags.has('--clear')) {
    if (parsed.values.size > 0) throw new UsageError(`--clear takes no other options\n${FAULTS_USAGE}`);
    removeIfExists(paths.faultsFile);
    return { stdout: 'Fault injection cleared\n', changes: [{ kind: 'faults-clear' }] };
  }
  if (parsed.values.size === 0) throw new UsageError(`nothing to set\n${FAULTS_USAGE}`);
  const latency = optional(parsed, '--latency-ms');
  const seed = optional(parsed, '--seed');
  const latencyFor = optional(parsed, '--latency-for')?.split(' ').filter(Boolean);
  if (latencyFor !== undefined && (latency === undefined || latencyFor.length === 0))
    throw new UsageError(`--latency-for needs --latency-ms and at least the tool's name\n${FAULTS_USAGE}`);
  const settings: FaultSettings = {
    latencyMs: latency === undefined ? 0 : integerArg('--latency-ms', latency, 0),
    ...(latencyFor ? { latencyFor } : {}),
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
