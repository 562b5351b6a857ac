// Keeps a WekaCluster's PodDisruptionBudget (src/manifests/disruption-budget.ts) at the number
// its members call for.
import { PolicyV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { V1PodDisruptionBudget } from '@kubernetes/client-node';
import { disruptionBudget, planDisruptionBudget } from '../src/manifests/disruption-budget.js';
import type { ObjectRef } from '../src/api/names.js';
import type { ActivityDeps } from './deps.js';
import { createIfAbsent, isConflict, orIfMissing } from './kube/errors.js';

export function createDisruptionBudgetActivities(deps: ActivityDeps) {
  const policy = deps.kubeConfig.makeApiClient(PolicyV1Api);
  return {
    /**
     * Makes or updates the cluster's budget for `members` members; says what it did ('foreign':
     * a budget of the name that the operator did not make is left as it is).
     */
    async ensureClusterDisruptionBudget({
      ref,
      uid,
      members,
    }: {
      ref: ObjectRef;
      uid: string;
      members: number;
    }): Promise<'create' | 'keep' | 'patch' | 'replace' | 'foreign'> {
      const wanted = disruptionBudget(ref, uid, members);
      const { name, namespace } = wanted.metadata;
      const found = await orIfMissing(policy.readNamespacedPodDisruptionBudget({ name, namespace }), null);
      const plan = planDisruptionBudget(
        found && {
          labels: found.metadata?.labels ?? {},
          ownerUIDs: (found.metadata?.ownerReferences ?? []).map((o) => o.uid),
          minAvailable: found.spec?.minAvailable,
        },
        wanted,
      );
      switch (plan) {
        case 'replace':
          try {
            await orIfMissing(
              policy.deleteNamespacedPodDisruptionBudget({
                name,
                namespace,
                body: { preconditions: { uid: found!.metadata!.uid! } },
              }),
              null,
            );
          } catch (err) {
            if (!isConflict(err)) throw err;
          }
          await createIfAbsent(
            policy.createNamespacedPodDisruptionBudget({ namespace, body: wanted as V1PodDisruptionBudget }),
          );
          break;
        case 'create':
          await createIfAbsent(
            policy.createNamespacedPodDisruptionBudget({ namespace, body: wanted as V1PodDisruptionBudget }),
          );
          break;
        case 'patch':
          await policy.patchNamespacedPodDisruptionBudget(
            { name, namespace, body: { spec: { minAvailable: wanted.spec.minAvailable } } },
            setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
          );
          break;
        case 'keep':
        case 'foreign':
          break;
      }
      if (plan === 'foreign')
        deps.logger.warn(
          { cluster: `${namespace}/${ref.name}`, budget: name },
          "a PodDisruptionBudget of that name is not the operator's: left as it is",
        );
      return plan;
    },
  };
}
