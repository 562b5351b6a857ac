// A WekaCluster's PodDisruptionBudget: every member but one, selecting that cluster's members only.
import { describe, expect, it } from 'vitest';
import {
  CLUSTER_UID_LABEL,
  disruptionBudget,
  disruptionBudgetName,
  membersThatMustStay,
  planDisruptionBudget,
} from '../../../src/manifests/disruption-budget.js';
import { MANAGED_BY, MANAGED_BY_LABEL } from '../../../src/api/names.js';
import { wekaPod } from '../../../src/manifests/pods.js';

const ref = { namespace: 'tenant-a', name: 'stores' };
const OURS = { [MANAGED_BY_LABEL]: MANAGED_BY };

describe('disruptionBudget', () => {
  it.each([
    [0, 0],
    [1, 0],
    [2, 1],
    [7, 6],
  ])('with %i members keeps %i available: one at a time goes', (members, min) => {
    expect(membersThatMustStay(members)).toBe(min);
    expect(disruptionBudget(ref, 'u1', members).spec.minAvailable).toBe(min);
  });

  it("selects the pods of this cluster's members by its uid, and is owned by the cluster", () => {
    const b = disruptionBudget(ref, 'u1', 3);
    const pod = wekaPod({
      name: 'stores-0',
      namespace: 'tenant-a',
      node: 'n',
      image: 'i',
      role: 'drive',
      owner: 'tenant-a/stores-0',
      clusterUID: 'u1',
    });
    for (const [k, v] of Object.entries(b.spec.selector.matchLabels)) expect(pod.metadata.labels[k]).toBe(v);
    expect(b.spec.selector.matchLabels[CLUSTER_UID_LABEL]).toBe('u1');
    expect(b.metadata.ownerReferences).toEqual([
      { apiVersion: 'weka.weka.io/v1alpha1', kind: 'WekaCluster', name: 'stores', uid: 'u1' },
    ]);
    expect(b.spec.unhealthyPodEvictionPolicy).toBe('AlwaysAllow');
  });

  it('is named within the 253 characters of an object name', () => {
    expect(disruptionBudgetName('x'.repeat(253)).length).toBeLessThanOrEqual(253);
    expect(disruptionBudgetName('stores')).toBe('stores-weka-drives');
  });
});

describe('planDisruptionBudget', () => {
  const wanted = disruptionBudget(ref, 'u1', 3);
  it.each([
    ['none', null, 'create'],
    ['this cluster’s, at the number', { labels: OURS, ownerUIDs: ['u1'], minAvailable: 2 }, 'keep'],
    ['this cluster’s, at another number', { labels: OURS, ownerUIDs: ['u1'], minAvailable: 1 }, 'patch'],
    [
      'the operator’s, of an earlier cluster of the name',
      { labels: OURS, ownerUIDs: ['u0'], minAvailable: 2 },
      'replace',
    ],
    ['somebody else’s', { labels: {}, ownerUIDs: [], minAvailable: 2 }, 'foreign'],
  ] as const)('found %s: %s', (_what, found, plan) => {
    expect(planDisruptionBudget(found, wanted)).toBe(plan);
  });
});
