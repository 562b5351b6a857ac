// The status a WekaCluster's workflow owns: the lifecycle's, plus the Weka cluster's GUID.
import type { ClusterStatusUpdate } from '../activities/cluster-types.js';
import type { ObjectRef } from '../src/lifecycle/names.js';
import { kubeLocal } from './activities.js';
import { LifecycleStatus } from './lifecycle-status.js';

export class ClusterStatus extends LifecycleStatus {
  clusterGUID: string | undefined;

  constructor(ref: ObjectRef) {
    super('WekaCluster', ref);
  }

  protected body(): ClusterStatusUpdate {
    return {
      phase: this.phase,
      conditions: this.conditions,
      observedGeneration: this.observedGeneration,
      ...(this.clusterGUID !== undefined ? { clusterGUID: this.clusterGUID } : {}),
    };
  }

  protected write(update: ClusterStatusUpdate): Promise<void> {
    return kubeLocal.writeClusterStatus({ ref: this.ref, update });
  }
}
