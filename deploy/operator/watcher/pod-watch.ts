// The watch of the operator's own pods (label-selected, in every namespace): a drive container's
// pod or a node's ssdproxy pod that is deleted, being deleted or ended is told to the lifecycle
// workflows it concerns (src/operator/pod-loss.ts decides which), which make it again. A list
// (at start, after a lost watch, at each resync) also tells the Ready containers whose pod is
// missing, deleted while no watch ran. It also keeps each node's ssdproxy pod held against
// evictions while drive containers' pods are on the node (proxy-drain-guards.ts).
import type { KubeConfig } from '@kubernetes/client-node';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Backoff } from '../../../src/backoff.js';
import {
  containersToTell,
  OPERATOR_PODS_SELECTOR,
  podLost,
  readyContainersWithoutPods,
  watchedPodOf,
  type KnownContainer,
  type WatchedPod,
} from '../../../src/operator/pod-loss.js';
import { containerWorkflowId, podLostSignal } from '../../../src/protocol.js';
import { runListWatch } from './list-watch.js';
import { ProxyDrainGuards } from './proxy-drain-guards.js';

export interface PodWatchOptions {
  kubeConfig: KubeConfig;
  temporal: Client;
  logger: Logger;
  signal: AbortSignal;
  /** The drive containers the watcher knows, by uid, kept up to date by it. */
  containers: ReadonlyMap<string, KnownContainer>;
  /** Where the operator's proxy pods are; without it, proxy pods are not looked at. */
  operatorNamespace?: string | undefined;
  backoff?: Backoff;
  resyncMs?: number;
}

export function runPodWatch(o: PodWatchOptions): Promise<void> {
  const logger = o.logger.child({ component: 'pod-watch' });
  /** The lost pods already told, so a deletion's MODIFIED and DELETED tell once. */
  const told = new Set<string>();
  const guards = o.operatorNamespace
    ? new ProxyDrainGuards(o.kubeConfig, o.operatorNamespace, logger, o.signal)
    : undefined;

  const tell = (uids: readonly string[], why: string) => {
    for (const uid of uids) {
      o.temporal.workflow
        .getHandle(containerWorkflowId(uid))
        .signal(podLostSignal)
        .then(() => logger.info({ uid, why }, 'told a drive container that a pod of its is lost'))
        .catch((err: unknown) => {
          if (!(err instanceof WorkflowNotFoundError)) logger.warn({ uid, why, err }, 'could not tell of a lost pod');
        });
    }
  };
  const describe = (pod: WatchedPod, deleted: boolean) =>
    `${pod.role} pod ${pod.namespace}/${pod.name} ${deleted ? 'deleted' : pod.deleting ? 'being deleted' : `phase ${pod.phase}`}`;

  return runListWatch({
    kubeConfig: o.kubeConfig,
    group: '',
    version: 'v1',
    plural: 'pods',
    labelSelector: OPERATOR_PODS_SELECTOR,
    logger,
    signal: o.signal,
    ...(o.backoff ? { backoff: o.backoff } : {}),
    ...(o.resyncMs !== undefined ? { resyncMs: o.resyncMs } : {}),
    handlers: {
      parse: watchedPodOf,
      keyOf: (pod) => pod.uid,
      onList(pods) {
        guards?.listed(pods);
        const listed = new Set(pods.map((pod) => pod.uid));
        for (const uid of told) if (!listed.has(uid)) told.delete(uid);
        for (const pod of pods) {
          if (!podLost(pod, false)) continue;
          told.add(pod.uid);
          tell(containersToTell(pod, o.containers, o.operatorNamespace), describe(pod, false));
        }
        tell(
          readyContainersWithoutPods(pods, o.containers, o.operatorNamespace),
          'a pod of a Ready container is missing',
        );
      },
      onEvent(type, pod) {
        const deleted = type === 'DELETED';
        guards?.changed(pod, deleted);
        if (!podLost(pod, deleted)) return;
        const first = !told.has(pod.uid);
        if (deleted) told.delete(pod.uid);
        else told.add(pod.uid);
        if (first) tell(containersToTell(pod, o.containers, o.operatorNamespace), describe(pod, deleted));
      },
    },
  });
}
