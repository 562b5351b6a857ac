// The status a drive container's workflow owns, kept in the workflow and applied whole on every
// change: server-side apply removes owned fields that an apply leaves out.
import { setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import type { AddedDriveRecord } from '../activities/types.js';
import type { Condition } from '../src/api/index.js';
import { setCondition, type ConditionStatus } from '../src/lifecycle/conditions.js';
import type { ObjectRef } from '../src/lifecycle/names.js';
import { kube } from './activities.js';
import { type LifecycleView, WekaPhase } from '../src/protocol.js';

export class ContainerStatus {
  phase = 'Pending';
  step = 'Starting';
  conditions: Condition[] = [];
  containerID: number | undefined;
  addedVirtualDrives: string[] = [];
  addedDrives: AddedDriveRecord[] = [];
  observedGeneration = 0;
  lastError: string | undefined;
  allocation: unknown;
  private lastEventReason = new Map<string, string>();

  constructor(private readonly ref: ObjectRef) {}

  view(): LifecycleView {
    return {
      phase: this.phase,
      step: this.step,
      detail: `${this.ref.namespace}/${this.ref.name}: ${this.step}`,
      ...(this.allocation !== undefined ? { allocation: this.allocation } : {}),
      ...(this.lastError !== undefined ? { lastError: this.lastError } : {}),
    };
  }

  /** Moves to a phase and step, shows it in the Temporal UI, and applies the status. */
  async enter(phase: string, step: string): Promise<void> {
    const phaseChanged = phase !== this.phase;
    this.phase = phase;
    this.step = step;
    setCurrentDetails(`**${phase}**: ${step}`);
    if (phaseChanged) upsertSearchAttributes([{ key: WekaPhase, value: phase }]);
    await this.publish();
  }

  /**
   * Sets a condition and applies the status; a Warning or Normal Event goes with it when the
   * condition's reason changed, so a waiting container does not flood its Events.
   */
  async condition(
    type: string,
    status: ConditionStatus,
    reason: string,
    message: string,
    event?: 'Normal' | 'Warning',
  ): Promise<void> {
    this.conditions = setCondition(
      this.conditions,
      { type, status, reason, message, observedGeneration: this.observedGeneration },
      new Date().toISOString(),
    );
    if (status === 'False') this.lastError = message;
    await this.publish();
    if (event && this.lastEventReason.get(type) !== reason) {
      this.lastEventReason.set(type, reason);
      await kube.recordEvent({
        kind: 'WekaContainer',
        ref: this.ref,
        type: event,
        reason: this.conditions.find((c) => c.type === type)!.reason,
        message,
      });
    }
  }

  async publish(): Promise<void> {
    await kube.writeContainerStatus({
      ref: this.ref,
      update: {
        phase: this.phase,
        conditions: this.conditions,
        addedVirtualDrives: this.addedVirtualDrives,
        addedDrives: this.addedDrives,
        observedGeneration: this.observedGeneration,
        ...(this.containerID !== undefined ? { containerID: this.containerID } : {}),
      },
    });
  }
}
