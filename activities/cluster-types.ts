// Contracts of the WekaCluster lifecycle's activities (workflows import them as types only).
import type { Condition, WekaClusterSpec } from '../src/api/index.js';
import type { ObjectRef } from '../src/lifecycle/names.js';
import type { ExecTargetRef } from './types.js';

export interface ClusterSnapshot {
  uid: string;
  generation: number;
  deleting: boolean;
  spec: WekaClusterSpec;
  status: { clusterGUID?: string };
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

export interface ClusterActivities {
  readCluster(ref: ObjectRef): Promise<ClusterSnapshot | null>;
  /** Creates the cluster's drive containers that are missing; returns every member. */
  ensureClusterContainers(input: { ref: ObjectRef; nodes: string[] }): Promise<MemberContainer[]>;
  clusterMembers(ref: ObjectRef): Promise<MemberContainer[]>;
  /** Creates the Weka cluster (or finds it by name) from a member's pod; returns its GUID. */
  formWekaCluster(input: { ref: ObjectRef; target: ExecTargetRef }): Promise<string>;
  writeClusterStatus(input: { ref: ObjectRef; update: ClusterStatusUpdate }): Promise<void>;
  /** Deletes every member not already being deleted; returns how many members still exist. */
  deleteClusterContainers(ref: ObjectRef): Promise<number>;
}
