// The node mutex's own check of a namespace's ResourceQuotas (src/node/quota.ts): what every
// container of the namespace holds, read at decision time, against the quotas' hard limits. The
// dry-run create of a first allocation's pod (kube/pod-admission.ts) still runs after it, for
// every other limit the apiserver enforces.
import { API_GROUP, API_VERSION, WEKA_CONTAINER_PLURAL, type WekaContainer } from '../src/api/index.js';
import type { AllocationLedger } from '../src/node/allocation-ledger.js';
import { refText } from '../src/api/names.js';
import { refusal, type AllocationOutcome, type NodeAllocationDecision } from '../src/node/node-allocations.js';
import type { ContainerAllocation } from '../src/allocation/types.js';
import { podRequests } from '../src/manifests/pods.js';
import { quotaExcess, quotaExcessMessage, type QuotaLimits } from '../src/node/quota.js';
import type { ActivityDeps } from './deps.js';
import { kubeFailure } from './kube/errors.js';
import type { WekaApi } from './kube/weka-api.js';

export function createNamespaceQuotaCheck(api: WekaApi, logger: ActivityDeps['logger']) {
  /** The namespace's quotas; none when the operator may not list them (the pod's dry-run still counts them). */
  async function quotasOf(namespace: string): Promise<QuotaLimits[]> {
    try {
      const list = await api.core.listNamespacedResourceQuota({ namespace });
      return list.items.map((q) => ({ name: q.metadata?.name ?? '', hard: q.spec?.hard ?? {} }));
    } catch (err) {
      if (kubeFailure(err) === 'transient') throw err;
      logger.warn({ namespace, err }, 'cannot list the ResourceQuotas: only the dry-run of a first pod counts them');
      return [];
    }
  }

  /** What each container of the namespace holds, by uid: this node's ledger for its own, the status for the rest. */
  async function holdings(namespace: string, ledger: AllocationLedger): Promise<Map<string, ContainerAllocation>> {
    const list = (await api.custom.listNamespacedCustomObject({
      group: API_GROUP,
      version: API_VERSION,
      plural: WEKA_CONTAINER_PLURAL,
      namespace,
    })) as { items: WekaContainer[] };
    const held = new Map<string, ContainerAllocation>();
    for (const c of list.items) {
      const uid = c.metadata.uid ?? '';
      const allocation = ledger.containers[uid]?.allocation ?? c.status?.allocations;
      if (allocation) held.set(uid, allocation as ContainerAllocation);
    }
    return held;
  }

  /**
   * The first decision that would take its namespace past a ResourceQuota, and its answer: a first
   * allocation is refused; a growth keeps what the container held, with the refusal as pending.
   * Decisions earlier in the round count as made. An allocation the ledger already holds is not
   * checked again (a quota lowered since takes nothing away).
   */
  return async function firstBeyondQuota(
    ledger: AllocationLedger,
    decisions: readonly (NodeAllocationDecision | undefined)[],
  ): Promise<{ index: number; outcome: AllocationOutcome } | undefined> {
    const namespaces = new Map<string, { quotas: QuotaLimits[]; held?: Map<string, ContainerAllocation> }>();
    for (const [index, d] of decisions.entries()) {
      if (!d?.write || !d.outcome.ok || (!d.previous && ledger.containers[d.write.uid])) continue;
      const { ref, uid } = d.write;
      let seen = namespaces.get(ref.namespace);
      if (!seen) namespaces.set(ref.namespace, (seen = { quotas: await quotasOf(ref.namespace) }));
      if (seen.quotas.length === 0) continue;
      const held = (seen.held ??= await holdings(ref.namespace, ledger));
      const others = [...held].filter(([u]) => u !== uid).map(([, a]) => podRequests(a));
      const excess = quotaExcess(seen.quotas, others, podRequests(d.outcome.result));
      if (excess) {
        const message = `${refText(ref)}: ${quotaExcessMessage(excess)}; ${d.previous ? 'it keeps what it holds, and grows' : 'nothing was allocated, and it is allocated'} once the quota allows (asked again in 30 s or when capacity is released on the node)`;
        const refused = refusal('QuotaExceeded', message, true);
        const outcome: AllocationOutcome = d.previous
          ? { ok: true, result: d.previous, error: refused.error, waitForCapacity: true }
          : refused;
        return { index, outcome };
      }
      held.set(uid, d.outcome.result);
    }
    return undefined;
  };
}
