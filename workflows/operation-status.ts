// The status a WekaManualOperation's workflow owns: the lifecycle's, plus one result per node (and
// a clean-stale-virtual-drives run's fingerprint).
// Nodes are signed concurrently; what each is doing now shows in the Temporal UI and the state
// query, not in the status.
import type { OperationStatusUpdate, ProxySignedDrive } from '../activities/types.js';
import type { ObjectRef } from '../src/api/names.js';
import type { LifecycleView } from '../src/protocol.js';
import { setCurrentDetails } from '@temporalio/workflow';
import { LifecycleStatus } from './lifecycle-status.js';

export type NodeResult = OperationStatusUpdate['results'][number];

/** A drive signed on the node as its result lists it: the drive's physical UUID is its `uuid`. */
export function signedDriveRow({ physicalUUID, ...rest }: ProxySignedDrive): NonNullable<NodeResult['drives']>[number] {
  return { uuid: physicalUUID, ...rest };
}

export class OperationStatus extends LifecycleStatus {
  private readonly results = new Map<string, NodeResult>();
  private readonly nodeSteps = new Map<string, string>();
  private fingerprint: string | undefined;

  constructor(ref: ObjectRef, uid: string) {
    super('WekaManualOperation', ref, uid);
  }

  override view(): LifecycleView {
    const base = super.view();
    const nodes = [...this.nodeSteps].map(([node, step]) => `${node}: ${step}`);
    return { ...base, detail: [base.detail, ...nodes].join('\n') };
  }

  /** What one node is doing now. */
  nodeStep(node: string, step: string): void {
    this.nodeSteps.set(node, step);
    this.showDetails();
  }

  /** Records a node's result (an empty one while it runs) and applies the status. */
  async result(result: NodeResult): Promise<void> {
    this.results.set(result.node, result);
    await this.publish();
  }

  /** The fingerprint of the stale set a clean-stale-virtual-drives pass found, applied with the next write. */
  setFingerprint(fingerprint: string): void {
    this.fingerprint = fingerprint;
  }

  /** How many devices the nodes skipped. */
  skippedDevices(): number {
    return [...this.results.values()].reduce((sum, r) => sum + (r.skipped?.length ?? 0), 0);
  }

  failedResults(): NodeResult[] {
    return [...this.results.values()].filter((r) => r.error !== undefined);
  }

  protected fields(): Pick<OperationStatusUpdate, 'results' | 'fingerprint'> {
    return {
      results: [...this.results.values()].sort((a, b) => a.node.localeCompare(b.node)),
      ...(this.fingerprint !== undefined ? { fingerprint: this.fingerprint } : {}),
    };
  }

  protected override showDetails(): void {
    const nodes = [...this.nodeSteps].map(([node, step]) => `- ${node}: ${step}`);
    setCurrentDetails([`**${this.phase}**: ${this.step}`, ...nodes].join('\n'));
  }
}
