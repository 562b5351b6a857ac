// Benchmark 5, scale: the operator process's memory and CPU with N drive containers Ready and
// idle, that is N driveContainerWorkflows parked in `condition(() => deleteRequested)` plus one
// idle mutex workflow per node, all in the worker's cache. Measured from the operator's own
// /metrics (prom-client's process metrics: the whole process, Temporal's Rust core included):
// RSS (and the main thread's heap) once before any container exists and once after all are Ready
// and quiet, each after a forced full GC of the main thread, and CPU as the growth of
// process_cpu_seconds_total over an idle window in both states. Workflow state lives in the
// workflow worker thread's V8 isolate, which RSS includes and the main thread's heap does not.
import { Client, Connection } from '@temporalio/client';
import { createSimulatedCluster } from '../../deploy/local/shared-drives.js';
import { parseOperatorConfig } from '../../src/operator/config.js';
import { sleep } from '../support/async.js';
import { measureEvictedDeletion, type EvictedDeletionResult } from './evicted-deletion.js';
import { ensureNamespace } from '../support/containers.js';
import type { OperatorProcess } from '../support/operator-process.js';
import {
  addSharedDrivesNodes,
  createAndWaitReady,
  OPERATOR_NAMESPACE,
  PLACEMENTS,
  type PlacementOrder,
  startOperator,
  withControlPlane,
  type Log,
} from './bench-env.js';

/**
 * Nodes whose containers join one Weka cluster (500 containers). Each group has its own set of
 * simulated clusters: a simulated `weka` command reads and writes its whole set, so one cluster of
 * 10,000 containers would make every command, and the rollout, slower as it grows.
 */
const NODES_PER_CLUSTER = 10;

export interface ProcessSample {
  rssBytes: number;
  heapUsedBytes: number;
  /** CPU seconds used per wall-clock minute over the idle window (1.0 = one core busy for the whole minute would be 60). */
  cpuSecondsPerMinute: number;
}

export interface IdleScaleResult {
  containers: number;
  nodes: number;
  /** The order the containers were created and placed in. */
  placement: PlacementOrder;
  /** Creation of the first container to the last one Ready. */
  rolloutMs: number;
  before: ProcessSample;
  after: ProcessSample;
  /**
   * With `restartWhenIdle`: the operator stopped once idle and started again, sampled the same way
   * once it settled. Without the rollout's peak behind it, what a restarted operator (an upgrade, a
   * rescheduled pod) holds for the same idle containers.
   */
  restarted?: ProcessSample & { stopToReadyMs: number };
  /** (RSS after - RSS before) / containers. */
  rssPerWorkflowBytes: number;
  idleWindowSeconds: number;
  /** The workers' workflow cache bound (WEKA_MAX_CACHED_WORKFLOWS) and what both held when idle. */
  maxCachedWorkflows: number;
  cachedWorkflows: number;
  /** Deleting the containers that went Ready first, their workflows evicted by then. */
  deletion: EvictedDeletionResult;
  /** The watcher's bound on bring-ups in flight (WEKA_MAX_CONCURRENT_BRINGUPS or half the cache). */
  maxConcurrentBringUps: number;
  /**
   * Local activity results the SDK threw away during the rollout because their workflow had been
   * evicted with them in flight (its "Tried to complete untracked local activity" warning): work
   * done twice. 0 when the workers are not overloaded.
   */
  droppedLocalActivityResults: number;
}

const DROPPED_LOCAL_ACTIVITY = 'Tried to complete untracked local activity';

function countInLog(op: OperatorProcess, needle: string): number {
  return op
    .output()
    .split('\n')
    .filter((line) => line.includes(needle)).length;
}

/** Containers per node: the nodes have room for 80 of the bench's small ones; 50 keeps slack. */
export const CONTAINERS_PER_NODE = 50;
/** After the last Ready: let status writes, mutex answers and search-attribute updates drain. */
const SETTLE_MS = 30_000;

async function sample(op: OperatorProcess, windowSeconds: number): Promise<ProcessSample> {
  const first = await op.metrics();
  await sleep(windowSeconds * 1000);
  // CPU first (the forced GC would count against the idle window), then memory after a full GC.
  const atEnd = await op.metrics();
  await op.collectGarbage();
  const last = new Map([
    ...(await op.metrics()),
    ['process_cpu_seconds_total', atEnd.get('process_cpu_seconds_total') ?? Number.NaN],
  ]);
  const cpu =
    (last.get('process_cpu_seconds_total') ?? Number.NaN) - (first.get('process_cpu_seconds_total') ?? Number.NaN);
  return {
    rssBytes: last.get('process_resident_memory_bytes') ?? Number.NaN,
    heapUsedBytes: last.get('nodejs_heap_size_used_bytes') ?? Number.NaN,
    cpuSecondsPerMinute: (cpu / windowSeconds) * 60,
  };
}

export async function runIdleScale(o: {
  containers: number;
  idleSeconds: number;
  /** How many of them to delete at the end, first Ready first: one at a time, then in a burst. */
  deletions: { isolated: number; burst: number };
  placement: PlacementOrder;
  /** Stop the idle operator and start a new one, and sample it too, before the deletions. */
  restartWhenIdle?: boolean;
  log: Log;
}): Promise<IdleScaleResult> {
  return withControlPlane(o.log, async (cp) => {
    const kc = cp.kubeConfig();
    const nodeCount = Math.max(1, Math.ceil(o.containers / CONTAINERS_PER_NODE));
    const nodes = Array.from({ length: nodeCount }, (_, i) => `scale-node-${i}`);
    const clusterSets = new Map(nodes.map((node, i) => [node, `scale-${Math.floor(i / NODES_PER_CLUSTER)}`]));
    const clusterSetOf = (node: string): string => clusterSets.get(node)!;
    const started = Date.now();
    await addSharedDrivesNodes(cp, nodes, clusterSetOf);
    o.log(`${nodeCount} nodes with signed shared drives in ${Date.now() - started} ms`);
    // One Weka cluster for each group of nodes, in the group's own set of simulated clusters.
    const guids = new Map<string, string>();
    for (const [i, node] of nodes.entries()) {
      if (i % NODES_PER_CLUSTER === 0)
        guids.set(clusterSetOf(node), await createSimulatedCluster(cp.simulatorRoot, node, clusterSetOf(node)));
    }
    o.log(`${guids.size} simulated Weka clusters, ${NODES_PER_CLUSTER} nodes each`);
    await ensureNamespace(kc, OPERATOR_NAMESPACE);
    const namespace = 'bench-scale';
    await ensureNamespace(kc, namespace);
    let op = await startOperator(cp, { logName: 'operator', gcOnSignal: true });
    try {
      await op.waitReady();
      await sleep(5_000);
      const before = await sample(op, o.idleSeconds);
      o.log(
        `before: RSS ${mib(before.rssBytes)}, heap ${mib(before.heapUsedBytes)}, ${before.cpuSecondsPerMinute.toFixed(2)} CPU s/min`,
      );

      const { t0, readyAt } = await createAndWaitReady(kc, op, {
        namespace,
        placements: PLACEMENTS[o.placement]('idle', o.containers, nodes).map((p) => ({
          ...p,
          clusterGUID: guids.get(clusterSetOf(p.nodeName))!,
        })),
        timeoutMs: Math.max(600_000, o.containers * 2_000),
        log: o.log,
      });
      const rolloutMs = Math.max(...readyAt.values()) - t0;
      const droppedLocalActivityResults = countInLog(op, DROPPED_LOCAL_ACTIVITY);
      o.log(
        `all ${o.containers} Ready in ${Math.round(rolloutMs / 1000)} s (${droppedLocalActivityResults} local activity results dropped); settling ${SETTLE_MS / 1000} s, then sampling ${o.idleSeconds} s`,
      );
      await sleep(SETTLE_MS);
      const after = await sample(op, o.idleSeconds);
      const cachedWorkflows = await op.metricSum('temporal_sticky_cache_size');
      o.log(
        `after: RSS ${mib(after.rssBytes)}, heap ${mib(after.heapUsedBytes)}, ${after.cpuSecondsPerMinute.toFixed(2)} CPU s/min, ${cachedWorkflows} workflows cached`,
      );
      let restarted: IdleScaleResult['restarted'];
      if (o.restartWhenIdle) {
        const stopped = Date.now();
        await op.stop();
        op = await startOperator(cp, { logName: 'operator-restarted', gcOnSignal: true });
        await op.waitReady();
        const stopToReadyMs = Date.now() - stopped;
        await sleep(SETTLE_MS);
        restarted = { ...(await sample(op, o.idleSeconds)), stopToReadyMs };
        o.log(
          `restarted (ready ${Math.round(stopToReadyMs / 1000)} s after the stop): RSS ${mib(restarted.rssBytes)}, heap ${mib(restarted.heapUsedBytes)}, ${restarted.cpuSecondsPerMinute.toFixed(2)} CPU s/min`,
        );
      }
      const connection = await Connection.connect({ address: cp.temporalAddress });
      const deletion = await measureEvictedDeletion(
        kc,
        op,
        new Client({ connection, namespace: cp.temporalNamespace }),
        { namespace, readyAt, ...o.deletions, log: o.log },
      ).finally(() => connection.close());
      return {
        containers: o.containers,
        nodes: nodeCount,
        placement: o.placement,
        rolloutMs,
        before,
        after,
        ...(restarted ? { restarted } : {}),
        rssPerWorkflowBytes: (after.rssBytes - before.rssBytes) / o.containers,
        idleWindowSeconds: o.idleSeconds,
        ...workerBounds(),
        cachedWorkflows,
        deletion,
        droppedLocalActivityResults,
      };
    } finally {
      await op.stop();
    }
  });
}

/** The cache and bring-up bounds the operator this benchmark starts reads from the environment. */
function workerBounds(): { maxCachedWorkflows: number; maxConcurrentBringUps: number } {
  const parsed = parseOperatorConfig({
    WEKA_MAX_CACHED_WORKFLOWS: process.env['WEKA_MAX_CACHED_WORKFLOWS'],
    WEKA_MAX_CONCURRENT_BRINGUPS: process.env['WEKA_MAX_CONCURRENT_BRINGUPS'],
  });
  if (!parsed.ok) throw new Error(parsed.errors.join('; '));
  return {
    maxCachedWorkflows: parsed.config.maxCachedWorkflows,
    maxConcurrentBringUps: parsed.config.maxConcurrentBringUps,
  };
}

export const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
export const kib = (bytes: number): string => `${(bytes / 2 ** 10).toFixed(0)} KiB`;
