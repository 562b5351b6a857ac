// Waiting for work, and ending a mutex that has had none for a while.
import { condition } from '@temporalio/workflow';
import { mustContinue } from './continue-as-new.js';
import { settle } from './delivery.js';
import type { MutexRun } from './run.js';

/** An idle mutex ends after this long; the next request starts it again. */
const IDLE_TIMEOUT = '1 hour';

/**
 * Waits for work: a request, an answer to send again, or continuing as new. False when there was
 * none for IDLE_TIMEOUT, nobody waits for capacity and nothing arrived while the run settled:
 * then the run ends.
 */
export async function waitForWork(run: MutexRun): Promise<boolean> {
  const hasWork = (): boolean => run.state.queue.length > 0 || run.reanswers.length > 0 || mustContinue(run);
  // Waiting with a timeout starts a timer and cancels it in the same activation when there is
  // already work: nothing reaches the history, but it is work for the workflow thread that every
  // node's mutex shares, so it is skipped then.
  const busy = hasWork() || (await condition(hasWork, IDLE_TIMEOUT));
  if (busy || run.state.waiters.length > 0) return true;
  await settle(run);
  return run.state.queue.length > 0 || run.reanswers.length > 0;
}
