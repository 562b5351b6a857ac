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
import { BringUpAdmission, type AdmissionLimits } from '../../../src/operator/bring-up-admission.js';
import {
  DEFAULT_MAX_CACHED_WORKFLOWS,
  DEFAULT_BRINGUP_HOLD_SECONDS,
  defaultMaxConcurrentBringUps,
} from '../../../src/operator/config.js';
import {
  DEFAULT_WATCHED_KINDS,
  LIFECYCLE_WORKFLOW_TYPES,
  lifecycleWorkflowIdOf,
  lifecycleWorkflowOf,
  watchedObjectOf,
  type WatchedKind,
  type WatchedObject,
} from '../../../src/operator/watch-decision.js';
import type { OperatorMetrics } from '../metrics.js';
import { memoRef, runningWorkflowsQuery } from '../../../src/operator/ended-workflows.js';
import { runEndedWorkflowSweep } from './ended-workflows.js';
import { runListWatch } from './list-watch.js';
import { runNodeWatch } from './node-watch.js';
import { runPodWatch } from './pod-watch.js';
import type { KnownContainer } from '../../../src/operator/pod-loss.js';
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
  /** Drive containers brought up at once, and how long one counts at most (the defaults unset). */
  bringUps?: AdmissionLimits;
  /** How often Temporal is asked which lifecycle workflows ended while their object exists. */
  endedSweepMs?: number;
  /** The operator's namespace, where its ssdproxy pods are: their loss is told to their node's containers. */
  operatorNamespace?: string;
  /** false: the operator's pods and the nodes are not watched (a deliberately broken test operator only). */
  watchPods?: boolean;
}

export interface RunningWatcher {
  /** Resolves once every kind was listed and each listed object was handled once. */
  ready: Promise<void>;
  isReady(): boolean;
  /** Stops watching and waits for the actions in flight. */
  stop(): Promise<void>;
}

const DEFAULT_BRING_UPS: AdmissionLimits = {
  limit: defaultMaxConcurrentBringUps(DEFAULT_MAX_CACHED_WORKFLOWS),
  holdMs: DEFAULT_BRINGUP_HOLD_SECONDS * 1000,
};

export function startWatcher(o: WatcherOptions): RunningWatcher {
  const kinds = o.kinds ?? DEFAULT_WATCHED_KINDS;
  const enabled: ReadonlySet<WatchedKind> = new Set(kinds);
  const api = new WekaApi(o.kubeConfig);
  const abort = new AbortController();
  const logger = o.logger.child({ component: 'watcher' });
  const reconcilers = new Map<WatchedKind, Reconciler>();
  const bringUps = o.bringUps ?? DEFAULT_BRING_UPS;
  const admission = new BringUpAdmission(bringUps);
  // Only drive containers have a bring-up; the operator's own ssdproxy containers have none.
  const hasBringUp = (kind: WatchedKind, x: WatchedObject) => kind === 'WekaContainer' && lifecycleWorkflowOf(x);
  for (const kind of kinds) {
    reconcilers.set(
      kind,
      new Reconciler({
        api,
        temporal: o.temporal,
        taskQueue: o.taskQueue,
        logger,
        enabled,
        ...(kind === 'WekaContainer' ? { admission } : {}),
        ...(o.metrics ? { metrics: o.metrics } : {}),
      }),
    );
  }
  const queue = new KeyedWorkQueue<WatchedObject>((_uid, obj) => reconcilers.get(obj.kind)!.reconcile(obj), {
    ...(o.concurrency !== undefined ? { concurrency: o.concurrency } : {}),
    ...(o.backoff ? { backoff: o.backoff } : {}),
    ...(o.metrics ? { observer: o.metrics.workQueueObserver } : {}),
  });
  // Waiting containers whose turn came are handled again; their start then takes the place.
  const wake = (objects: WatchedObject[]) => {
    for (const x of objects) queue.add(x.uid, x);
  };
  const admissionTimer = setInterval(
    () => wake(admission.tick(Date.now())),
    Math.min(5_000, Math.max(500, bringUps.holdMs / 5)),
  );
  o.metrics?.readBringUpsFrom(() => ({ inFlight: admission.inFlight(), waiting: admission.waitingCount() }));
  admissionTimer.unref();

  /** The drive containers with a lifecycle, for telling them of a lost pod (pod-watch.ts). */
  const driveContainers = new Map<string, KnownContainer>();
  const noteContainer = (kind: WatchedKind, x: WatchedObject) => {
    if (!hasBringUp(kind, x)) return;
    const { uid, namespace, name } = x;
    driveContainers.set(uid, {
      uid,
      namespace,
      name,
      ...(x.spec.nodeName ? { node: x.spec.nodeName } : {}),
      ...(x.status.phase ? { phase: x.status.phase } : {}),
    });
  };
  /** Per kind, the uids the queue may hold, so a re-list can drop the ones that vanished. */
  const known = new Map<WatchedKind, Set<string>>(kinds.map((kind) => [kind, new Set<string>()]));
  /**
   * At a re-list, the objects whose workflows this process started but which no longer run (a
   * Temporal store replaced or restored, which the ended-workflow sweep cannot see), so each is
   * started again. One count on this task queue settles the usual case; only when fewer run there
   * than were started are the running ids listed, on any task queue: an object another operator
   * process started on its own queue is running, not missing.
   */
  const notRunning = async (kind: WatchedKind, objects: readonly WatchedObject[]): Promise<ReadonlySet<string>> => {
    const reconciler = reconcilers.get(kind)!;
    const started = objects.filter((x) => reconciler.hasStarted(x.uid));
    if (started.length === 0) return new Set();
    const type = LIFECYCLE_WORKFLOW_TYPES[kind];
    try {
      const { count } = await o.temporal.workflow.count(runningWorkflowsQuery(type, o.taskQueue));
      if (count >= started.length) return new Set();
      const running = new Set<string>();
      for await (const info of o.temporal.workflow.list({ query: runningWorkflowsQuery(type) }))
        running.add(info.workflowId);
      const missing = started.filter((x) => !running.has(lifecycleWorkflowOf(x)?.id ?? ''));
      if (missing.length > 0)
        logger.warn(
          { kind, missing: missing.length, started: started.length },
          'lifecycle workflows this watcher started no longer run: starting them again',
        );
      return new Set(missing.map((x) => x.uid));
    } catch (err) {
      logger.warn({ kind, err }, 'could not tell which lifecycle workflows run: starting each again');
      return new Set(started.map((x) => x.uid));
    }
  };

  /**
   * After this process's first list of a kind: the workflows of this task queue that were running
   * before the watch started and whose object the list does not have. Their objects went while no
   * watcher of this process ran (forced out, their finalizer removed by hand), so no DELETED event
   * will come; each is told, as a vanished object's workflow is.
   */
  const tellOrphans = async (kind: WatchedKind, listedUids: ReadonlySet<string>, watchStarted: number) => {
    const listedIds = new Set([...listedUids].map((uid) => lifecycleWorkflowIdOf(kind, uid)));
    const query = `${runningWorkflowsQuery(LIFECYCLE_WORKFLOW_TYPES[kind], o.taskQueue)} AND StartTime < ${JSON.stringify(new Date(watchStarted).toISOString())}`;
    try {
      for await (const info of o.temporal.workflow.list({ query })) {
        const uid = memoRef(info.memo)?.uid;
        if (uid && !listedIds.has(info.workflowId) && lifecycleWorkflowIdOf(kind, uid) === info.workflowId)
          await reconcilers.get(kind)!.vanished(kind, uid);
      }
    } catch (err) {
      logger.warn({ kind, err }, 'could not look for workflows whose objects went while no watcher ran');
    }
  };

  const aborted = new Promise<void>((resolve) =>
    abort.signal.addEventListener('abort', () => resolve(), { once: true }),
  );
  let ready = false;
  const listed = kinds.map((kind) => {
    let resolveListed!: () => void;
    const firstList = new Promise<void>((resolve) => (resolveListed = resolve));
    const reconciler = reconcilers.get(kind)!;
    const watchStarted = Date.now();
    let orphansTold = false;
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
        parse: (raw) => watchedObjectOf(kind, raw),
        keyOf: (x) => x.uid,
        async onList(listed, newer) {
          const missing = await notRunning(kind, listed);
          // Nothing below waits, so no watch event comes between. What the watch delivered since
          // the list began is newer than the list's copy: those uids are skipped here, and kept.
          const objects = listed.filter((x) => !newer.has(x.uid));
          const uids = new Set(objects.map((x) => x.uid));
          for (const uid of known.get(kind)!) {
            if (newer.has(uid)) uids.add(uid);
            // Gone, and the watch never said so (it was down, or the event was lost): as for a
            // DELETED event, a workflow that still runs is told.
            else if (!uids.has(uid)) {
              if (kind !== 'WekaContainer' || driveContainers.has(uid)) void reconciler.vanished(kind, uid);
              queue.forget(uid);
              driveContainers.delete(uid);
              if (kind === 'WekaContainer') wake(admission.forget(uid, Date.now()));
            }
          }
          known.set(kind, uids);
          if (!orphansTold) {
            orphansTold = true;
            void tellOrphans(kind, new Set([...uids, ...newer.keys()]), watchStarted);
          }
          reconciler.relisted(uids, missing, newer);
          const now = Date.now();
          for (const x of objects) {
            noteContainer(kind, x);
            if (hasBringUp(kind, x)) wake(admission.observe(x, now));
            queue.add(x.uid, x, { background: true });
          }
          resolveListed();
        },
        onEvent(type, obj) {
          if (type === 'DELETED') {
            // Gone from the apiserver: its workflow removed the finalizer, or it never had one, or
            // a person removed it while the workflow runs, which is then told to tear down.
            if (lifecycleWorkflowOf(obj)) void reconciler.vanished(kind, obj.uid);
            known.get(kind)!.delete(obj.uid);
            driveContainers.delete(obj.uid);
            reconciler.forget(obj.uid);
            queue.forget(obj.uid);
            if (kind === 'WekaContainer') wake(admission.forget(obj.uid, Date.now()));
          } else {
            known.get(kind)!.add(obj.uid);
            noteContainer(kind, obj);
            if (hasBringUp(kind, obj)) wake(admission.observe(obj, Date.now()));
            queue.add(obj.uid, obj);
          }
        },
      },
    });
    return { firstList, loop };
  });

  // Started once the containers are listed, so that its first list finds them.
  const containersListed = listed[kinds.indexOf('WekaContainer')]?.firstList;
  const pods =
    containersListed && o.watchPods !== false
      ? Promise.race([containersListed, aborted]).then(() =>
          abort.signal.aborted
            ? undefined
            : Promise.all([
                runPodWatch({
                  kubeConfig: o.kubeConfig,
                  temporal: o.temporal,
                  logger,
                  signal: abort.signal,
                  containers: driveContainers,
                  operatorNamespace: o.operatorNamespace,
                  ...(o.backoff ? { backoff: o.backoff } : {}),
                  ...(o.resyncMs !== undefined ? { resyncMs: o.resyncMs } : {}),
                }),
                runNodeWatch({
                  kubeConfig: o.kubeConfig,
                  temporal: o.temporal,
                  taskQueue: o.taskQueue,
                  logger,
                  signal: abort.signal,
                  containers: driveContainers,
                  ...(o.backoff ? { backoff: o.backoff } : {}),
                  ...(o.resyncMs !== undefined ? { resyncMs: o.resyncMs } : {}),
                  ...(o.metrics ? { onBooks: o.metrics.nodeBooksRead } : {}),
                }),
              ]),
        )
      : Promise.resolve();

  const readyPromise = Promise.all(listed.map((l) => l.firstList))
    .then(() => queue.idle())
    .then(() => {
      ready = true;
      logger.info({ kinds }, 'watcher ready: every object listed and handled once');
    });

  // A workflow ended while its object exists (terminated in the Temporal UI, say): start it again.
  const sweep = Promise.race([readyPromise, aborted]).then(() =>
    runEndedWorkflowSweep({
      temporal: o.temporal,
      workflowTypes: kinds.map((kind) => LIFECYCLE_WORKFLOW_TYPES[kind]),
      logger,
      signal: abort.signal,
      isLive: (uid) => kinds.some((kind) => known.get(kind)!.has(uid)),
      async restart(run) {
        const kind = kinds.find((k) => k === run.kind);
        if (!kind) return false;
        const obj = watchedObjectOf(kind, await api.get(kind, { namespace: run.namespace, name: run.name }));
        if (!obj || obj.uid !== run.uid) return false;
        if (!(await reconcilers.get(kind)!.workflowEnded(obj, run))) return false;
        queue.add(obj.uid, obj);
        return true;
      },
      ...(o.endedSweepMs !== undefined ? { intervalMs: o.endedSweepMs } : {}),
    }),
  );

  return {
    ready: readyPromise,
    isReady: () => ready,
    async stop() {
      clearInterval(admissionTimer);
      abort.abort();
      await Promise.all([...listed.map((l) => l.loop), sweep.catch(() => undefined), pods.catch(() => undefined)]);
      await queue.stop();
    },
  };
}
