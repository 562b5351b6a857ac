// Exponential back-off with a cap, optionally with jitter so that many callers failing at once
// (objects of the watcher, two watcher replicas) do not retry in step against a struggling
// apiserver or Temporal. Pure: it says how long to wait; the caller waits.

export interface Backoff {
  /** The delay after the first failure. */
  readonly initialMs: number;
  /** No delay is longer than this. */
  readonly maxMs: number;
  /** Spread each delay between half and all of the capped exponential (the default); false: exactly it. */
  readonly jitter?: boolean;
}

/** 200 ms, doubling up to 30 s, jittered: the watcher's lists, watches and reconciles. */
export const DEFAULT_BACKOFF: Backoff = { initialMs: 200, maxMs: 30_000 };

/**
 * The delay before attempt `failures + 1` (`failures` is 1-based): initialMs, then 2×, 4×…,
 * capped at maxMs; with jitter, a point between half and all of that, rounded to the millisecond.
 */
export function backoffDelay(failures: number, b: Backoff, random: () => number = Math.random): number {
  const ceiling = Math.min(b.maxMs, b.initialMs * 2 ** Math.max(0, failures - 1));
  if (b.jitter === false) return ceiling;
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
