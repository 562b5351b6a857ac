// What every object's lifecycle workflow shares: the signals it answers (spec changed, wake up,
// deletion requested), the state query, and the one shape of its life: bring the object up and
// keep it until its deletion, then tear it down in a scope that nothing can cancel.
import {
  ActivityFailure,
  CancellationScope,
  CancelledFailure,
  condition,
  isCancellation,
  setHandler,
} from '@temporalio/workflow';
import type { Duration } from '@temporalio/common';
import { deleteRequestedSignal, specChangedSignal, stateQuery, wakeUpSignal } from '../src/protocol.js';
import type { LifecycleStatus } from './lifecycle-status.js';

export class Lifecycle {
  deleteRequested = false;
  specChanges = 0;
  wakeUps = 0;
  private readonly scope = new CancellationScope();

  /** Installs the handlers; a workflow that ignores spec changes says so with `specChanges: false`. */
  constructor(status: LifecycleStatus, options: { specChanges?: boolean } = {}) {
    setHandler(deleteRequestedSignal, () => {
      this.deleteRequested = true;
      this.scope.cancel();
    });
    setHandler(specChangedSignal, () => {
      if (options.specChanges !== false) this.specChanges++;
    });
    setHandler(wakeUpSignal, () => void this.wakeUps++);
    setHandler(stateQuery, () => status.view());
  }

  /** Waits for a spec change, or for a wake-up too when `wakeUps` is set; false when the timeout ran out. */
  changed(options: { wakeUps?: boolean; timeout?: Duration } = {}): Promise<boolean> {
    const seen = { specChanges: this.specChanges, wakeUps: this.wakeUps };
    const happened = () =>
      this.specChanges > seen.specChanges || (options.wakeUps === true && this.wakeUps > seen.wakeUps);
    if (options.timeout === undefined) return condition(happened).then(() => true);
    return condition(happened, options.timeout);
  }

  /**
   * Runs `bringUp`, then waits for the deletion; the deletion (the deleteRequested signal, or
   * cancelling the workflow) interrupts either. Then runs `teardown`, which cannot be cancelled.
   * An object already being deleted goes straight to its teardown.
   */
  async run(deleting: boolean, bringUp: () => Promise<void>, teardown: () => Promise<void>): Promise<void> {
    if (deleting) this.deleteRequested = true;
    try {
      if (this.deleteRequested) throw new CancelledFailure('deletion started before the workflow');
      await this.scope.run(async () => {
        await bringUp();
        await condition(() => this.deleteRequested);
      });
    } catch (err) {
      if (!isCancellation(err)) throw err;
    }
    await CancellationScope.nonCancellable(teardown);
  }
}

/** The message of an activity's failure (its cause), or of any other error. */
export function messageOf(err: unknown): string {
  const cause = err instanceof ActivityFailure && err.cause ? err.cause : err;
  return cause instanceof Error ? cause.message : String(cause);
}
