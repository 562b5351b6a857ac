// The operator as a separate process, the way a pod runs it: started under the control plane's
// supervisor (deploy/local/processes.ts: a process group of its own that never outlives whoever
// started it), its output in a log file, and stopped with SIGTERM or SIGKILLed like a crashed pod.
// The integration and chaos tests run a bundle of deploy/operator/main.ts made from source at the
// start of their run (support/operator.ts, chaos/world.ts); the benchmarks run the compiled dist/ as
// the image does (bench/bench-env.ts).
// No vitest here: the benchmarks run outside it.
import { readFileSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, waitUntilReady, type ServerProcess } from '../../deploy/local/processes.js';
import { localTemporalProfile } from '../../deploy/local/temporal.js';
import { sleep } from './async.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
/** The operator's entry point, as source: tests run bundles of it (bundleOperatorSource). */
export const OPERATOR_SOURCE = join(repoRoot, 'deploy/operator/main.ts');
/** An operator broken on purpose (it double-books, keeps what it released, does not watch its pods): only to prove the checker catches each. */
export const BROKEN_OPERATOR_SOURCE = join(repoRoot, 'test/chaos/broken-operator.ts');
/** The operator as the image runs it: the compiled JavaScript, bundled by `npm run build`. */
export const COMPILED_OPERATOR = join(repoRoot, 'dist/deploy/operator/main.bundle.js');

/** Where the operator finds its servers, and where its log goes (a ControlPlane has all four). */
export interface OperatorControlPlane {
  readonly kubeconfigPath: string;
  readonly temporalAddress: string;
  readonly temporalNamespace: string;
  readonly logDir: string;
}

export interface OperatorProcessOptions {
  /** The log file is `<logDir>/<logName>.log`. */
  logName: string;
  /**
   * The JavaScript file Node.js runs: COMPILED_OPERATOR, or a bundle of a source entry point
   * (bundleOperatorSource of deploy/operator/operator-bundle.ts). Never the source under tsx, whose
   * source maps the workflow threads would pay for at every promise.
   */
  script: string;
  /** The operator's configuration (WEKA_*, LOG_LEVEL, ...), over this process's environment. */
  env: Record<string, string>;
  /** Node's own options, before the main module (e.g. --expose-gc). */
  nodeArgs?: readonly string[];
}

export interface OperatorProcess {
  readonly logPath: string;
  /** WEKA_TASK_QUEUE, as given. */
  readonly taskQueue: string;
  /** WEKA_HTTP_PORT, as given (0: no HTTP endpoint). */
  readonly httpPort: number;
  /** When the process was spawned (ms since the epoch). */
  readonly spawnedAt: number;
  /** Everything it wrote so far (pino JSON lines, and anything on stderr). */
  output(): string;
  running(): boolean;
  /** Waits until /readyz answers 200 (worker running, watcher listed). */
  waitReady(deadlineMs?: number): Promise<void>;
  /** The `time` of the log line with this message (pino JSON), if logged. */
  logTime(message: string): Promise<number | undefined>;
  /** Prometheus samples of /metrics without labels, by name. */
  metrics(): Promise<Map<string, number>>;
  /**
   * The sum of the samples of one metric, labelled or not (e.g. a counter per task queue), whose
   * labels include `labels` (all of them by default); 0 if none.
   */
  metricSum(name: string, labels?: Readonly<Record<string, string>>): Promise<number>;
  /** From one scrape: each named metric's samples summed over all their labels (0 if none). */
  metricSums(names: readonly string[]): Promise<Map<string, number>>;
  /** A full GC of the operator's main thread (it must run with gcOnSignalArgs), then a moment for it to finish. */
  collectGarbage(): Promise<void>;
  /**
   * SIGTERM, and SIGKILL after `graceMs`; resolves with the exit code (or signal). The default is the
   * chart's terminationGracePeriodSeconds (40 s), which outlasts the worker's 20 s grace for
   * in-flight activities: a shorter wait would call an operator that drains under load unclean.
   */
  stop(graceMs?: number): Promise<number | string>;
  /** SIGKILL to the process group: a crashed pod. */
  kill(): Promise<void>;
}

/**
 * Node options for collectGarbage: SIGWINCH runs a full collection of the operator's main thread,
 * so memory read right after is what is live, not what a rollout left for the collector.
 * (Workflow isolates live in worker threads and collect on their own.) Not SIGUSR2: Temporal's
 * Runtime shuts the worker down on it; SIGWINCH means nothing without a tty.
 */
export const gcOnSignalArgs = [
  '--expose-gc',
  '--import',
  `data:text/javascript,${encodeURIComponent("process.on('SIGWINCH', () => globalThis.gc?.());")}`,
];

/** Starts the operator; it returns at once (see waitReady, or wait for its `worker running` line). */
export function spawnOperator(cp: OperatorControlPlane, o: OperatorProcessOptions): OperatorProcess {
  const spawnedAt = Date.now();
  const temporalConfig = join(cp.logDir, `${o.logName}-temporal.toml`);
  writeFileSync(temporalConfig, localTemporalProfile(cp.temporalAddress, cp.temporalNamespace));
  const server = startServer({
    name: o.logName,
    command: process.execPath,
    args: [...(o.nodeArgs ?? []), o.script],
    cwd: repoRoot,
    logPath: join(cp.logDir, `${o.logName}.log`),
    env: {
      ...process.env,
      KUBECONFIG: cp.kubeconfigPath,
      // Instead of the developer's own ~/.config/temporalio/temporal.toml, whose API key or TLS
      // settings would otherwise apply to the local server too.
      TEMPORAL_CONFIG_FILE: temporalConfig,
      TEMPORAL_ADDRESS: cp.temporalAddress,
      TEMPORAL_NAMESPACE: cp.temporalNamespace,
      ...o.env,
    },
  });
  const httpPort = Number(o.env['WEKA_HTTP_PORT'] ?? 0);
  const url = `http://127.0.0.1:${httpPort}`;
  return {
    logPath: server.logPath,
    taskQueue: o.env['WEKA_TASK_QUEUE'] ?? '',
    httpPort,
    spawnedAt,
    output() {
      try {
        return readFileSync(server.logPath, 'utf8');
      } catch {
        return '';
      }
    },
    running: () => !server.hasExited(),
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
      const samples = new Map<string, number>();
      for (const x of await scrape(url)) if (Object.keys(x.labels).length === 0) samples.set(x.name, x.value);
      return samples;
    },
    async metricSum(name, labels = {}) {
      return (await scrape(url))
        .filter((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v))
        .reduce((sum, x) => sum + x.value, 0);
    },
    async metricSums(names) {
      const sums = new Map(names.map((n) => [n, 0]));
      for (const x of await scrape(url)) {
        const sum = sums.get(x.name);
        if (sum !== undefined) sums.set(x.name, sum + x.value);
      }
      return sums;
    },
    async collectGarbage() {
      process.kill(await operatorPid(server, o.script), 'SIGWINCH');
      await sleep(2_000);
    },
    async stop(graceMs = 40_000) {
      await keepingAlive(server.stop(graceMs));
      return server.exited;
    },
    kill: () => keepingAlive(server.kill()),
  };
}

/** One sample of the operator's /metrics: its metric's name, its labels (none: {}), its value. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Every sample of the operator's /metrics. */
async function scrape(url: string): Promise<Sample[]> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? ([0-9.eE+-]+)$/.exec(line);
    if (!m) continue;
    const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1]!, l[2]!]));
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return samples;
}

/** The node process under the supervisor (supervise.sh runs the command as its child). */
async function operatorPid(server: ServerProcess, main: string): Promise<number> {
  const children = (await readFile(`/proc/${server.pid}/task/${server.pid}/children`, 'utf8'))
    .trim()
    .split(/\s+/)
    .map(Number);
  for (const pid of children) {
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(main)) return pid;
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
