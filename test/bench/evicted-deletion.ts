// Benchmark 5's deletion figures: how soon the teardown of an idle Ready container starts after a
// user deletes it, when its parked workflow is no longer in the worker's cache. The containers
// that went Ready first are deleted: some one at a time (each once the one before began its
// teardown), then the rest one every DELETE_SPACING_MS while the earlier teardowns run, as a
// scale-down would. A watch on the namespace notes when each one's status first shows the Deleting
// phase, the teardown's first step. The SDK's sticky-cache miss counter says how many workflow
// tasks found their workflow evicted and replayed it from its history.
import { CustomObjectsApi, Watch, type KubeConfig } from '@kubernetes/client-node';
import type { Client } from '@temporalio/client';
import { containerWorkflowId, deleteRequestedSignal } from '../../src/protocol.js';
import type { WekaContainer } from '../../src/api/index.js';
import { eventually, sleep } from '../support/async.js';
import { deleteContainers, listContainers, WEKA_CONTAINERS } from '../support/containers.js';
import type { OperatorProcess } from '../support/operator-process.js';
import { percentile, type Log } from './bench-env.js';
import { ms, type HistoryEvent } from './mutex-handover.js';

export const DELETE_SPACING_MS = 250;
/** Between one isolated deletion's teardown start and the next deletion. */
const ISOLATED_GAP_MS = 1_000;
const TEARDOWN_START_TIMEOUT_MS = 120_000;
const GONE_TIMEOUT_MS = 600_000;

/** One way of deleting: how soon each teardown started, and where that time went. */
export interface DeletionFigures {
  deleted: number;
  /** Workflow tasks that found their workflow out of the cache while these deletions ran. */
  cacheMisses: number;
  /** Delete request sent to the Deleting phase seen, ms, ascending. */
  teardownStartMs: number[];
  p50Ms: number;
  p99Ms: number;
  /**
   * Where the wait to the teardown's start went, over the deletions whose workflow run shows the
   * deletion signal: delete sent to the watcher's signal recorded; the signal to the workflow task
   * that handled it started (the task waiting for a worker); that task's start to the Deleting
   * phase seen (the replay of the evicted history, then the status apply).
   */
  breakdown: { signalled: Split; taskStarted: Split; applied: Split; samples: number };
}

/**
 * One isolated deletion, in the order deleted: where its wait went, and what the operator's
 * /metrics say about the window from just before the delete to a second after its Deleting was
 * seen. Times in ms after the delete was sent; the history's are the Temporal server's clock.
 */
export interface DeletionTrace {
  name: string;
  /** The deletion signal recorded, the workflow task after it started, and that task completed: the marker of its first local activity (the Deleting status apply) is written then. */
  signalledMs?: number;
  taskStartedMs?: number;
  markerMs?: number;
  /** The benchmark's watch saw the Deleting phase. */
  seenMs: number;
  /** The operator main thread's longest event-loop delay over the window (Node samples it with a 10 ms timer, so an idle loop reads 10-13 ms). */
  eventLoopMaxMs: number;
  /** Summed over the window, from the SDK's histograms: workflow tasks replaying, workflow tasks run, local activities run. */
  replayMs: number;
  workflowTaskMs: number;
  localActivityMs: number;
  /** The operator's log lines written during the window (at the benchmarks' level, warnings), when the deletion was slow. */
  operatorLog?: string[];
}

export interface EvictedDeletionResult {
  /** One at a time, each after the one before began its teardown: an idle operator's answer. */
  isolated: DeletionFigures & { each: DeletionTrace[] };
  /** The rest DELETE_SPACING_MS apart while the earlier teardowns run, as a scale-down would. */
  burst: DeletionFigures;
  /** Delete request sent to the object gone (finalizer removed), ms, p50 and max over all. */
  goneP50Ms: number;
  goneMaxMs: number;
}

export interface Split {
  p50Ms: number;
  p99Ms: number;
}

const split = (values: number[]): Split => {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99) };
};

/**
 * When the deletion signal was recorded, when the workflow task after it started, and when the
 * marker of the first local activity after it was recorded (undefined without one), from the history.
 */
async function signalTimes(
  temporal: Client,
  uid: string,
): Promise<{ signalledAt: number; taskStartedAt: number; markerAt?: number } | undefined> {
  const history = await temporal.workflow.getHandle(containerWorkflowId(uid)).fetchHistory();
  const events = (history.events ?? []) as HistoryEvent[];
  const signal = events.findIndex(
    (e) => e.workflowExecutionSignaledEventAttributes?.signalName === deleteRequestedSignal.name,
  );
  if (signal < 0) return undefined;
  const started = events.slice(signal).find((e) => e.workflowTaskStartedEventAttributes);
  if (!started) return undefined;
  const marker = events.slice(signal).find((e) => e.markerRecordedEventAttributes);
  return {
    signalledAt: ms(events[signal]!.eventTime),
    taskStartedAt: ms(started.eventTime),
    ...(marker ? { markerAt: ms(marker.eventTime) } : {}),
  };
}

/** The operator's samples read around each isolated deletion; a scrape also resets the event-loop delay's maximum. */
const PROBED = {
  eventLoopMax: 'nodejs_eventloop_lag_max_seconds',
  replay: 'temporal_workflow_task_replay_latency_sum',
  workflowTask: 'temporal_workflow_task_execution_latency_sum',
  localActivity: 'temporal_local_activity_execution_latency_sum',
} as const;
type Probe = Record<keyof typeof PROBED, number>;
const probe = async (op: OperatorProcess): Promise<Probe> => {
  const sums = await op.metricSums(Object.values(PROBED));
  return Object.fromEntries(Object.entries(PROBED).map(([key, metric]) => [key, sums.get(metric) ?? 0])) as Probe;
};
/** A deletion this slow keeps the operator's log lines of its window. */
const SLOW_DELETION_MS = 1_000;

/** The operator's pino lines whose time falls in [from, to]. */
function logLinesBetween(op: OperatorProcess, from: number, to: number): string[] {
  return op
    .output()
    .split('\n')
    .filter((line) => {
      const time = /"time":(\d+)/.exec(line)?.[1];
      return time !== undefined && Number(time) >= from && Number(time) <= to;
    });
}

/** The SDK's counter of workflow tasks for runs not in the cache, summed over both workers. */
const cacheMisses = (op: OperatorProcess): Promise<number> => op.metricSum('temporal_sticky_cache_miss');

/**
 * Watches the namespace's containers, noting when each one's status first shows phase Deleting.
 * The watch starts at the namespace's current resourceVersion: one without a version is first sent
 * every existing object as ADDED, thousands of them at scale, and sending and parsing those on
 * the same cores would be counted against the first deletion. `ended` says why the watch stopped
 * early, if it did: a deletion it can no longer see must fail the wait, not time it out.
 */
async function watchTeardownStarts(
  kc: KubeConfig,
  namespace: string,
): Promise<{ seen: Map<string, number>; ended: () => string | undefined; stop: () => void }> {
  const seen = new Map<string, number>();
  let ended: string | undefined;
  const path = `/apis/${WEKA_CONTAINERS.group}/${WEKA_CONTAINERS.version}/namespaces/${namespace}/${WEKA_CONTAINERS.plural}`;
  const current = (await kc
    .makeApiClient(CustomObjectsApi)
    .listNamespacedCustomObject({ ...WEKA_CONTAINERS, namespace, limit: 1 })) as {
    metadata?: { resourceVersion?: string };
  };
  const resourceVersion = current.metadata?.resourceVersion;
  if (!resourceVersion) throw new Error(`the list of ${namespace}'s containers carried no resourceVersion`);
  const request = await new Watch(kc).watch(
    path,
    { resourceVersion },
    (type: string, obj: WekaContainer) => {
      if (type === 'ERROR') {
        ended ??= `watch error: ${JSON.stringify(obj)}`;
        return;
      }
      const name = obj.metadata?.name;
      if (name && obj.status?.phase === 'Deleting' && !seen.has(name)) seen.set(name, Date.now());
    },
    (err: unknown) => (ended ??= err ? String(err) : 'the apiserver closed it'),
  );
  return { seen, ended: () => ended, stop: () => request.abort() };
}

export async function measureEvictedDeletion(
  kc: KubeConfig,
  op: OperatorProcess,
  temporal: Client,
  o: { namespace: string; readyAt: ReadonlyMap<string, number>; isolated: number; burst: number; log: Log },
): Promise<EvictedDeletionResult> {
  // The first to go Ready have been idle longest: the least recently used in the worker's cache.
  const names = [...o.readyAt.entries()]
    .sort((a, b) => a[1] - b[1])
    .slice(0, o.isolated + o.burst)
    .map(([name]) => name);
  const uids = new Map((await listContainers(kc, o.namespace)).map((c) => [c.metadata.name!, c.metadata.uid!]));
  const watch = await watchTeardownStarts(kc, o.namespace);
  const sentAt = new Map<string, number>();
  const teardownStarted = async (batch: readonly string[]) => {
    const deadline = Date.now() + TEARDOWN_START_TIMEOUT_MS;
    while (batch.some((n) => !watch.seen.has(n))) {
      const ended = watch.ended();
      if (ended !== undefined) throw new Error(`the watch for the Deleting phase ended: ${ended}`);
      if (Date.now() > deadline) {
        throw new Error(`${batch.filter((n) => !watch.seen.has(n)).length} deleted containers never showed Deleting`);
      }
      await sleep(50);
    }
  };
  const deleteNow = async (name: string) => {
    sentAt.set(name, Date.now());
    await deleteContainers(kc, [{ namespace: o.namespace, name }]);
  };
  /** Each deleted container's history times, fetched once for both the figures and the traces. */
  const historyTimes = new Map<string, ReturnType<typeof signalTimes>>();
  const timesOf = (name: string) => {
    let times = historyTimes.get(name);
    if (!times) historyTimes.set(name, (times = signalTimes(temporal, uids.get(name)!).catch(() => undefined)));
    return times;
  };
  const figures = async (batch: readonly string[], misses: number): Promise<DeletionFigures> => {
    const teardownStartMs = batch.map((n) => watch.seen.get(n)! - sentAt.get(n)!).sort((a, b) => a - b);
    const signalled: number[] = [];
    const taskStarted: number[] = [];
    const applied: number[] = [];
    for (const n of batch) {
      const t = await timesOf(n);
      if (!t) continue;
      signalled.push(t.signalledAt - sentAt.get(n)!);
      taskStarted.push(t.taskStartedAt - t.signalledAt);
      applied.push(watch.seen.get(n)! - t.taskStartedAt);
    }
    return {
      deleted: batch.length,
      cacheMisses: misses,
      teardownStartMs,
      p50Ms: percentile(teardownStartMs, 50),
      p99Ms: percentile(teardownStartMs, 99),
      breakdown: {
        signalled: split(signalled),
        taskStarted: split(taskStarted),
        applied: split(applied),
        samples: signalled.length,
      },
    };
  };
  try {
    const isolated = names.slice(0, o.isolated);
    const burst = names.slice(o.isolated);
    const missesAtStart = await cacheMisses(op);
    const windows: Array<{ name: string; before: Probe; after: Probe; log?: string[] }> = [];
    for (const name of isolated) {
      const before = await probe(op);
      await deleteNow(name);
      await teardownStarted([name]);
      await sleep(ISOLATED_GAP_MS);
      const after = await probe(op);
      const sent = sentAt.get(name)!;
      const slow = watch.seen.get(name)! - sent >= SLOW_DELETION_MS;
      windows.push({ name, before, after, ...(slow ? { log: logLinesBetween(op, sent - 1_000, Date.now()) } : {}) });
    }
    const missesBetween = await cacheMisses(op);
    for (const name of burst) {
      await deleteNow(name);
      await sleep(DELETE_SPACING_MS);
    }
    await teardownStarted(burst);
    const missesAtEnd = await cacheMisses(op);
    const gone = await waitGone(kc, o.namespace, names, o.log);
    const goneMs = names.map((n) => gone.get(n)! - sentAt.get(n)!).sort((a, b) => a - b);
    const each: DeletionTrace[] = [];
    for (const w of windows) {
      const sent = sentAt.get(w.name)!;
      const t = await timesOf(w.name);
      const spent = (k: Exclude<keyof Probe, 'eventLoopMax'>) => Math.round((w.after[k] - w.before[k]) * 1000);
      each.push({
        name: w.name,
        ...(t
          ? {
              signalledMs: Math.round(t.signalledAt - sent),
              taskStartedMs: Math.round(t.taskStartedAt - sent),
              ...(t.markerAt !== undefined ? { markerMs: Math.round(t.markerAt - sent) } : {}),
            }
          : {}),
        seenMs: watch.seen.get(w.name)! - sent,
        eventLoopMaxMs: Math.round(w.after.eventLoopMax * 1000),
        replayMs: spent('replay'),
        workflowTaskMs: spent('workflowTask'),
        localActivityMs: spent('localActivity'),
        ...(w.log ? { operatorLog: w.log } : {}),
      });
    }
    return {
      isolated: { ...(await figures(isolated, missesBetween - missesAtStart)), each },
      burst: await figures(burst, missesAtEnd - missesBetween),
      goneP50Ms: percentile(goneMs, 50),
      goneMaxMs: goneMs.at(-1) ?? Number.NaN,
    };
  } finally {
    watch.stop();
  }
}

/** Polls until every named container is gone; returns when each was first seen missing. */
async function waitGone(kc: KubeConfig, namespace: string, names: readonly string[], log: Log) {
  const gone = new Map<string, number>();
  return eventually(
    `${names.length} deleted containers gone`,
    async () => {
      const present = new Set((await listContainers(kc, namespace)).map((c) => c.metadata.name));
      const now = Date.now();
      for (const n of names) if (!present.has(n) && !gone.has(n)) gone.set(n, now);
      return gone.size === names.length ? gone : undefined;
    },
    GONE_TIMEOUT_MS,
    { intervalMs: 1_000, progress: () => `${gone.size} of ${names.length} gone`, log, retryErrors: false },
  );
}
