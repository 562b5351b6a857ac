// The watch of the Nodes: a Node that comes back without its allocation ledger while drive
// containers on it hold allocations (src/operator/ledger-loss.ts decides) gets the ledger rebuilt
// at once, by asking the node's mutex to publish its drives, instead of when the next decision on
// that node happens to come. Asked once per Node object (its uid) between two lists; a list (each
// resync) asks again for the ones still without a ledger.
import type { KubeConfig } from '@kubernetes/client-node';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { sendMutexRequest } from '../../../activities/requester.js';
import type { Backoff } from '../../../src/backoff.js';
import { ledgerLost, watchedNodeOf, type WatchedNode } from '../../../src/operator/ledger-loss.js';
import type { KnownContainer } from '../../../src/operator/pod-loss.js';
import { nodeMutexId, type MutexPayloads, type MutexRequest } from '../../../src/protocol.js';
import { runListWatch } from './list-watch.js';

export interface NodeWatchOptions {
  kubeConfig: KubeConfig;
  temporal: Client;
  taskQueue: string;
  logger: Logger;
  signal: AbortSignal;
  /** The drive containers the watcher knows, by uid, kept up to date by it. */
  containers: ReadonlyMap<string, KnownContainer>;
  backoff?: Backoff;
  resyncMs?: number;
}

/** The workflow id the mutex answers a rebuild to: none runs under it, so the answer is dropped. */
export function ledgerRebuildRequester(node: string): string {
  return `node-watch/${node}`;
}

/**
 * The request that rebuilds a node's ledger from its devices. Only while a drive container still
 * uses the node: by the time its mutex runs it, the last one may have been torn down and its
 * ssdproxy removed, and a rebuild must not bring a proxy back for nobody.
 */
export function ledgerRebuildRequest(node: string, nodeUid: string): MutexRequest {
  return {
    requestId: `rebuild-ledger-${nodeUid}-${Date.now()}`,
    kind: 'publish-drives',
    replyTo: ledgerRebuildRequester(node),
    payload: { node, onlyWhileUsed: true } satisfies MutexPayloads['publish-drives'],
  };
}

export function runNodeWatch(o: NodeWatchOptions): Promise<void> {
  const logger = o.logger.child({ component: 'node-watch' });
  /** The Node objects (uids) whose rebuild was asked since the last list. */
  const asked = new Set<string>();

  const consider = (node: WatchedNode) => {
    if (asked.has(node.uid) || !ledgerLost(node, o.containers.values())) return;
    asked.add(node.uid);
    const request = ledgerRebuildRequest(node.name, node.uid);
    sendMutexRequest(o.temporal, o.taskQueue, { mutexId: nodeMutexId(node.name), node: node.name, request })
      .then(() =>
        logger.warn(
          { node: node.name, uid: node.uid },
          'the node has no allocation ledger while containers on it hold allocations: asked its mutex to rebuild it from its devices',
        ),
      )
      .catch((err: unknown) => {
        asked.delete(node.uid);
        logger.warn({ node: node.name, err }, "could not ask the node's mutex to rebuild its ledger");
      });
  };

  return runListWatch({
    kubeConfig: o.kubeConfig,
    group: '',
    version: 'v1',
    plural: 'nodes',
    logger,
    signal: o.signal,
    ...(o.backoff ? { backoff: o.backoff } : {}),
    ...(o.resyncMs !== undefined ? { resyncMs: o.resyncMs } : {}),
    handlers: {
      parse: watchedNodeOf,
      keyOf: (node) => node.uid,
      onList(nodes, newer) {
        asked.clear();
        for (const node of nodes) if (!newer.has(node.uid)) consider(node);
      },
      onEvent(type, node) {
        if (type === 'DELETED') asked.delete(node.uid);
        else consider(node);
      },
    },
  });
}
