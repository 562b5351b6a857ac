// The status a drive container's workflow owns: the lifecycle's, plus what it added to Weka.
import type { AddedDriveRecord, StatusUpdate } from '../../activities/types.js';
import type { ObjectRef } from '../../src/api/names.js';
import type { LifecycleView } from '../../src/protocol.js';
import { LifecycleStatus } from '../lifecycle-status.js';

export class ContainerStatus extends LifecycleStatus {
  containerID: number | undefined;
  /** The Weka cluster its container is in, as its agent said when it joined. */
  clusterGUID: string | undefined;
  addedVirtualDrives: string[] = [];
  addedDrives: AddedDriveRecord[] = [];
  allocation: unknown;

  constructor(ref: ObjectRef, uid: string) {
    super('WekaContainer', ref, uid);
  }

  override view(): LifecycleView {
    return { ...super.view(), ...(this.allocation !== undefined ? { allocation: this.allocation } : {}) };
  }

  protected fields(): StatusUpdate {
    return {
      addedVirtualDrives: this.addedVirtualDrives,
      addedDrives: this.addedDrives,
      ...(this.containerID !== undefined ? { containerID: this.containerID } : {}),
      ...(this.clusterGUID !== undefined ? { clusterGUID: this.clusterGUID } : {}),
    };
  }
}
