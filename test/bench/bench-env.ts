// What every end-to-end benchmark needs: its own local control plane, fake nodes with signed shared
// drives, the operator as a separate process (compiled, run the way the image runs it), and drive
// WekaContainers created and watched from outside, the way a user would.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import type { WekaContainer } from '../../src/api/index.js';
import { ControlPlane } from '../../deploy/local/control-plane.js';
import type { SimulatedDevice } from '../../deploy/local/fake-nodes.js';
import { freePorts } from '../../deploy/local/ports.js';
import { startServer, tailLog, waitUntilReady, type ServerProcess } from '../../deploy/local/processes.js';
import { signSharedDrives } from '../../deploy/local/shared-drives.js';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
/**
 * The operator as the image runs it: the compiled JavaScript under plain node (compileOperator).
 * Not under tsx: its loader turns on source maps, and then Node looks for a source map in all the
 * code the workflow thread compiles (a small function per workflow promise, in the SDK's promise
 * hook) and maps every stack trace, a cost the product never pays.
 */
const OPERATOR_MAIN = 'dist/deploy/operator/main.js';
/**
 * Preloaded (with --expose-gc) by the scale benchmark only: SIGWINCH runs a full collection of the
 * operator's main thread, so memory read right after is what is live, not what the rollout left
 * for the collector. (Workflow isolates live in worker threads and collect on their own.) Not
 * SIGUSR2: Temporal's Runtime shuts the worker down on it; SIGWINCH means nothing without a tty.
 */
const GC_ON_SIGNAL = `data:text/javascript,${encodeURIComponent("process.on('SIGWINCH', () => globalThis.gc?.());")}`;

export const GROUP = { group: 'weka.weka.io', version: 'v1alpha1', plural: 'wekacontainers' };
export const OPERATOR_NAMESPACE = 'weka-operator-system';
/** Two roomy TLC devices: 80 containers of one 384 GiB virtual drive fit on a node. */
export const BENCH_DEVICES: SimulatedDevice[] = [
  { path: '/dev/nvme0n1', capacityGiB: 15360, type: 'TLC' },
  { path: '/dev/nvme1n1', capacityGiB: 15360, type: 'TLC' },
];
/** The smallest drive-sharing request: one core, one virtual drive of the minimum chunk. */
export const SMALL_DRIVE_SPEC = { driveCores: 1, numDrives: 1, driveCapacity: 384 };

export type Log = (message: string) => void;

async function tsc(project: string): Promise<void> {
  await run(process.execPath, [join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', project], { cwd: repoRoot });
}

/** The simulator runs as compiled JavaScript behind every fake node (as in the integration setup). */
export const compileSimulator = (): Promise<void> => tsc('tsconfig.sim.json');

/** Compiles the operator to dist/ (npm run build), so a benchmark never runs a stale build. */
export const compileOperator = (): Promise<void> => tsc('tsconfig.build.json');

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

export async function ensureNamespace(kc: KubeConfig, name: string): Promise<void> {
  await kc
    .makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name } } })
    .catch((e: { code?: number }) => {
      if (e.code !== 409) throw e;
    });
}

/** Runs `fn` over `items` with at most `limit` at a time, keeping the order of results. */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    for (let i = next++; i < items.length; i = next++) results[i] = await fn(items[i]!, i);
  });
  await Promise.all(lanes);
  return results;
}

/** Fake nodes (kwok + simulator) whose devices are signed for proxy and published on the node. */
export async function addSharedDrivesNodes(cp: ControlPlane, names: readonly string[]): Promise<void> {
  const kubeConfig = cp.kubeConfig();
  // One at a time: FakeNodes picks each kwok's port and pod CIDR as it adds, not atomically.
  for (const name of names) await cp.addNode({ name, devices: BENCH_DEVICES });
  await mapLimit(names, 4, (node) =>
    signSharedDrives({ kubeConfig, simulatorRoot: cp.simulatorRoot, node, devices: BENCH_DEVICES }),
  );
}

export interface OperatorProcess {
  readonly server: ServerProcess;
  readonly httpPort: number;
  /** When the process was spawned (ms since the epoch). */
  readonly spawnedAt: number;
  readonly taskQueue: string;
  /** Waits until /readyz answers 200 (worker running, watcher listed). */
  waitReady(deadlineMs?: number): Promise<void>;
  /** The `time` of the log line with this message (pino JSON), if logged. */
  logTime(message: string): Promise<number | undefined>;
  /** Prometheus samples of /metrics without labels, by name. */
  metrics(): Promise<Map<string, number>>;
  /** With gcOnSignal: a full GC of the operator's main thread, then a moment for it to finish. */
  collectGarbage(): Promise<void>;
  stop(): Promise<void>;
  /** SIGKILL to the process group: a crashed pod. */
  kill(): Promise<void>;
}

export async function startOperator(
  cp: ControlPlane,
  o: { logName: string; env?: Record<string, string>; logLevel?: string; taskQueue?: string; gcOnSignal?: boolean },
): Promise<OperatorProcess> {
  const [httpPort] = await freePorts(1);
  const taskQueue = o.taskQueue ?? 'weka-drives';
  const spawnedAt = Date.now();
  const server = startServer({
    name: o.logName,
    command: process.execPath,
    args: [
      ...(o.gcOnSignal ? ['--expose-gc', '--import', GC_ON_SIGNAL] : []),
      ...(process.env['BENCH_CPU_PROF'] ? ['--cpu-prof', `--cpu-prof-dir=${process.env['BENCH_CPU_PROF']}`] : []),
      join(repoRoot, OPERATOR_MAIN),
    ],
    cwd: repoRoot,
    logPath: join(cp.logDir, `${o.logName}.log`),
    env: {
      ...process.env,
      KUBECONFIG: cp.kubeconfigPath,
      TEMPORAL_ADDRESS: cp.temporalAddress,
      TEMPORAL_NAMESPACE: cp.temporalNamespace,
      WEKA_OPERATOR_NAMESPACE: OPERATOR_NAMESPACE,
      WEKA_TASK_QUEUE: taskQueue,
      WEKA_HTTP_PORT: String(httpPort),
      WEKA_HTTP_ADDRESS: '127.0.0.1',
      NODE_ENV: 'production',
      LOG_LEVEL: o.logLevel ?? 'warn',
      ...o.env,
    },
  });
  const url = `http://127.0.0.1:${httpPort}`;
  return {
    server,
    httpPort: httpPort!,
    spawnedAt,
    taskQueue,
    waitReady: (deadlineMs = 120_000) =>
      waitUntilReady(server, async () => (await fetch(`${url}/readyz`)).ok, deadlineMs),
    async logTime(message) {
      const text = await readFile(server.logPath, 'utf8').catch(() => '');
      for (const line of text.split('\n')) {
        if (!line.includes(message)) continue;
        try {
          const parsed = JSON.parse(line) as { msg?: string; time?: number };
          if (parsed.msg === message) return parsed.time;
        } catch {
          // not a log line of ours
        }
      }
      return undefined;
    },
    async metrics() {
      const text = await (await fetch(`${url}/metrics`)).text();
      const samples = new Map<string, number>();
      for (const line of text.split('\n')) {
        const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*) ([0-9.eE+-]+)$/.exec(line);
        if (m) samples.set(m[1]!, Number(m[2]));
      }
      return samples;
    },
    async collectGarbage() {
      process.kill(await operatorPid(server), 'SIGWINCH');
      await sleep(2_000);
    },
    stop: () => server.stop(),
    kill: () => keepingAlive(server.kill()),
  };
}

/** The node process under the supervisor (supervise.sh runs the command as its child). */
async function operatorPid(server: ServerProcess): Promise<number> {
  const children = (await readFile(`/proc/${server.pid}/task/${server.pid}/children`, 'utf8'))
    .trim()
    .split(/\s+/)
    .map(Number);
  for (const pid of children) {
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(OPERATOR_MAIN)) return pid;
  }
  throw new Error(`cannot find the operator process under supervisor ${server.pid}`);
}

/**
 * The supervised process is unref'd (deploy/local/processes.ts), so waiting for nothing but its
 * exit would let Node end with the promise unsettled; a timer keeps the event loop up meanwhile.
 */
async function keepingAlive<T>(work: Promise<T>): Promise<T> {
  const timer = setInterval(() => undefined, 1_000);
  try {
    return await work;
  } finally {
    clearInterval(timer);
  }
}

export function operatorLogTail(op: OperatorProcess): string {
  return tailLog(op.server.logPath, 20);
}

export interface ContainerPlacement {
  name: string;
  nodeName: string;
}

/**
 * Creates standalone drive WekaContainers (as a user would: no finalizer, the watcher adds it)
 * and writes each one's cluster GUID as the cluster's administrator would, by server-side apply
 * with its own field manager.
 */
export async function createDriveContainers(
  kc: KubeConfig,
  namespace: string,
  placements: readonly ContainerPlacement[],
  clusterGUID?: string,
): Promise<void> {
  const custom = kc.makeApiClient(CustomObjectsApi);
  await mapLimit(placements, 50, async (p) => {
    await custom.createNamespacedCustomObject({
      ...GROUP,
      namespace,
      body: {
        apiVersion: 'weka.weka.io/v1alpha1',
        kind: 'WekaContainer',
        metadata: { name: p.name },
        spec: { mode: 'drive', image: 'weka:bench', nodeName: p.nodeName, ...SMALL_DRIVE_SPEC },
      },
    });
    if (clusterGUID === undefined) return;
    await custom.patchNamespacedCustomObjectStatus(
      {
        ...GROUP,
        namespace,
        name: p.name,
        body: {
          apiVersion: 'weka.weka.io/v1alpha1',
          kind: 'WekaContainer',
          metadata: { name: p.name },
          status: { clusterGUID },
        },
        fieldManager: 'bench-cluster-admin',
        force: true,
      },
      setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
    );
  });
}

/** `count` containers named `<prefix>-<i>`, round robin over the nodes. */
export function roundRobin(prefix: string, count: number, nodes: readonly string[]): ContainerPlacement[] {
  return Array.from({ length: count }, (_, i) => ({ name: `${prefix}-${i}`, nodeName: nodes[i % nodes.length]! }));
}

export async function listContainers(kc: KubeConfig, namespace: string): Promise<WekaContainer[]> {
  return (
    (await kc.makeApiClient(CustomObjectsApi).listNamespacedCustomObject({ ...GROUP, namespace })) as {
      items: WekaContainer[];
    }
  ).items;
}

/**
 * Polls the namespace until `count` containers satisfy `done`; returns when each was first seen
 * so (ms since the epoch). Fails after `timeoutMs`, or at once when `alive()` says the operator died.
 */
export async function waitForContainers(
  kc: KubeConfig,
  o: {
    namespace: string;
    count: number;
    done: (c: WekaContainer) => boolean;
    what: string;
    timeoutMs: number;
    pollMs: number;
    alive?: () => boolean;
    progress?: Log;
  },
): Promise<Map<string, number>> {
  const seen = new Map<string, number>();
  const started = Date.now();
  let lastReport = started;
  while (seen.size < o.count) {
    if (o.alive && !o.alive()) throw new Error(`the operator exited while waiting for ${o.what}`);
    if (Date.now() - started > o.timeoutMs)
      throw new Error(`timed out after ${o.timeoutMs} ms: ${seen.size} of ${o.count} containers ${o.what}`);
    const items = await listContainers(kc, o.namespace);
    const now = Date.now();
    for (const c of items) if (o.done(c) && !seen.has(c.metadata.name!)) seen.set(c.metadata.name!, now);
    if (o.progress && now - lastReport > 30_000) {
      lastReport = now;
      o.progress(`  ${seen.size} of ${o.count} ${o.what} after ${Math.round((now - started) / 1000)} s`);
    }
    if (seen.size < o.count) await sleep(o.pollMs);
  }
  return seen;
}

export const isReady = (c: WekaContainer): boolean => c.status?.phase === 'Ready';
export const isAllocated = (c: WekaContainer): boolean => (c.status?.allocations?.virtualDrives?.length ?? 0) > 0;

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
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
    clusterGUID: string;
    timeoutMs: number;
    pollMs: number;
    log: Log;
  },
): Promise<{ t0: number; readyAt: Map<string, number> }> {
  const t0 = Date.now();
  await createDriveContainers(kc, o.namespace, o.placements, o.clusterGUID);
  o.log(`created ${o.placements.length} containers in ${Date.now() - t0} ms; waiting for Ready`);
  const readyAt = await waitForContainers(kc, {
    namespace: o.namespace,
    count: o.placements.length,
    done: isReady,
    what: 'Ready',
    timeoutMs: o.timeoutMs,
    pollMs: o.pollMs,
    alive: () => !op.server.hasExited(),
    progress: o.log,
  }).catch((err: unknown) => {
    throw new Error(`${err instanceof Error ? err.message : String(err)}\noperator log tail:\n${operatorLogTail(op)}`);
  });
  return { t0, readyAt };
}
