// Waiting and pacing, for the integration tests, the chaos tests and the benchmarks alike: the one
// polling loop (`eventually`), a pause, and a map with bounded concurrency. No vitest here: the
// benchmarks run outside it.

export interface EventuallyOptions {
  /** The pause between two checks (ms); 100 unless given. */
  intervalMs?: number;
  /**
   * What has been reached so far. Given, it is printed every 30 s while waiting (through `log`)
   * and added to the error on timeout.
   */
  progress?: () => Promise<string> | string;
  /** Where the progress lines go; console.log unless given. */
  log?: (line: string) => void;
  /**
   * Whether an error thrown by `check` means "not yet" (the default: the last one is reported on
   * timeout) or ends the wait at once (false: the error is thrown as it is).
   */
  retryErrors?: boolean;
}

/**
 * Calls `check` every `intervalMs` until it returns a value other than undefined and returns that
 * value, or fails after `timeoutMs` saying what it waited for.
 */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 30_000,
  o: EventuallyOptions = {},
): Promise<T> {
  const started = Date.now();
  let lastPrint = started;
  let lastError: unknown;
  const progress = async (): Promise<string> =>
    o.progress ? ` (${await Promise.resolve().then(o.progress).catch(String)})` : '';
  while (Date.now() - started < timeoutMs) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      if (o.retryErrors === false) throw err;
      lastError = err;
    }
    if (o.progress && Date.now() - lastPrint >= 30_000) {
      lastPrint = Date.now();
      (o.log ?? console.log)(`  waiting ${Math.round((lastPrint - started) / 1000)} s for ${what}${await progress()}`);
    }
    await sleep(o.intervalMs ?? 100);
  }
  throw new Error(
    `timed out after ${timeoutMs} ms waiting for ${what}${await progress()}${lastError ? `: ${String(lastError)}` : ''}`,
  );
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Runs `fn` over `items` with at most `limit` at a time, keeping the order of results. */
export { mapLimited as mapLimit } from '../../src/map-limited.js';
