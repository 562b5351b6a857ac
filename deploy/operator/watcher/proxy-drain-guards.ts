// Keeps each node's proxy guard (src/operator/proxy-drain-guard.ts) in step with the pods the pod
// watch sees: made while a drive container's pod is on the node, deleted once none is. Every
// replica's watcher does it; the writes are idempotent (a 409 on create reads what is there, a 404
// on delete is done), so two replicas agree once both have seen the same pods. A failed write is
// tried again after a few seconds.
import { PolicyV1Api, type KubeConfig, type V1PodDisruptionBudget } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { WatchedPod } from '../../../src/operator/pod-loss.js';
import { MANAGED_BY, MANAGED_BY_LABEL } from '../../../src/api/names.js';
import { OWNER_UID_LABEL } from '../../../src/manifests/pods.js';
import {
  proxiesToGuard,
  proxyGuardBudget,
  proxyGuardName,
  type ProxyToGuard,
} from '../../../src/operator/proxy-drain-guard.js';

const RETRY_MS = 5_000;
/** Pod events come in bursts (a rollout, a drain): one pass after each burst. */
const SETTLE_MS = 200;

export class ProxyDrainGuards {
  private readonly pods = new Map<string, WatchedPod>();
  /** What this replica last wrote per node: the guarded proxy's uid, or null for no guard. */
  private readonly written = new Map<string, string | null>();
  private timer: NodeJS.Timeout | undefined;
  private passing = false;
  private again = false;
  private readonly policy: PolicyV1Api;

  constructor(
    kubeConfig: KubeConfig,
    private readonly operatorNamespace: string,
    private readonly logger: Logger,
    private readonly signal: AbortSignal,
  ) {
    this.policy = kubeConfig.makeApiClient(PolicyV1Api);
    signal.addEventListener('abort', () => clearTimeout(this.timer), { once: true });
  }

  /** A full list: every node's guard is written again, as a restart may have missed changes. */
  listed(pods: readonly WatchedPod[]): void {
    this.pods.clear();
    for (const pod of pods) this.pods.set(pod.uid, pod);
    this.written.clear();
    this.schedule(0);
  }

  changed(pod: WatchedPod, deleted: boolean): void {
    if (deleted) this.pods.delete(pod.uid);
    else this.pods.set(pod.uid, pod);
    this.schedule(SETTLE_MS);
  }

  private schedule(ms: number): void {
    if (this.signal.aborted) return;
    if (this.passing) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.pass(), ms);
    this.timer.unref?.();
  }

  private async pass(): Promise<void> {
    this.passing = true;
    this.again = false;
    let failed = false;
    try {
      const wanted = proxiesToGuard(this.pods.values(), this.operatorNamespace);
      // A guard matters only where a proxy pod is: elsewhere it holds nothing.
      const proxied = [...this.pods.values()].flatMap((p) => (p.role === 'ssdproxy' && p.node ? [p.node] : []));
      const nodes = new Set([...wanted.keys(), ...proxied]);
      for (const node of nodes) {
        const guard = wanted.get(node);
        const want = guard?.proxyUID ?? null;
        if (this.written.has(node) && this.written.get(node) === want) continue;
        try {
          if (guard) await this.hold(guard);
          else await this.letGo(node);
          this.written.set(node, want);
        } catch (err) {
          failed = true;
          this.logger.warn({ node, err }, "could not write the guard of the node's ssdproxy pod; trying again");
        }
      }
    } finally {
      this.passing = false;
    }
    if (this.again || failed) this.schedule(failed ? RETRY_MS : SETTLE_MS);
  }

  private async hold(guard: ProxyToGuard): Promise<void> {
    const namespace = this.operatorNamespace;
    const name = proxyGuardName(guard.node);
    const body = proxyGuardBudget(guard, namespace) as V1PodDisruptionBudget;
    try {
      await this.policy.createNamespacedPodDisruptionBudget({ namespace, body });
      this.logger.info(
        { node: guard.node },
        "the node's ssdproxy pod is held against evictions while drive pods run there",
      );
      return;
    } catch (err) {
      if ((err as { code?: number }).code !== 409) throw err;
    }
    const found = await this.policy.readNamespacedPodDisruptionBudget({ namespace, name });
    if (!ours(found))
      throw new Error(
        `a PodDisruptionBudget ${namespace}/${name} that the operator did not make (no ${MANAGED_BY_LABEL}=${MANAGED_BY}) has the name of node ${guard.node}'s ssdproxy guard; it is left alone, and the proxy is not guarded until it is renamed or deleted`,
      );
    if (found.spec?.selector?.matchLabels?.[OWNER_UID_LABEL] === guard.proxyUID) return;
    // The guard of an earlier proxy container of the node: made again for this one.
    await this.deleteOurs(found);
    await this.policy.createNamespacedPodDisruptionBudget({ namespace, body });
  }

  /** Deletes the node's guard; a budget of that name the operator did not make is left alone. */
  private async letGo(node: string): Promise<void> {
    const namespace = this.operatorNamespace;
    const found = await this.policy
      .readNamespacedPodDisruptionBudget({ namespace, name: proxyGuardName(node) })
      .catch(ignoreNotFound);
    if (!found) return;
    if (!ours(found)) {
      this.logger.warn(
        { node, budget: found.metadata?.name },
        "a PodDisruptionBudget the operator did not make has the name of the node's ssdproxy guard: left alone",
      );
      return;
    }
    if (await this.deleteOurs(found))
      this.logger.info({ node }, 'no drive pod left on the node: its ssdproxy pod may be evicted');
  }

  /** Deletes that very budget (its uid as a precondition); false when it was gone or replaced meanwhile. */
  private async deleteOurs(found: V1PodDisruptionBudget): Promise<boolean> {
    const { name = '', namespace = this.operatorNamespace, uid } = found.metadata ?? {};
    return this.policy
      .deleteNamespacedPodDisruptionBudget({ namespace, name, body: uid ? { preconditions: { uid } } : {} })
      .then(
        () => true,
        (err: unknown) => {
          // 409: a budget made again under the name meanwhile, which is not this one.
          if ((err as { code?: number }).code === 409) return false;
          return ignoreNotFound(err) ?? false;
        },
      );
  }
}

function ours(budget: V1PodDisruptionBudget): boolean {
  return budget.metadata?.labels?.[MANAGED_BY_LABEL] === MANAGED_BY;
}

function ignoreNotFound(err: unknown): undefined {
  if ((err as { code?: number }).code !== 404) throw err;
  return undefined;
}
