// Exponential back-off with a cap and full jitter, so that many objects (or two watcher
// replicas) failing at once against a struggling apiserver or Temporal do not retry in step.

export interface Backoff {
  initialMs: number;
  maxMs: number;
}

export const DEFAULT_BACKOFF: Backoff = { initialMs: 200, maxMs: 30_000 };

/** The delay before attempt `failures + 1`, between half and all of the capped exponential. */
export function backoffDelay(
  failures: number,
  b: Backoff = DEFAULT_BACKOFF,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(b.maxMs, b.initialMs * 2 ** Math.max(0, failures - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
