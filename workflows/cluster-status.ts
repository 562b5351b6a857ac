// The status a WekaCluster's workflow owns, applied whole on every change (server-side apply
// removes owned fields that an apply leaves out).
import { proxyActivities, setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import type { ClusterActivities } from '../activities/cluster-types.js';
import type { Condition } from '../src/api/index.js';
import { setCondition, type ConditionStatus } from '../src/lifecycle/conditions.js';
import type { ObjectRef } from '../src/lifecycle/names.js';
import { HEARTBEAT_TIMEOUT, kube } from './activities.js';
import { type LifecycleView, WekaPhase } from '../src/protocol.js';

const acts = proxyActivities<Pick<ClusterActivities, 'writeClusterStatus'>>({
  startToCloseTimeout: '1 minute',
  heartbeatTimeout: HEARTBEAT_TIMEOUT,
});

export class ClusterStatus {
  phase = 'Pending';
  step = 'Starting';
  conditions: Condition[] = [];
  clusterGUID: string | undefined;
  observedGeneration = 0;
  private lastEventReason = new Map<string, string>();

  constructor(private readonly ref: ObjectRef) {}

  view(): LifecycleView {
    return { phase: this.phase, step: this.step, detail: `${this.ref.namespace}/${this.ref.name}: ${this.step}` };
  }

  async enter(phase: string, step: string): Promise<void> {
    if (phase !== this.phase) upsertSearchAttributes([{ key: WekaPhase, value: phase }]);
    this.phase = phase;
    this.step = step;
    setCurrentDetails(`**${phase}**: ${step}`);
    await this.publish();
  }

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
    await this.publish();
    if (event && this.lastEventReason.get(type) !== reason) {
      this.lastEventReason.set(type, reason);
      await kube.recordEvent({
        kind: 'WekaCluster',
        ref: this.ref,
        type: event,
        reason: this.conditions.find((c) => c.type === type)!.reason,
        message,
      });
    }
  }

  async publish(): Promise<void> {
    await acts.writeClusterStatus({
      ref: this.ref,
      update: {
        phase: this.phase,
        conditions: this.conditions,
        observedGeneration: this.observedGeneration,
        ...(this.clusterGUID !== undefined ? { clusterGUID: this.clusterGUID } : {}),
      },
    });
  }
}
