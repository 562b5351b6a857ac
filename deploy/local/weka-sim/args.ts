// A tiny option parser for the simulated tools: "--name value", "--name=value" and boolean
// flags, in any order among positionals, like the argparse-style CLIs it imitates.
import { UsageError } from './outcome.js';

export interface ArgSpec {
  /** Options taking a value; may repeat (e.g. --device). */
  readonly values?: readonly string[];
  readonly flags?: readonly string[];
  /** Short forms of long options, e.g. { '-f': '--force' }; any other "-x" is a positional. */
  readonly aliases?: Readonly<Record<string, string>>;
}

export interface ParsedArgs {
  readonly positionals: readonly string[];
  readonly values: ReadonlyMap<string, readonly string[]>;
  readonly flags: ReadonlySet<string>;
}

export function parseArgs(args: readonly string[], spec: ArgSpec): ParsedArgs {
  const positionals: string[] = [];
  const values = new Map<string, string[]>();
  const flags = new Set<string>();
  for (let i = 0; i < args.length; i++) {
    const given = args[i]!;
    const arg = spec.aliases && Object.hasOwn(spec.aliases, given) ? spec.aliases[given]! : given;
    if (arg === '--') {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (!arg.startsWith('--')) {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq === -1 ? arg : arg.slice(0, eq);
    if (spec.flags?.includes(name)) {
      if (eq !== -1) throw new UsageError(`option ${name} takes no value`);
      flags.add(name);
    } else if (spec.values?.includes(name)) {
      const value = eq === -1 ? args[++i] : arg.slice(eq + 1);
      if (value === undefined) throw new UsageError(`option ${name} needs a value`);
      values.set(name, [...(values.get(name) ?? []), value]);
    } else {
      throw new UsageError(`unknown option ${name}`);
    }
  }
  return { positionals, values, flags };
}

/** The single value of a required option. */
export function required(parsed: ParsedArgs, name: string): string {
  const given = parsed.values.get(name);
  if (!given || given.length === 0) throw new UsageError(`missing required option ${name}`);
  if (given.length > 1) throw new UsageError(`option ${name} given more than once`);
  return given[0]!;
}

export function optional(parsed: ParsedArgs, name: string): string | undefined {
  const given = parsed.values.get(name);
  if (given && given.length > 1) throw new UsageError(`option ${name} given more than once`);
  return given?.[0];
}

export function positionals(parsed: ParsedArgs, names: readonly string[]): string[] {
  if (parsed.positionals.length !== names.length) {
    throw new UsageError(
      `expected ${names.length ? names.join(' ') : 'no arguments'}, got ${JSON.stringify(parsed.positionals)}`,
    );
  }
  return [...parsed.positionals];
}

/** A decimal integer argument, rejecting "1e3", "0x10", " 5" and friends. */
export function integerArg(name: string, text: string, min: number): number {
  if (!/^\d+$/.test(text)) throw new UsageError(`${name} must be an integer, got ${JSON.stringify(text)}`);
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < min)
    throw new UsageError(`${name} must be an integer >= ${min}, got ${text}`);
  return value;
}

/** A command's stdout: `json` pretty-printed with --json, else `text` (nothing when it is empty). */
export function jsonOrText(parsed: ParsedArgs, json: unknown, text: string): string {
  if (parsed.flags.has('--json')) return `${JSON.stringify(json, null, 2)}\n`;
  return text === '' ? '' : `${text}\n`;
}
