// The CR watcher: a list+watch per enabled kind feeding one keyed work queue (by uid), whose
// handler runs the per-object decision. It keeps no state that matters across restarts: after a
// restart it lists everything again and converges; two watchers at once are safe because every
// action is idempotent and keyed by workflow id (no leader election).
import type { KubeConfig } from '@kubernetes/client-node';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { PLURAL, WekaApi } from '../../../activities/kube/weka-api.js';
import { API_GROUP, API_VERSION } from '../../../src/api/index.js';
import type { Backoff } from '../../../src/backoff.js';
import {
  DEFAULT_WATCHED_KINDS,
  watchedObjectOf,
  type WatchedKind,
  type WatchedObject,
} from '../../../src/lifecycle/watch-decision.js';
import type { OperatorMetrics } from '../metrics.js';
import { runListWatch } from './list-watch.js';
import { Reconciler } from './reconcile.js';
import { KeyedWorkQueue } from './work-queue.js';

export interface WatcherOptions {
  kubeConfig: KubeConfig;
  temporal: Client;
  taskQueue: string;
  logger: Logger;
  /** The kinds to act on; WekaCluster is off by default until its workflow exists. */
  kinds?: readonly WatchedKind[];
  metrics?: OperatorMetrics;
  /** Objects handled at once. */
  concurrency?: number;
  backoff?: Backoff;
  /** How often each kind is listed again even when its watch is healthy. */
  resyncMs?: number;
}

export interface RunningWatcher {
  /** Resolves once every kind was listed and each listed object was handled once. */
  ready: Promise<void>;
  isReady(): boolean;
  /** Stops watching and waits for the actions in flight. */
  stop(): Promise<void>;
}

export function startWatcher(o: WatcherOptions): RunningWatcher {
  const kinds = o.kinds ?? DEFAULT_WATCHED_KINDS;
  const enabled: ReadonlySet<WatchedKind> = new Set(kinds);
  const api = new WekaApi(o.kubeConfig);
  const abort = new AbortController();
  const logger = o.logger.child({ component: 'watcher' });
  const reconcilers = new Map<WatchedKind, Reconciler>();
  for (const kind of kinds) {
    reconcilers.set(
      kind,
      new Reconciler({
        api,
        temporal: o.temporal,
        taskQueue: o.taskQueue,
        logger,
        enabled,
        ...(o.metrics ? { metrics: o.metrics } : {}),
      }),
    );
  }
  const queue = new KeyedWorkQueue<WatchedObject>((_uid, obj) => reconcilers.get(obj.kind)!.reconcile(obj), {
    ...(o.concurrency !== undefined ? { concurrency: o.concurrency } : {}),
    ...(o.backoff ? { backoff: o.backoff } : {}),
    ...(o.metrics ? { observer: o.metrics.workQueueObserver } : {}),
  });

  let ready = false;
  const listed = kinds.map((kind) => {
    let resolveListed!: () => void;
    const firstList = new Promise<void>((resolve) => (resolveListed = resolve));
    const reconciler = reconcilers.get(kind)!;
    // The uids of this kind the queue may hold, so a re-list can drop the ones that vanished.
    let known = new Set<string>();
    const loop = runListWatch({
      kubeConfig: o.kubeConfig,
      group: API_GROUP,
      version: API_VERSION,
      plural: PLURAL[kind],
      logger,
      signal: abort.signal,
      ...(o.backoff ? { backoff: o.backoff } : {}),
      ...(o.resyncMs !== undefined ? { resyncMs: o.resyncMs } : {}),
      handlers: {
        onList(items) {
          const objects = items
            .map((item) => watchedObjectOf(kind, item))
            .filter((x): x is WatchedObject => x !== undefined);
          const uids = new Set(objects.map((x) => x.uid));
          // Gone while the watch was down: their workflows removed the finalizer already, or
          // they never had one. Nothing to do, and nothing to retry.
          for (const uid of known) if (!uids.has(uid)) queue.forget(uid);
          known = uids;
          reconciler.relisted(uids);
          for (const x of objects) queue.add(x.uid, x);
          resolveListed();
        },
        onEvent(type, raw) {
          const obj = watchedObjectOf(kind, raw);
          if (!obj) return;
          if (type === 'DELETED') {
            // Gone from the apiserver: its workflow removed the finalizer, or it never had one.
            known.delete(obj.uid);
            reconciler.forget(obj.uid);
            queue.forget(obj.uid);
          } else {
            known.add(obj.uid);
            queue.add(obj.uid, obj);
          }
        },
      },
    });
    return { firstList, loop };
  });

  const readyPromise = Promise.all(listed.map((l) => l.firstList))
    .then(() => queue.idle())
    .then(() => {
      ready = true;
      logger.info({ kinds }, 'watcher ready: every object listed and handled once');
    });

  return {
    ready: readyPromise,
    isReady: () => ready,
    async stop() {
      abort.abort();
      await Promise.all(listed.map((l) => l.loop));
      await queue.stop();
    },
  };
}
