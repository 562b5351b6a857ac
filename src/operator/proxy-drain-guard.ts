// A node's ssdproxy serves the virtual drives of every drive container on the node, so a drain
// must take it last. `kubectl drain` evicts a node's pods all at once and retries those a
// PodDisruptionBudget holds back; so while any drive container's pod is on a node, that node's
// proxy pod has a budget of its own that lets no eviction through (minAvailable 1 over that one
// pod), and once the last of them is gone the budget goes and the drain's next try takes the
// proxy. The budget is the proxy container's (an owner reference), so it goes with it. A proxy
// pod that is not Ready may always be evicted: a broken proxy never holds a drain up. Deleting the
// pod (`kubectl delete pod`, the operator's own teardown) is not an eviction, and no budget holds it.
import { API_GROUP, API_VERSION } from '../api/index.js';
import type { DisruptionBudgetManifest } from '../manifests/disruption-budget.js';
import { MANAGED_BY, MANAGED_BY_LABEL, proxyName, ROLE_LABEL } from '../api/names.js';
import type { WatchedPod } from './pod-loss.js';
import { OWNER_UID_LABEL } from '../manifests/pods.js';

/** A node's proxy to guard: the uid of its proxy WekaContainer, whose pod the budget selects. */
export interface ProxyToGuard {
  node: string;
  proxyUID: string;
}

/**
 * The proxies to guard, by node: a node with a drive container's pod that is not ended (running,
 * pending or still terminating: an evicted pod holds the drives until it is gone) and a proxy pod
 * of the operator's (in its namespace) that belongs to a proxy container.
 */
export function proxiesToGuard(pods: Iterable<WatchedPod>, operatorNamespace: string): Map<string, ProxyToGuard> {
  const withDrives = new Set<string>();
  const proxies = new Map<string, ProxyToGuard>();
  for (const pod of pods) {
    if (!pod.node) continue;
    if (pod.role === 'drive' && pod.phase !== 'Failed' && pod.phase !== 'Succeeded') withDrives.add(pod.node);
    if (pod.role === 'ssdproxy' && pod.namespace === operatorNamespace && pod.ownerUID && !pod.deleting)
      proxies.set(pod.node, { node: pod.node, proxyUID: pod.ownerUID });
  }
  return new Map([...proxies].filter(([node]) => withDrives.has(node)));
}

/** The guard's name: the proxy container's, which is unique per node in the operator's namespace. */
export function proxyGuardName(node: string): string {
  return proxyName(node);
}

/** The budget that holds the proxy pod of `guard.node` against evictions. */
export function proxyGuardBudget(guard: ProxyToGuard, operatorNamespace: string): DisruptionBudgetManifest {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: {
      name: proxyGuardName(guard.node),
      namespace: operatorNamespace,
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY },
      ownerReferences: [
        {
          apiVersion: `${API_GROUP}/${API_VERSION}`,
          kind: 'WekaContainer',
          name: proxyName(guard.node),
          uid: guard.proxyUID,
        },
      ],
    },
    spec: {
      minAvailable: 1,
      selector: {
        matchLabels: { [MANAGED_BY_LABEL]: MANAGED_BY, [ROLE_LABEL]: 'ssdproxy', [OWNER_UID_LABEL]: guard.proxyUID },
      },
      unhealthyPodEvictionPolicy: 'AlwaysAllow',
    },
  };
}
