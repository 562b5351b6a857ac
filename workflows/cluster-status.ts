// The status a WekaCluster's workflow owns: the lifecycle's, plus the Weka cluster's GUID.
import type { ClusterStatusUpdate } from '../activities/types.js';
import type { ObjectRef } from '../src/api/names.js';
import { LifecycleStatus } from './lifecycle-status.js';

export class ClusterStatus extends LifecycleStatus {
  clusterGUID: string | undefined;

  constructor(ref: ObjectRef, uid: string) {
    super('WekaCluster', ref, uid);
  }

  protected fields(): Partial<ClusterStatusUpdate> {
    return this.clusterGUID !== undefined ? { clusterGUID: this.clusterGUID } : {};
  }
}
