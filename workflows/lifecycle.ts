// What every object's lifecycle workflow shares: the signals it answers (spec changed, wake up,
// deletion requested), the state query, and the one shape of its life: bring the object up and
// keep it until its deletion, then tear it down in a scope that nothing can cancel.
//
// Only the object's deletion tears it down. The workflow can also be interrupted by a cancel from
// Temporal (the UI's "Request Cancellation", `temporal workflow cancel`) or by a deleteRequested
// signal that anybody with access to the namespace can send; then it asks the apiserver, and when
// the object is not being deleted it records that on the object (a TeardownRefused condition and
// Event) and starts again as a new run, from the state the object's status records.
//
// A long wait (for capacity, a node, a cluster GUID, a pod to reach in a teardown) writes history
// all the while. At a safe point of every such loop the workflow calls `continueAsNewIfLong()`:
// past the history limit it continues as new with the same input, and the new run starts again
// from what the object records, exactly as after a refused teardown. A signal that arrived in
// between (a spec change, a capacity release, a wake-up) is not lost: the new run reads the object
// afresh and asks again, which is what the signal would have made it do; a deletion it reads as the
// object's deletionTimestamp, and goes straight to the teardown.
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  ContinueAsNew,
  allHandlersFinished,
  condition,
  isCancellation,
  continueAsNew,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { Duration } from '@temporalio/common';
import {
  deleteRequestedSignal,
  specChangedSignal,
  stateQuery,
  wakeUpSignal,
  type LifecycleWorkflow,
  type ObjectWorkflowInput,
} from '../src/protocol.js';
import type { LifecycleStatus } from './lifecycle-status.js';

/**
 * A lifecycle continues as new, at its next safe point, past this many history events. A container
 * waiting for capacity writes about 40 events per 30 s re-ask, so about every 25 minutes; the
 * replay of a history this long after a worker restart or a cache eviction stays cheap, and it is
 * well below Temporal's own suggestion (4,096 events) and hard limit (51,200).
 */
export const HISTORY_LIMIT = 2_000;

/**
 * Whether the workflow is a new run continued from an earlier one (past its history limit, or after
 * a refused teardown), so that it resumes from what the object's status records.
 */
export function continuedRun(): boolean {
  return workflowInfo().continuedFromExecutionRunId !== undefined;
}

/** Whether this run is past its history limit (the input's, or HISTORY_LIMIT), or Temporal suggests continuing as new. */
export function pastHistoryLimit(input: { historyLimit?: number }): boolean {
  const info = workflowInfo();
  return info.continueAsNewSuggested || info.historyLength > (input.historyLimit ?? HISTORY_LIMIT);
}

/** Whether `err` is the workflow continuing as new: a step's error handling must let it through. */
export function isContinueAsNew(err: unknown): boolean {
  return err instanceof ContinueAsNew;
}

/** What the apiserver says of the workflow's object: its uid is the workflow's, or not. */
export type ObjectState = 'live' | 'deleting' | 'gone' | 'replaced';

/** The state of `now` (the object read by name) for the object of `uid`. */
export function objectState(now: { uid: string; deleting: boolean } | null, uid: string): ObjectState {
  if (!now) return 'gone';
  if (now.uid !== uid) return 'replaced';
  return now.deleting ? 'deleting' : 'live';
}

/** Signals received by a lifecycle workflow, counted. */
export interface Received {
  specChanges: number;
  wakeUps: number;
}

export class Lifecycle {
  deleteRequested = false;
  specChanges = 0;
  wakeUps = 0;
  private readonly scope = new CancellationScope();

  /** Installs the handlers; a workflow that ignores spec changes says so with `specChanges: false`. */
  constructor(
    private input: ObjectWorkflowInput,
    private readonly status: LifecycleStatus,
    options: { specChanges?: boolean } = {},
  ) {
    setHandler(deleteRequestedSignal, () => this.requestTeardown());
    setHandler(specChangedSignal, () => {
      if (options.specChanges !== false) this.specChanges++;
    });
    setHandler(wakeUpSignal, () => void this.wakeUps++);
    setHandler(stateQuery, () => status.view());
  }

  /**
   * What the deleteRequested signal does: stops the bring-up or the wait, and `run` asks the
   * apiserver whether to tear down. Also for a workflow that finds its object gone by itself.
   */
  requestTeardown(): void {
    this.deleteRequested = true;
    this.scope.cancel();
  }

  /** The input's history limit, for a child workflow that continues as new by the same rule. */
  get historyLimit(): number | undefined {
    return this.input.historyLimit;
  }

  /** Adds what a new run (continued as new) is to carry beside the object's identity. */
  carry(fields: Partial<Omit<ObjectWorkflowInput, 'namespace' | 'name' | 'uid'>>): void {
    this.input = { ...this.input, ...fields };
  }

  /** What was received so far: a later changed({ since }) counts what came after it. */
  mark(): Received {
    return { specChanges: this.specChanges, wakeUps: this.wakeUps };
  }

  /**
   * Waits for a spec change, or for a wake-up too when `wakeUps` is set; false when the timeout ran
   * out. Counts from `since` when given (a mark() taken before the work that precedes the wait, so
   * that a signal received during that work is not missed), else from now.
   */
  changed(options: { wakeUps?: boolean; timeout?: Duration; since?: Received } = {}): Promise<boolean> {
    const seen = options.since ?? this.mark();
    const happened = () =>
      this.specChanges > seen.specChanges || (options.wakeUps === true && this.wakeUps > seen.wakeUps);
    if (options.timeout === undefined) return condition(happened).then(() => true);
    return condition(happened, options.timeout);
  }

  /**
   * At a safe point of a long wait (no activity, child or timer of the loop running, nothing
   * half-done that the object's status does not record): past the history limit, or when Temporal
   * suggests it, continues as new with the same input (see the top of this file). Called after a
   * wait, never before a run's first attempt, so every run makes progress whatever the limit.
   * Work the loop runs beside its waits (`finish`) is awaited first.
   */
  async continueAsNewIfLong(finish?: () => Promise<void>): Promise<void> {
    if (!pastHistoryLimit(this.input)) return;
    if (finish) await finish();
    await condition(allHandlersFinished);
    await continueAsNew<LifecycleWorkflow>(this.input);
  }

  /**
   * Runs `bringUp`, then waits for the deletion; an interruption (the deleteRequested signal, or
   * cancelling the workflow) stops either. Then `objectState` asks the apiserver. A live object
   * starts its lifecycle again (see the top of this file). An object being deleted, gone, or gone
   * with another object (another uid) under its name since (its finalizer removed by hand, the
   * name created again) is torn down by `teardown`, where nothing can cancel it; every step of a
   * teardown is fenced by the uid, so it never touches a successor of the name. An object already
   * being deleted goes straight to its teardown.
   */
  async run(o: {
    deleting: boolean;
    bringUp: () => Promise<void>;
    objectState: () => Promise<ObjectState>;
    teardown: () => Promise<void>;
  }): Promise<void> {
    if (o.deleting) this.deleteRequested = true;
    try {
      if (this.deleteRequested) throw new CancelledFailure('deletion started before the workflow');
      await this.scope.run(async () => {
        await o.bringUp();
        await condition(() => this.deleteRequested);
      });
    } catch (err) {
      if (!isCancellation(err)) throw err;
    }
    const state = await CancellationScope.nonCancellable(o.objectState);
    if (state === 'live') {
      await CancellationScope.nonCancellable(() => this.refuseTeardown());
      await continueAsNew<LifecycleWorkflow>(this.input);
    }
    await CancellationScope.nonCancellable(o.teardown);
  }

  private async refuseTeardown(): Promise<void> {
    const message =
      'the workflow was cancelled or told to tear down while the object is not being deleted: nothing was ' +
      'torn down, and the lifecycle started again from the recorded state; delete the object to tear it down';
    await this.status.condition('TeardownRefused', 'True', 'NotDeleting', message);
    await this.status.event('Warning', 'TeardownRefused', message);
  }
}

/** The type of the application failure behind `err` (an activity's, or one thrown here), if it is one. */
export function failureType(err: unknown): string | undefined {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return cause instanceof ApplicationFailure ? (cause.type ?? undefined) : undefined;
}

/** The message of an activity's failure (its cause), or of any other error. */
export function messageOf(err: unknown): string {
  const cause = err instanceof ActivityFailure && err.cause ? err.cause : err;
  return cause instanceof Error ? cause.message : String(cause);
}
