// How the mutex's answers and wake-ups reach the requesters, without holding up the next decision.
import { allHandlersFinished, condition } from '@temporalio/workflow';
import type { MutexAnswer } from '../../src/protocol.js';
import { delivery } from '../activities.js';
import type { MutexRun } from './run.js';

/**
 * One activity delivers a decision's answers and wake-ups, in the same workflow task that
 * starts the next decision: the mutex does not wait for it, so a hand-over costs no extra
 * workflow task. Deliveries finish (or are given up on) before the mutex ends or continues.
 */
export function sendAnswers(run: MutexRun, answers: readonly MutexAnswer[], notify: readonly string[]): void {
  if (answers.length === 0 && notify.length === 0) return;
  run.deliveries++;
  const sent = delivery.answerMutexRequests({
    mutexId: run.input.key,
    answers: [...answers],
    notify: [...new Set(notify)],
  });
  void sent.catch(() => undefined).finally(() => run.deliveries--);
}

/** Waits for the deliveries and the signal handlers to finish, before the run ends or continues. */
export async function settle(run: MutexRun): Promise<void> {
  await condition(() => run.deliveries === 0);
  await condition(allHandlersFinished);
}
