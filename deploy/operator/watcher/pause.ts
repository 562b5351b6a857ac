import { setTimeout } from 'node:timers/promises';

/** Resolves after `ms`, or at once when `signal` aborts; never rejects. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return setTimeout(ms, undefined, { signal }).catch(() => undefined);
}
