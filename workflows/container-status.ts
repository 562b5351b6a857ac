// The status a drive container's workflow owns: the lifecycle's, plus what it added to Weka.
import type { AddedDriveRecord } from '../activities/types.js';
import type { ObjectRef } from '../src/lifecycle/names.js';
import type { LifecycleView } from '../src/protocol.js';
import { kubeLocal } from './activities.js';
import { LifecycleStatus } from './lifecycle-status.js';

export class ContainerStatus extends LifecycleStatus {
  containerID: number | undefined;
  addedVirtualDrives: string[] = [];
  addedDrives: AddedDriveRecord[] = [];
  allocation: unknown;

  constructor(ref: ObjectRef) {
    super('WekaContainer', ref);
  }

  override view(): LifecycleView {
    return { ...super.view(), ...(this.allocation !== undefined ? { allocation: this.allocation } : {}) };
  }

  protected write(): Promise<void> {
    return kubeLocal.writeContainerStatus({
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
