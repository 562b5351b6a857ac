// The plain data the WekaCluster lifecycle's activities take and return (workflows import them as
// types only).
import type { Condition, WekaClusterSpec } from '../src/api/index.js';
import type { ObjectSnapshot } from './types.js';

export interface ClusterSnapshot extends ObjectSnapshot {
  spec: WekaClusterSpec;
  status: { clusterGUID?: string; conditions: Condition[] };
}

export interface MemberContainer {
  name: string;
  uid: string;
  node: string;
  phase: string;
}

export interface ClusterStatusUpdate {
  phase: string;
  conditions: Condition[];
  observedGeneration: number;
  clusterGUID?: string;
}
