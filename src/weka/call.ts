// A typed call is an argv plus the parser for what the command prints on success. The activity
// runs the argv through an exec transport and hands the result to completeCall, which turns exit
// codes into typed errors and stdout into data.
import { WekaCommandFailed, WekaCommandRefused } from './errors.js';

export interface WekaCall<T> {
  readonly argv: readonly string[];
  readonly parse: (stdout: string) => T;
}

/** What a transport returns for one finished command. */
export interface CommandResult {
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: number;
}

/**
 * Exit codes that mean a definite refusal, following sysexits.h: 64 usage error (bad
 * arguments), 65 data error (the request conflicts with the device or cluster state, e.g. a
 * UUID already present), 78 configuration error (e.g. the simulator shim has no state dir).
 * Running the same command again gives the same answer, so these are not retried. Every other
 * non-zero code (1, 75 EX_TEMPFAIL, 137 killed, …) is treated as transient: the idempotency
 * probe before the retry finds out whether the first attempt took effect.
 */
export const REFUSAL_EXIT_CODES: readonly number[] = [64, 65, 78];

export type ExitClass = 'success' | 'refused' | 'transient';

export function classifyExit(exitCode: number): ExitClass {
  if (exitCode === 0) return 'success';
  return REFUSAL_EXIT_CODES.includes(exitCode) ? 'refused' : 'transient';
}

/** The argv as one readable line for messages; arguments that need it are JSON-quoted. */
export function commandText(argv: readonly string[]): string {
  return argv.map((arg) => (/^[A-Za-z0-9._/:=@,+-]+$/.test(arg) ? arg : JSON.stringify(arg))).join(' ');
}

/** Checks the exit code and parses stdout; throws WekaCommandRefused or WekaCommandFailed. */
export function completeCall<T>(call: WekaCall<T>, result: CommandResult): T {
  switch (classifyExit(result.exitCode)) {
    case 'success':
      return call.parse(result.stdout);
    case 'refused':
      throw new WekaCommandRefused(commandText(call.argv), result.exitCode, result.stderr);
    case 'transient':
      throw new WekaCommandFailed(commandText(call.argv), result.exitCode, result.stderr);
  }
}

/** The parser for commands whose success output carries nothing we use. */
export function ignoreOutput(): void {}
