// The status a drive container's workflow owns: the lifecycle's, plus what it added to Weka.
import type { AddedDriveRecord, StatusUpdate } from '../activities/types.js';
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

  protected body(): StatusUpdate {
    return {
      phase: this.phase,
      conditions: this.conditions,
      addedVirtualDrives: this.addedVirtualDrives,
      addedDrives: this.addedDrives,
      observedGeneration: this.observedGeneration,
      ...(this.containerID !== undefined ? { containerID: this.containerID } : {}),
    };
  }

  protected write(update: StatusUpdate): Promise<void> {
    return kubeLocal.writeContainerStatus({ ref: this.ref, update });
  }
}
