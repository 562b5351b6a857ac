// The one shape of a step that waits: try, and until it is done, wait and try again, continuing as
// new past the history limit at each safe point between tries (workflows/lifecycle.ts).
import type { Lifecycle } from './lifecycle.js';

/** What one try of a step gave: its result, or how to wait before the next try. */
export type Tried<T> = { done: T } | { wait: () => Promise<unknown> };

/** A step's result. */
export const done = <T>(value: T): Tried<T> => ({ done: value });
/** A try that did not finish: wait with `wait`, then try again. */
export const again = (wait: () => Promise<unknown>): Tried<never> => ({ wait });

/**
 * Runs `attempt` until it gives a result. Between tries it waits as the try said, then continues as
 * new if the run's history is long: the new run reads the object afresh and does the step again,
 * as this one would. `attempt` is told how many tries came before it in this run, so that a try
 * after a wait can read the object afresh first.
 */
export async function untilDone<T>(life: Lifecycle, attempt: (tries: number) => Promise<Tried<T>>): Promise<T> {
  for (let tries = 0; ; tries++) {
    const tried = await attempt(tries);
    if ('done' in tried) return tried.done;
    await tried.wait();
    await life.continueAsNewIfLong();
  }
}
