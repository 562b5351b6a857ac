// The status a lifecycle workflow owns (phase, step, conditions, and the fields of its kind), kept
// in the workflow and applied whole on every change: server-side apply removes owned fields that
// an apply leaves out. Applies are queued, so when several run at once (a sign-drives operation
// signs its nodes concurrently) each sends the state at the moment it runs and the last to land is
// the newest. An apply of what the last one that succeeded already sent is skipped: each is a
// local activity and a request the apiserver processes in full. Changes made together with no
// wait between them go out in one apply: stage() sets a condition that the next apply carries.
// The same step shows in the Temporal UI (current details, the WekaPhase search attribute) and in
// the state query.
import { setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import type { EventInput } from '../activities/types.js';
import type { Condition } from '../src/api/index.js';
import { setCondition, type ConditionStatus } from '../src/lifecycle/conditions.js';
import type { ObjectRef } from '../src/lifecycle/names.js';
import { WekaPhase, type LifecycleView } from '../src/protocol.js';
import { kubeLocal } from './activities.js';

export type EventType = 'Normal' | 'Warning';

export abstract class LifecycleStatus {
  phase = 'Pending';
  step = 'Starting';
  conditions: Condition[] = [];
  observedGeneration = 0;
  lastError: string | undefined;
  private readonly lastEventReason = new Map<string, string>();
  private writing: Promise<void> = Promise.resolve();
  /** The body of the last apply that succeeded, as JSON. */
  private applied: string | undefined;

  constructor(
    readonly kind: EventInput['kind'],
    readonly ref: ObjectRef,
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

  /** What this status applies: the lifecycle's fields and those of its kind. */
  protected abstract body(): object;

  /** Applies a body made by body() through the status subresource. */
  protected abstract write(body: object): Promise<void>;

  view(): LifecycleView {
    return {
      phase: this.phase,
      step: this.step,
      detail: `${this.ref.namespace}/${this.ref.name}: ${this.step}`,
      ...(this.lastError !== undefined ? { lastError: this.lastError } : {}),
    };
  }

  /** Moves to a phase and step, shows it in the Temporal UI, and applies the status. */
  async enter(phase: string, step: string): Promise<void> {
    if (phase !== this.phase) upsertSearchAttributes([{ key: WekaPhase, value: phase }]);
    this.phase = phase;
    this.step = step;
    this.showDetails();
    await this.publish();
  }

  /**
   * Sets a condition and applies the status; a Warning or Normal Event goes with it when the
   * condition's reason changed, so a waiting object does not flood its Events.
   */
  async condition(type: string, status: ConditionStatus, reason: string, message: string, event?: EventType) {
    this.setCondition(type, status, reason, message);
    await this.publish();
    await this.eventIfNew(type, reason, message, event);
  }

  /**
   * Sets a condition, with its Event as condition() does, without applying the status: for a
   * change the caller applies next (enter(), condition() or publish()), before any wait.
   */
  async stage(type: string, status: ConditionStatus, reason: string, message: string, event?: EventType) {
    this.setCondition(type, status, reason, message);
    await this.eventIfNew(type, reason, message, event);
  }

  private setCondition(type: string, status: ConditionStatus, reason: string, message: string): void {
    const at = new Date().toISOString();
    this.conditions = setCondition(
      this.conditions,
      { type, status, reason, message, observedGeneration: this.observedGeneration },
      at,
    );
    if (status === 'False') this.lastError = message;
  }

  private async eventIfNew(type: string, reason: string, message: string, event: EventType | undefined) {
    if (!event || this.lastEventReason.get(type) === reason) return;
    this.lastEventReason.set(type, reason);
    await this.event(event, this.conditions.find((c) => c.type === type)!.reason, message);
  }

  async event(type: EventType, reason: string, message: string): Promise<void> {
    await kubeLocal.recordEvent({ kind: this.kind, ref: this.ref, type, reason, message });
  }

  /** Applies the status, unless the last apply that succeeded sent the same. */
  publish(): Promise<void> {
    const next = this.writing.then(async () => {
      const body = this.body();
      const json = JSON.stringify(body);
      if (json === this.applied) return;
      await this.write(body);
      this.applied = json;
    });
    // A failed apply must not block the applies queued after it; its caller still sees the error.
    this.writing = next.catch(() => undefined);
    return next;
  }

  /** What the Temporal UI shows as the workflow's current details. */
  protected showDetails(): void {
    setCurrentDetails(`**${this.phase}**: ${this.step}`);
  }
}
