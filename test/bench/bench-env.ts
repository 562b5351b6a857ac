// What every end-to-end benchmark needs: its own local control plane, fake nodes with signed shared
// drives, the operator as a separate process (compiled, run the way the image runs it), and drive
// WekaContainers created and watched from outside, the way a user would. The pieces the
// integration and chaos tests use too (polling, WekaContainers, the operator process) are in
// test/support/.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { KubeConfig } from '@kubernetes/client-node';
import type { WekaContainer } from '../../src/api/index.js';
import { ControlPlane } from '../../deploy/local/control-plane.js';
import type { SimulatedDevice } from '../../deploy/local/fake-nodes.js';
import { freePorts } from '../../deploy/local/ports.js';
import { tailLog } from '../../deploy/local/processes.js';
import { signSharedDrives } from '../../deploy/local/shared-drives.js';
import { eventually, mapLimit } from '../support/async.js';
import { pino } from 'pino';
import { runListWatch } from '../../deploy/operator/watcher/list-watch.js';
import { createDriveContainers, isReady, WEKA_CONTAINERS } from '../support/containers.js';
import { ensureImagePreloads, imageEnv } from './image-env.js';
import { COMPILED_OPERATOR, gcOnSignalArgs, spawnOperator, type OperatorProcess } from '../support/operator-process.js';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

export const OPERATOR_NAMESPACE = 'weka-operator-system';
/** Two roomy TLC devices: 80 containers of one 384 GiB virtual drive fit on a node. */
export const BENCH_DEVICES: SimulatedDevice[] = [
  { path: '/dev/nvme0n1', capacityGiB: 15360, type: 'TLC' },
  { path: '/dev/nvme1n1', capacityGiB: 15360, type: 'TLC' },
];
/** The smallest drive-sharing request: one core, one virtual drive of the minimum chunk. */
export const SMALL_DRIVE_SPEC = { driveCores: 1, numDrives: 1, driveCapacity: 384 };

/** One core and `drives` virtual drives of the minimum chunk each. */
export const driveSpec = (drives: number) => ({ driveCores: 1, numDrives: drives, driveCapacity: 384 * drives });

export type Log = (message: string) => void;

async function tsc(project: string): Promise<void> {
  await run(process.execPath, [join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', project], { cwd: repoRoot });
}

/**
 * Compiles the operator to dist/ and bundles its workflows and itself (npm run build), so a
 * benchmark never runs a stale build: the operator runs its bundle, and that the prebuilt workflow
 * bundle, not the files beside them.
 */
export async function compileOperator(): Promise<void> {
  await tsc('tsconfig.build.json');
  for (const script of ['bundle-workflows.js', 'bundle-operator.js'])
    await run(process.execPath, [join(repoRoot, 'dist/deploy/operator', script)], { cwd: repoRoot });
}

/** Starts a control plane for one benchmark and always stops it, whatever `body` does. */
export async function withControlPlane<T>(
  log: Log,
  body: (cp: ControlPlane) => Promise<T>,
  options: { auditPolicy?: string } = {},
): Promise<T> {
  // The control plane's own start-up lines are noise in a benchmark's output; keep only failures.
  // BENCH_KEEP_DATA=1 keeps the data directory (logs of every server and the operator) after the run.
  const keep = process.env['BENCH_KEEP_DATA'] === '1';
  const cp = await ControlPlane.start({ log: () => undefined, keep, ...options });
  log(`control plane up in ${cp.timings.total} ms (${cp.dataDir}${keep ? ', kept' : ''})`);
  try {
    return await body(cp);
  } finally {
    await cp.stop();
  }
}

/** Fake nodes (kwok + simulator) whose devices are signed for proxy and published on the node. */
export async function addSharedDrivesNodes(
  cp: ControlPlane,
  names: readonly string[],
  /** The set of simulated Weka clusters each node sees (NodeSpec.simulatedClusters); shared when none. */
  clusterSetOf: (node: string) => string | undefined = () => undefined,
): Promise<void> {
  const kubeConfig = cp.kubeConfig();
  // One at a time: FakeNodes picks each kwok's port and pod CIDR as it adds, not atomically.
  for (const name of names) {
    const simulatedClusters = clusterSetOf(name);
    await cp.addNode({
      name,
      devices: BENCH_DEVICES,
      ...(simulatedClusters === undefined ? {} : { simulatedClusters }),
    });
  }
  await mapLimit(names, 4, (node) =>
    signSharedDrives({ kubeConfig, simulatorRoot: cp.simulatorRoot, node, devices: BENCH_DEVICES }),
  );
}

let preloadsChecked: Promise<void> | undefined;

/**
 * The operator process as the image runs it (the compiled dist/, see compileOperator), logging
 * to the control plane's log directory, on its own free HTTP port. Returns at once: see waitReady.
 */
export async function startOperator(
  cp: ControlPlane,
  o: { logName: string; env?: Record<string, string>; logLevel?: string; taskQueue?: string; gcOnSignal?: boolean },
): Promise<OperatorProcess> {
  await (preloadsChecked ??= ensureImagePreloads());
  const [httpPort] = await freePorts(1);
  return spawnOperator(cp, {
    logName: o.logName,
    script: COMPILED_OPERATOR,
    nodeArgs: [
      // Preloaded by the scale benchmark only, for op.collectGarbage().
      ...(o.gcOnSignal ? gcOnSignalArgs : []),
      ...(process.env['BENCH_CPU_PROF'] ? ['--cpu-prof', `--cpu-prof-dir=${process.env['BENCH_CPU_PROF']}`] : []),
    ],
    env: {
      WEKA_OPERATOR_NAMESPACE: OPERATOR_NAMESPACE,
      WEKA_TASK_QUEUE: o.taskQueue ?? 'weka-drives',
      WEKA_HTTP_PORT: String(httpPort),
      WEKA_HTTP_ADDRESS: '127.0.0.1',
      ...imageEnv(),
      LOG_LEVEL: o.logLevel ?? 'warn',
      ...o.env,
    },
  });
}

export function operatorLogTail(op: OperatorProcess): string {
  return tailLog(op.logPath, 20);
}

export interface ContainerPlacement {
  name: string;
  nodeName: string;
  /** The GUID of the cluster it joins, when not the one given for all. */
  clusterGUID?: string;
}

/**
 * Creates standalone drive WekaContainers of the smallest request, 50 at a time, as a user would
 * (no finalizer: the watcher adds it), each with its cluster's GUID when one is given.
 */
export async function createBenchContainers(
  kc: KubeConfig,
  namespace: string,
  placements: readonly ContainerPlacement[],
  clusterGUID?: string,
  drives: typeof SMALL_DRIVE_SPEC = SMALL_DRIVE_SPEC,
): Promise<void> {
  await createDriveContainers(
    kc,
    namespace,
    placements.map((p) => ({
      name: p.name,
      spec: { image: 'quay.io/weka.io/weka-in-container:bench', nodeName: p.nodeName, ...drives },
      ...(p.clusterGUID === undefined ? {} : { clusterGUID: p.clusterGUID }),
    })),
    { concurrency: 50, ...(clusterGUID === undefined ? {} : { clusterGUID }) },
  );
}

/** `count` containers named `<prefix>-<i>`, round robin over the nodes. */
export function roundRobin(prefix: string, count: number, nodes: readonly string[]): ContainerPlacement[] {
  return Array.from({ length: count }, (_, i) => ({ name: `${prefix}-${i}`, nodeName: nodes[i % nodes.length]! }));
}

/**
 * `count` containers named `<prefix>-<i>`, filling one node before the next (created, and so
 * admitted, in that order): the bring-ups in flight share one or two nodes' mutex workflows
 * instead of touching a different node each.
 */
export function nodeByNode(prefix: string, count: number, nodes: readonly string[]): ContainerPlacement[] {
  const perNode = Math.ceil(count / nodes.length);
  return Array.from({ length: count }, (_, i) => ({
    name: `${prefix}-${i}`,
    nodeName: nodes[Math.floor(i / perNode)]!,
  }));
}

/** The scale benchmark's placement orders, by the name `--idle-placement` takes. */
export const PLACEMENTS = { 'round-robin': roundRobin, 'node-by-node': nodeByNode } as const;
export type PlacementOrder = keyof typeof PLACEMENTS;

/**
 * Watches the containers until `count` in the namespace satisfy `done`; returns when each was first
 * seen so (ms since the epoch). A watch, not a poll: at thousands of containers every poll would
 * list them all, and that load on the apiserver and on this process's two shared cores would slow
 * the operator being measured. Fails after `timeoutMs`, or at once when `alive()` says the operator
 * died.
 */
export async function waitForContainers(
  kc: KubeConfig,
  o: {
    namespace: string;
    count: number;
    done: (c: WekaContainer) => boolean;
    what: string;
    timeoutMs: number;
    alive?: () => boolean;
    progress?: Log;
  },
): Promise<Map<string, number>> {
  const seen = new Map<string, number>();
  const look = (c: WekaContainer) => {
    const name = c.metadata?.name;
    if (name && c.metadata?.namespace === o.namespace && !seen.has(name) && o.done(c)) seen.set(name, Date.now());
  };
  const abort = new AbortController();
  const watching = runListWatch({
    kubeConfig: kc,
    ...WEKA_CONTAINERS,
    handlers: {
      parse: (raw) => raw as WekaContainer,
      keyOf: (c) => c.metadata?.uid ?? '',
      onList: (items) => items.forEach(look),
      onEvent: (type, obj) => type !== 'DELETED' && look(obj),
    },
    logger: pino({ level: 'warn' }, pino.destination(2)),
    signal: abort.signal,
  });
  try {
    return await eventually(
      `${o.count} containers ${o.what}`,
      async () => {
        if (o.alive && !o.alive()) throw new Error(`the operator exited while waiting for ${o.what}`);
        return seen.size >= o.count ? seen : undefined;
      },
      o.timeoutMs,
      {
        intervalMs: 50,
        progress: () => `${seen.size} of ${o.count} ${o.what}`,
        log: o.progress ?? (() => undefined),
        retryErrors: false,
      },
    );
  } finally {
    abort.abort();
    await watching;
  }
}

/** Nearest-rank percentile of an ascending list. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** The middle value, or the mean of the two middle ones: with an even count neither half decides alone. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  return sorted.length % 2 === 1 ? sorted[Math.floor(mid)]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * Creates the containers at once, as a user would, and waits until every one is Ready; fails with
 * the operator's log tail when that does not happen. Returns when the creating started and when
 * each container was first seen Ready (ms since the epoch).
 */
export async function createAndWaitReady(
  kc: KubeConfig,
  op: OperatorProcess,
  o: {
    namespace: string;
    placements: readonly ContainerPlacement[];
    /** The cluster of the placements that name none. */
    clusterGUID?: string;
    timeoutMs: number;
    log: Log;
    /** What each container asks for; SMALL_DRIVE_SPEC unless given. */
    drives?: typeof SMALL_DRIVE_SPEC;
  },
): Promise<{ t0: number; readyAt: Map<string, number> }> {
  const t0 = Date.now();
  await createBenchContainers(kc, o.namespace, o.placements, o.clusterGUID, o.drives);
  o.log(`created ${o.placements.length} containers in ${Date.now() - t0} ms; waiting for Ready`);
  const readyAt = await waitForContainers(kc, {
    namespace: o.namespace,
    count: o.placements.length,
    done: isReady,
    what: 'Ready',
    timeoutMs: o.timeoutMs,
    alive: () => op.running(),
    progress: o.log,
  }).catch((err: unknown) => {
    throw new Error(`${err instanceof Error ? err.message : String(err)}\noperator log tail:\n${operatorLogTail(op)}`);
  });
  return { t0, readyAt };
}
