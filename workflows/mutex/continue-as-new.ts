// When and how a mutex continues as new: past its history limit, with its state bounded in bytes,
// and never dropping its queue.
import { continueAsNew, log, workflowInfo } from '@temporalio/workflow';
import { stateToCarry } from '../../src/node/mutex-queue.js';
import type { MutexWorkflow } from '../../src/protocol.js';
import { settle } from './delivery.js';
import type { MutexRun } from './run.js';

/** Whether the run is to continue as new: Temporal suggests it, or it is past its limit and may. */
export function mustContinue(run: MutexRun): boolean {
  return (
    workflowInfo().continueAsNewSuggested ||
    (workflowInfo().historyLength > run.historyLimit && run.tooBigAt !== run.state.executed)
  );
}

/**
 * Continues as new with the state to carry, when the run must and the state fits in its bound (or
 * Temporal says the history must end). A state that does not fit is drained in this run first.
 */
export async function continueAsNewIfDue(run: MutexRun): Promise<void> {
  if (!mustContinue(run)) return;
  await settle(run);
  // Requests that arrived while it settled are in `state`, and carried.
  const carried = stateToCarry(run.state, run.carriedBytes);
  const details = {
    mutex: run.input.key,
    bytes: carried.bytes,
    bound: run.carriedBytes,
    droppedAnswers: carried.droppedAnswers,
    queued: run.state.queue.length,
    waiters: run.state.waiters.length,
  };
  if (carried.fits || workflowInfo().continueAsNewSuggested) {
    // Past the bound only when Temporal says the history must end: the queue is never dropped.
    if (!carried.fits) log.warn('continuing as new with a queue over the carried-state bound', details);
    await continueAsNew<MutexWorkflow>({ ...run.input, state: carried.state });
  }
  if (run.tooBigAt === undefined)
    log.warn('the queue alone is over the carried-state bound: draining it before continuing as new', details);
  run.tooBigAt = run.state.executed;
}
