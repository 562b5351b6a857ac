// The status a lifecycle workflow owns (phase, step, conditions, and the fields of its kind), kept
// in the workflow and applied whole on every change: server-side apply removes owned fields that
// an apply leaves out. Applies are queued, so when several run at once (a sign-drives operation
// signs its nodes concurrently) each sends the state at the moment it runs and the last to land is
// the newest. An apply of what the last one that succeeded already sent is skipped: each is a
// local activity and a request the apiserver processes in full. Changes made together with no
// wait between them go out in one apply: stage() sets a condition that the next apply carries.
// A condition's Event goes out with the apply that shows the condition, in the same activity.
// The same step shows in the Temporal UI (current details, the WekaPhase search attribute) and in
// the state query.
import { setCurrentDetails, upsertSearchAttributes, uuid4, workflowInfo } from '@temporalio/workflow';
import type { EventInput, StatusEvent } from '../activities/types.js';
import type { Condition, WrittenBy } from '../src/api/index.js';
import { setCondition, type ConditionStatus } from '../src/lifecycle/conditions.js';
import {
  progressOfConditions,
  progressOfPhase,
  withStandardConditions,
  type Progress,
} from '../src/lifecycle/standard-conditions.js';
import type { ObjectRef } from '../src/api/names.js';
import { WekaPhase, type LifecycleView } from '../src/protocol.js';
import { kubeLocal } from './activities.js';

export type EventType = 'Normal' | 'Warning';

export abstract class LifecycleStatus {
  phase = 'Pending';
  step = 'Starting';
  conditions: Condition[] = [];
  observedGeneration = 0;
  lastError: string | undefined;
  /**
   * How the lifecycle stands, as its last enter() said it (Reconciling and Stalled follow it);
   * unset, it follows the phase; before this run entered a phase, the conditions it restored.
   */
  private progress: Progress | undefined;
  private entered = false;
  private readonly lastEventReason = new Map<string, string>();
  /** Events that go out with the next apply. */
  private readonly events: StatusEvent[] = [];
  private writing: Promise<void> = Promise.resolve();
  /** The body of the last apply that succeeded, as JSON. */
  private applied: string | undefined;
  /** The history length of the workflow task of the last apply, and the applies it sent. */
  private taskHistoryLength = 0;
  private taskWrites = 0;

  constructor(
    readonly kind: EventInput['kind'],
    readonly ref: ObjectRef,
    /** The object's uid: its Events name it, so the object is not read to record one. */
    readonly uid: string,
  ) {}

  /**
   * Starts from the conditions the object's status records (a new run, continued from an earlier
   * one or started again): their Events were recorded with them, so a condition set again with the
   * same reason records none, and a waiting object that continues as new does not repeat its Events.
   */
  restoreConditions(conditions: readonly Condition[]): void {
    this.conditions = [...conditions];
    for (const c of conditions) this.lastEventReason.set(c.type, c.reason);
  }

  /** The status fields of this lifecycle's kind, applied with the phase and conditions. */
  protected abstract fields(): object;

  view(): LifecycleView {
    return {
      phase: this.phase,
      step: this.step,
      detail: `${this.ref.namespace}/${this.ref.name}: ${this.step}`,
      ...(this.lastError !== undefined ? { lastError: this.lastError } : {}),
    };
  }

  /**
   * Moves to a phase and step, shows it in the Temporal UI, and applies the status. `progress`
   * says how the lifecycle stands there when the phase alone does not (a Ready container whose
   * growth waits for capacity is still at work; one that waits for a person is stalled).
   */
  async enter(phase: string, step: string, progress?: Progress): Promise<void> {
    if (phase !== this.phase) upsertSearchAttributes([{ key: WekaPhase, value: phase }]);
    this.phase = phase;
    this.step = step;
    this.progress = progress;
    this.entered = true;
    this.showDetails();
    await this.publish();
  }

  /**
   * Sets a condition and applies the status; a Warning or Normal Event goes with it when the
   * condition's reason changed, so a waiting object does not flood its Events.
   */
  async condition(type: string, status: ConditionStatus, reason: string, message: string, event?: EventType) {
    this.stage(type, status, reason, message, event);
    await this.publish();
  }

  /**
   * Sets a condition, with its Event as condition() does, without applying the status: for a
   * change the caller applies next (enter(), condition() or publish()), before any wait.
   */
  stage(type: string, status: ConditionStatus, reason: string, message: string, event?: EventType): void {
    const at = new Date().toISOString();
    this.conditions = setCondition(
      this.conditions,
      { type, status, reason, message, observedGeneration: this.observedGeneration },
      at,
    );
    if (status === 'False') this.lastError = message;
    if (!event || this.lastEventReason.get(type) === reason) return;
    this.lastEventReason.set(type, reason);
    this.queueEvent(event, reason, message);
  }

  /** Records an Event now, with whatever status change is staged. */
  async event(type: EventType, reason: string, message: string): Promise<void> {
    this.queueEvent(type, reason, message);
    await this.publish();
  }

  private queueEvent(type: EventType, reason: string, message: string): void {
    // Named in the workflow (uuid4 is replayed the same), so a retried write records it once.
    const name = `${this.ref.name.slice(0, 200).replace(/[^a-z0-9]+$/, '')}.${uuid4().replace(/-/g, '').slice(0, 16)}`;
    this.events.push({ name, type, reason, message });
  }

  /**
   * Applies the status and records the queued Events, unless there is nothing new to send. Each
   * apply carries its run, its workflow task and its number in the task (writtenBy), so a late
   * apply of an earlier one is refused (see writtenBySchema).
   */
  publish(): Promise<void> {
    const progress = this.entered
      ? (this.progress ?? progressOfPhase(this.phase, this.step, this.conditions))
      : progressOfConditions(this.phase, this.step, this.conditions);
    this.conditions = withStandardConditions(this.conditions, progress, {
      phase: this.phase,
      observedGeneration: this.observedGeneration,
      nowIso: new Date().toISOString(),
    });
    const next = this.writing.then(async () => {
      const body = {
        phase: this.phase,
        conditions: this.conditions,
        observedGeneration: this.observedGeneration,
        ...this.fields(),
      };
      const json = JSON.stringify(body);
      const events = this.events.splice(0);
      if (json === this.applied && events.length === 0) return;
      const status = json === this.applied ? undefined : { ...body, writtenBy: this.nextWrite() };
      await kubeLocal.writeStatus({
        kind: this.kind,
        ref: this.ref,
        uid: this.uid,
        ...(status ? { status } : {}),
        events,
      });
      this.applied = json;
    });
    // A failed apply must not block the applies queued after it; its caller still sees the error.
    this.writing = next.catch(() => undefined);
    return next;
  }

  /**
   * The key of the next apply. The history length is Temporal's (a workflow task done again on
   * another worker starts at a longer one than the task that timed out, and the local activities
   * of one task all see the same); the workflow's clock is not used, because it is the worker's
   * own clock while the local activities of a task complete.
   */
  private nextWrite(): WrittenBy {
    const { runId, runStartTime, historyLength } = workflowInfo();
    if (historyLength !== this.taskHistoryLength) {
      this.taskHistoryLength = historyLength;
      this.taskWrites = 0;
    }
    return { run: runId, runStartTime: runStartTime.toISOString(), historyLength, sequence: ++this.taskWrites };
  }

  /** What the Temporal UI shows as the workflow's current details. */
  protected showDetails(): void {
    setCurrentDetails(`**${this.phase}**: ${this.step}`);
  }
}
