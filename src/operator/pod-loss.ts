// Which lifecycle workflows a pod the operator made must tell when that pod is lost: deleted
// (`kubectl delete pod`, an eviction, a drain, a node's graceful shutdown), being deleted, or ended
// (Failed after a kubelet eviction, or Succeeded). Its pods are bare pods that nothing else makes
// again, and a Ready container's workflow waits only for its spec to change: without this, the
// container would stay Ready for ever with no pod. The watcher executes what this decides.
import { MANAGED_BY, MANAGED_BY_LABEL, ROLE_LABEL } from '../api/names.js';
import { OWNER_UID_LABEL } from '../manifests/pods.js';

/** What the watcher keeps of one of the operator's pods. */
export interface WatchedPod {
  uid: string;
  namespace: string;
  name: string;
  role: 'drive' | 'ssdproxy';
  /** The uid of the WekaContainer a drive container's pod belongs to. */
  ownerUID?: string;
  /** The node a proxy pod is bound to. */
  node?: string;
  phase?: string;
  deleting: boolean;
}

/** The label selector of the pods the watcher watches: every pod the operator makes carries it. */
export const OPERATOR_PODS_SELECTOR = `${MANAGED_BY_LABEL}=${MANAGED_BY}`;

/** A drive container as the watcher knows it, for deciding whom a lost pod concerns. */
export interface KnownContainer {
  uid: string;
  namespace: string;
  name: string;
  node?: string;
  phase?: string;
}

/** The pod, or undefined for anything that is not one of the operator's drive or proxy pods. */
export function watchedPodOf(raw: unknown): WatchedPod | undefined {
  const pod = raw as {
    metadata?: {
      uid?: string;
      namespace?: string;
      name?: string;
      labels?: Record<string, string>;
      deletionTimestamp?: unknown;
    };
    spec?: { nodeName?: string };
    status?: { phase?: string };
  } | null;
  const m = pod?.metadata;
  if (!m?.uid || !m.namespace || !m.name || m.labels?.[MANAGED_BY_LABEL] !== MANAGED_BY) return undefined;
  const role = m.labels[ROLE_LABEL];
  if (role !== 'drive' && role !== 'ssdproxy') return undefined;
  const owner = m.labels[OWNER_UID_LABEL];
  return {
    uid: m.uid,
    namespace: m.namespace,
    name: m.name,
    role,
    ...(owner ? { ownerUID: owner } : {}),
    ...(pod?.spec?.nodeName ? { node: pod.spec.nodeName } : {}),
    ...(pod?.status?.phase ? { phase: pod.status.phase } : {}),
    deleting: m.deletionTimestamp !== undefined && m.deletionTimestamp !== null,
  };
}

/** Whether the pod will never run again as it is: deleted, being deleted, or ended. */
export function podLost(pod: WatchedPod, deleted: boolean): boolean {
  return deleted || pod.deleting || pod.phase === 'Failed' || pod.phase === 'Succeeded';
}

/**
 * The uids of the drive containers to tell that `pod` was lost. A drive container's pod concerns
 * its own container only: the one of its uid, name and namespace (a pod someone else labelled
 * with a victim's uid in another namespace tells nobody). A proxy pod concerns every drive
 * container on its node, and only the operator's own proxy pods count (those in its namespace).
 */
export function containersToTell(
  pod: WatchedPod,
  containers: ReadonlyMap<string, KnownContainer>,
  operatorNamespace: string | undefined,
): string[] {
  if (pod.role === 'drive') {
    const c = pod.ownerUID === undefined ? undefined : containers.get(pod.ownerUID);
    return c && c.namespace === pod.namespace && c.name === pod.name ? [c.uid] : [];
  }
  if (operatorNamespace === undefined || pod.namespace !== operatorNamespace || pod.node === undefined) return [];
  return [...containers.values()].filter((c) => c.node === pod.node).map((c) => c.uid);
}

/**
 * At a list of the operator's pods: the Ready drive containers whose pod is not among them (it was
 * deleted while no watch ran), and those whose node's proxy pod is not, when `operatorNamespace`
 * is known. A container not Ready is making its pod, or will when its step runs again.
 */
export function readyContainersWithoutPods(
  pods: readonly WatchedPod[],
  containers: ReadonlyMap<string, KnownContainer>,
  operatorNamespace: string | undefined,
): string[] {
  const drivePods = new Set(
    pods.filter((p) => p.role === 'drive').map((p) => `${p.namespace}/${p.name}/${p.ownerUID}`),
  );
  const proxyNodes = new Set(
    pods.filter((p) => p.role === 'ssdproxy' && p.namespace === operatorNamespace).map((p) => p.node),
  );
  const out: string[] = [];
  for (const c of containers.values()) {
    if (c.phase !== 'Ready') continue;
    const ownPod = drivePods.has(`${c.namespace}/${c.name}/${c.uid}`);
    if (!ownPod || (operatorNamespace !== undefined && c.node !== undefined && !proxyNodes.has(c.node)))
      out.push(c.uid);
  }
  return out;
}
