import { DEFAULT_ALLOCATION_SETTINGS, resolveSettings } from '../allocation/settings.js';
import { allocateVirtualDrives } from '../allocation/drive-sharing.js';
import { parsePlanInput } from './plan-input.js';
import { formatPlanTable } from './plan-table.js';
import type { UuidSource } from '../allocation/types.js';

// The whole of `weka-drives` as a pure function from arguments and stdin text to exit code and
// output, so the CLI entry only does I/O.

export interface CommandOutcome {
  /** 0 planned, 1 unusable invocation or input, 2 allocation refused. */
  readonly exitCode: 0 | 1 | 2;
  readonly stdout: string;
  readonly stderr: string;
}

export const USAGE = `usage: weka-drives plan [--human] < input.json

Reads one JSON document on stdin and prints the virtual drives the allocator would create:
  { "physicalDrives": [{"physicalUUID", "serial", "capacityGiB", "type", "devicePath"}],
    "claimed": [{"container": "ns/name", "virtualDrives": [{"virtualUUID", "physicalUUID", "capacityGiB", "serial", "type"}]}],
    "request": {"driveCores", "numDrives"?, "driveCapacity"?, "containerCapacity"?, "driveTypesRatio"?: {"tlc", "qlc"}},
    "settings"?: {"maxVirtualDrivesPerCore"?, "enforceMinDrivesPerTypePerCore"?, "driveTypesRatio"?} }

  --human   print a table per physical drive (free before, taken, free after) instead of JSON

Exit codes: 0 planned ({"virtualDrives": [...]}), 1 unreadable input, 2 allocation refused ({"error": {...}}).
`;

export type CommandLine =
  { readonly command: 'plan'; readonly human: boolean } | { readonly command: 'usage'; readonly problem?: string };

export function parseCommandLine(args: readonly string[]): CommandLine {
  const [command, ...flags] = args;
  if (command !== 'plan')
    return { command: 'usage', ...(command === undefined ? {} : { problem: `unknown command "${command}"` }) };
  const unknown = flags.filter((flag) => flag !== '--human');
  if (unknown.length > 0)
    return { command: 'usage', problem: `unknown option ${unknown.map((flag) => `"${flag}"`).join(', ')}` };
  return { command: 'plan', human: flags.includes('--human') };
}

export function usageOutcome(problem?: string): CommandOutcome {
  return { exitCode: 1, stdout: '', stderr: `${problem === undefined ? '' : `weka-drives: ${problem}\n`}${USAGE}` };
}

export function runPlan(stdinText: string, human: boolean, newUuid: UuidSource): CommandOutcome {
  let document: unknown;
  try {
    document = JSON.parse(stdinText);
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    return { exitCode: 1, stdout: '', stderr: `weka-drives plan: stdin is not a JSON document (${reason})\n` };
  }
  const parsed = parsePlanInput(document);
  if (!parsed.ok) return { exitCode: 1, stdout: '', stderr: `weka-drives plan: ${parsed.message}\n` };
  const { physicalDrives, claimed, request, settings } = parsed.input;
  const result = allocateVirtualDrives(
    { physicalDrives, claimed, request, settings: resolveSettings(DEFAULT_ALLOCATION_SETTINGS, settings) },
    newUuid,
  );
  const exitCode = result.ok ? 0 : 2;
  if (human) return { exitCode, stdout: formatPlanTable(physicalDrives, claimed, result), stderr: '' };
  const body = result.ok ? { virtualDrives: result.virtualDrives } : { error: result.error };
  return { exitCode, stdout: `${JSON.stringify(body, null, 2)}\n`, stderr: '' };
}
