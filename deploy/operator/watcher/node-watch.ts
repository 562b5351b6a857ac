// The watch of the Nodes: a Node that comes back without its allocation ledger while drive
// containers on it hold allocations (src/operator/ledger-loss.ts decides) gets the ledger rebuilt
// at once, by asking the node's mutex to publish its drives, instead of when the next decision on
// that node happens to come. Asked once per Node object (its uid) between two lists; a list (each
// resync) asks again for the ones still without a ledger. It also reports each Node's books
// (src/node/ledger-books.ts), read again only when its drive or ledger annotation changes.
import type { KubeConfig } from '@kubernetes/client-node';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { sendMutexRequest } from '../../../activities/requester.js';
import type { Backoff } from '../../../src/backoff.js';
import { SHARED_DRIVES_ANNOTATION } from '../../../src/annotations/index.js';
import { ALLOCATIONS_ANNOTATION } from '../../../src/node/allocation-ledger.js';
import { nodeBooks, type NodeBooksResult } from '../../../src/node/ledger-books.js';
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
  /** Told each Node's books when they may have changed, and undefined once it is gone or the watch stops. */
  onBooks?: (node: string, books: NodeBooksResult | undefined) => void;
}

/** A watched Node with the two annotations its books are read from. */
interface NodeWithBooks extends WatchedNode {
  booksSource: string;
  annotations: Record<string, string>;
}

function nodeWithBooks(raw: unknown): NodeWithBooks | undefined {
  const node = watchedNodeOf(raw);
  if (!node) return undefined;
  const annotations = (raw as { metadata?: { annotations?: Record<string, string> } }).metadata?.annotations ?? {};
  const booksSource = JSON.stringify([annotations[SHARED_DRIVES_ANNOTATION], annotations[ALLOCATIONS_ANNOTATION]]);
  return { ...node, booksSource, annotations };
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
  /** What each Node's books were last read from, by uid, and its name. */
  const booksRead = new Map<string, { name: string; source: string }>();

  const report = (node: NodeWithBooks) => {
    if (!o.onBooks || booksRead.get(node.uid)?.source === node.booksSource) return;
    booksRead.set(node.uid, { name: node.name, source: node.booksSource });
    const books = nodeBooks(node.annotations);
    if (!books.ok)
      logger.warn({ node: node.name, problem: books.message }, "the node's drive annotations cannot be read");
    o.onBooks(node.name, books);
  };
  const forget = (uid: string) => {
    const read = booksRead.get(uid);
    if (!read) return;
    booksRead.delete(uid);
    o.onBooks?.(read.name, undefined);
  };
  o.signal.addEventListener('abort', () => {
    for (const uid of [...booksRead.keys()]) forget(uid);
  });

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
      parse: nodeWithBooks,
      keyOf: (node) => node.uid,
      onList(nodes, newer) {
        asked.clear();
        const listed = new Set(nodes.map((n) => n.uid));
        for (const uid of [...booksRead.keys()]) if (!listed.has(uid) && !newer.has(uid)) forget(uid);
        for (const node of nodes) {
          if (newer.has(node.uid)) continue;
          consider(node);
          report(node);
        }
      },
      onEvent(type, node) {
        if (type === 'DELETED') {
          asked.delete(node.uid);
          forget(node.uid);
        } else {
          consider(node);
          report(node);
        }
      },
    },
  });
}
