// The status a WekaManualOperation's workflow owns, kept in the workflow and applied whole on
// every change (server-side apply drops owned fields an apply leaves out). Nodes are signed
// concurrently, so applies are queued: each one sends the state at the moment it runs, and the
// last one to land is always the newest.
import { proxyActivities, setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import type { OperationStatusUpdate, SignDrivesActivities } from '../activities/types.js';
import type { Condition } from '../src/api/index.js';
import { setCondition, type ConditionStatus } from '../src/lifecycle/conditions.js';
import type { ObjectRef } from '../src/lifecycle/names.js';
import { HEARTBEAT_TIMEOUT, kube } from './activities.js';
import { NON_RETRYABLE_ERRORS } from './retry.js';
import { type LifecycleView, WekaPhase } from '../src/protocol.js';

export type NodeResult = OperationStatusUpdate['results'][number];

const acts = proxyActivities<Pick<SignDrivesActivities, 'writeOperationStatus'>>({
  startToCloseTimeout: '1 minute',
  heartbeatTimeout: HEARTBEAT_TIMEOUT,
  retry: {
    initialInterval: '500 milliseconds',
    maximumInterval: '15 seconds',
    nonRetryableErrorTypes: NON_RETRYABLE_ERRORS,
  },
});

export class OperationStatus {
  phase = 'Pending';
  step = 'Starting';
  conditions: Condition[] = [];
  observedGeneration = 0;
  lastError: string | undefined;
  private readonly results = new Map<string, NodeResult>();
  private readonly nodeSteps = new Map<string, string>();
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly ref: ObjectRef) {}

  view(): LifecycleView {
    const nodes = [...this.nodeSteps].map(([node, step]) => `${node}: ${step}`);
    return {
      phase: this.phase,
      step: this.step,
      detail: [`${this.ref.namespace}/${this.ref.name}: ${this.step}`, ...nodes].join('\n'),
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

  /** What one node is doing now: shown in the Temporal UI and the state query, not in the status. */
  nodeStep(node: string, step: string): void {
    this.nodeSteps.set(node, step);
    this.showDetails();
  }

  /** Records a node's result (an empty one while it runs) and applies the status. */
  async result(result: NodeResult): Promise<void> {
    this.results.set(result.node, result);
    await this.publish();
  }

  failedResults(): NodeResult[] {
    return [...this.results.values()].filter((r) => r.error !== undefined);
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
    if (status === 'False') this.lastError = message;
    await this.publish();
    if (event) await this.event(event, this.conditions.find((c) => c.type === type)!.reason, message);
  }

  async event(type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    await kube.recordEvent({ kind: 'WekaManualOperation', ref: this.ref, type, reason, message });
  }

  publish(): Promise<void> {
    const next = this.writing.then(() => acts.writeOperationStatus({ ref: this.ref, status: this.snapshot() }));
    // A failed apply must not block the applies queued after it; its caller still sees the error.
    this.writing = next.catch(() => undefined);
    return next;
  }

  private snapshot(): OperationStatusUpdate {
    return {
      phase: this.phase,
      conditions: this.conditions,
      results: [...this.results.values()].sort((a, b) => a.node.localeCompare(b.node)),
      observedGeneration: this.observedGeneration,
    };
  }

  private showDetails(): void {
    const nodes = [...this.nodeSteps].map(([node, step]) => `- ${node}: ${step}`);
    setCurrentDetails([`**${this.phase}**: ${this.step}`, ...nodes].join('\n'));
  }
}
