// File primitives for the simulator state: JSON written atomically (temp file + rename, so a
// reader or a crash never sees half a file) and read back strictly. The simulator's file calls are
// synchronous: a command is a short process that does one thing at a time, and loading
// node:fs/promises alone costs it a few milliseconds (docs/weka-simulator.md).
import { readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { errorCode } from './lock.js';

let temps = 0;

export function writeJsonAtomic(path: string, value: unknown): void {
  // The PID keeps live processes apart; a dead one's leftover with a reused PID is overwritten.
  const temp = `${path}.${process.pid}.${temps++}.tmp`;
  try {
    writeFileSync(temp, `${JSON.stringify(value, null, 2)}\n`);
    renameSync(temp, path);
  } catch (err) {
    try {
      unlinkSync(temp);
    } catch {
      // The write's error is the one to report.
    }
    throw err;
  }
}

/** The parsed file, or undefined when it does not exist. A corrupt file is an error. */
export function readJsonIfExists(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return undefined;
    throw err;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new Error(`corrupt state file ${path}: not valid JSON`);
  }
}

export function removeIfExists(path: string): void {
  try {
    unlinkSync(path);
  } catch (err) {
    if (errorCode(err) !== 'ENOENT') throw err;
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
