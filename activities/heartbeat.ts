// Every activity heartbeats while it runs. With a short heartbeat timeout on every activity, a
// worker that dies (SIGKILL, OOM, node loss) is noticed in seconds and the activity is retried
// elsewhere, instead of after its whole start-to-close timeout.
import { Context } from '@temporalio/activity';

export const HEARTBEAT_INTERVAL_MS = 1_000;

/** The running activity's context, or undefined outside an activity (a unit test, a script). */
export function currentContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined; // called outside an activity (a unit test, a script)
  }
}

export function withHeartbeat<A extends unknown[], R>(fn: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return async (...args: A) => {
    const ctx = currentContext();
    // A local activity runs inside its workflow's task, which the worker keeps alive itself.
    if (!ctx || ctx.info.isLocal) return fn(...args);
    ctx.heartbeat();
    const timer = setInterval(() => ctx.heartbeat(), HEARTBEAT_INTERVAL_MS);
    try {
      return await fn(...args);
    } finally {
      clearInterval(timer);
    }
  };
}

/**
 * Waits `ms` between two polls of a waiting activity; rejects at once when the activity is
 * cancelled (its workflow gave up on it, or the worker's shutdown grace ran out), so a wait for a
 * pod does not hold a stopping worker until its own timeout.
 */
export function pause(ms: number): Promise<void> {
  const ctx = currentContext();
  const waited = new Promise<void>((resolve) => setTimeout(resolve, ms));
  if (!ctx) return waited;
  return Promise.race([waited, ctx.cancelled]);
}

/** Wraps every function of an activities object. */
export function heartbeating<T extends object>(activities: T): T {
  return Object.fromEntries(
    Object.entries(activities).map(([name, fn]) => [
      name,
      typeof fn === 'function' ? withHeartbeat(fn as (...a: unknown[]) => Promise<unknown>) : fn,
    ]),
  ) as T;
}
