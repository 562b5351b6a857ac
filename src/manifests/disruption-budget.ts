// A WekaCluster's PodDisruptionBudget: voluntary disruptions (`kubectl drain`, the eviction API)
// take its members' pods one at a time, as Rook's budgets do for a Ceph cluster's OSDs, so that a
// drain never stops more of a Weka cluster at once than its redundancy is planned for. The
// members' pods are bare pods, for which Kubernetes counts only an integer minAvailable (it
// cannot tell how many there should be), so the budget says "every member but one" and the
// cluster's workflow keeps that number as members come and go. A pod that is not Ready may be
// evicted whatever the budget says, so a broken member never holds a drain up.
import { API_GROUP, API_VERSION } from '../api/index.js';
import { MANAGED_BY, MANAGED_BY_LABEL, ROLE_LABEL, type ObjectRef } from '../api/names.js';

/** On a WekaCluster member's pod: the uid of the cluster, which its budget selects by. */
export const CLUSTER_UID_LABEL = 'weka.weka.io/cluster-uid';

export interface DisruptionBudgetManifest {
  apiVersion: 'policy/v1';
  kind: 'PodDisruptionBudget';
  metadata: {
    name: string;
    namespace: string;
    labels: Record<string, string>;
    ownerReferences: Array<{ apiVersion: string; kind: string; name: string; uid: string }>;
  };
  spec: {
    minAvailable: number;
    selector: { matchLabels: Record<string, string> };
    unhealthyPodEvictionPolicy: 'AlwaysAllow';
  };
}

/** Its name: the cluster's, with a suffix that says whose it is. */
export function disruptionBudgetName(cluster: string): string {
  return `${cluster.slice(0, 253 - '-weka-drives'.length)}-weka-drives`;
}

/** Every member but one must stay available: at most one is taken at a time. */
export function membersThatMustStay(members: number): number {
  return Math.max(members - 1, 0);
}

/** The budget of the cluster `ref` (uid `uid`) with `members` members; gone with the cluster. */
export function disruptionBudget(ref: ObjectRef, uid: string, members: number): DisruptionBudgetManifest {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: {
      name: disruptionBudgetName(ref.name),
      namespace: ref.namespace,
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY },
      ownerReferences: [{ apiVersion: `${API_GROUP}/${API_VERSION}`, kind: 'WekaCluster', name: ref.name, uid }],
    },
    spec: {
      minAvailable: membersThatMustStay(members),
      selector: { matchLabels: { [MANAGED_BY_LABEL]: MANAGED_BY, [ROLE_LABEL]: 'drive', [CLUSTER_UID_LABEL]: uid } },
      unhealthyPodEvictionPolicy: 'AlwaysAllow',
    },
  };
}

/**
 * What to do about the budget found under its name: make it, keep it, change its number, make it
 * anew (the operator's, of an earlier cluster of the name), or leave it alone (somebody else's).
 */
export function planDisruptionBudget(
  found: {
    labels: Readonly<Record<string, string>>;
    ownerUIDs: readonly string[];
    minAvailable?: number | string | undefined;
  } | null,
  wanted: DisruptionBudgetManifest,
): 'create' | 'keep' | 'patch' | 'replace' | 'foreign' {
  if (!found) return 'create';
  if (found.labels[MANAGED_BY_LABEL] !== MANAGED_BY) return 'foreign';
  if (!found.ownerUIDs.includes(wanted.metadata.ownerReferences[0]!.uid)) return 'replace';
  return found.minAvailable === wanted.spec.minAvailable ? 'keep' : 'patch';
}
