// The operator process: the Temporal worker that runs every workflow and activity, and the CR
// watcher that starts and signals them, configured from the environment (see
// src/operator/config.ts), with /metrics, /healthz and /readyz. SIGTERM or SIGINT stops
// it cleanly: the watcher stops first (nothing new starts), then the worker shuts down and its
// in-flight activities get the worker's shutdown grace. main.ts runs it as the image does.
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { KeepAliveKubeConfig } from '../../activities/kube/keep-alive.js';
import { Client } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import { KubeExecTransport } from '../../activities/exec/kube-exec.js';
import { parseOperatorConfig } from '../../src/operator/config.js';
import { serveHttp, type HttpEndpoint } from './http.js';
import { operatorLogger } from './logging.js';
import { OperatorMetrics } from './metrics.js';
import { operatorVersion } from './version.js';
import { installTemporalRuntime } from './sdk-runtime.js';
import { startMutexDepthSampler, type MutexDepthSampler } from './mutex-depth.js';
import { clientConnection, customSearchAttributes, temporalTarget, workerConnection } from './temporal-connection.js';
import { searchAttributeProblems } from '../../src/operator/search-attributes.js';
import { startWatcher, type RunningWatcher } from './watcher/watcher.js';
import { startDriveVerification } from './drive-verification.js';
import { createOperatorWorker, type OperatorWorker, type OperatorWorkerOptions } from './worker.js';
import { failOrphanedActivities, processAlive } from './orphaned-activities.js';

import type { ActivityDeps } from '../../activities/deps.js';

/** How often a shutdown that waits for the worker to drain says what it waits for. */
const DRAIN_REPORT_MS = 10_000;

/** What a test's own entry point may replace; the operator's main replaces nothing, and no setting can. */
export type OperatorOverrides = Pick<ActivityDeps, 'decideAllocations'> & {
  /** false: the watcher does not watch the operator's pods (only a deliberately broken test operator). */
  watchPods?: boolean;
  /** The activities as the worker gets them (only a deliberately broken test operator). */
  withActivities?: OperatorWorkerOptions['withActivities'];
};

export async function runOperator(
  env: NodeJS.ProcessEnv,
  { watchPods, withActivities, ...overrides }: OperatorOverrides = {},
): Promise<void> {
  const parsed = parseOperatorConfig(env);
  const temporalSettings = temporalTarget(env);
  const errors = [...(parsed.ok ? [] : parsed.errors), ...(temporalSettings.ok ? [] : temporalSettings.errors)];
  if (!parsed.ok || !temporalSettings.ok) {
    console.error(`weka-drives-operator: invalid configuration:\n  ${errors.join('\n  ')}`);
    process.exit(2);
  }
  const config = parsed.config;
  const target = temporalSettings.target;
  if (!config.runWorker && !config.runWatcher) {
    console.error('weka-drives-operator: WEKA_RUN_WORKER and WEKA_RUN_WATCHER are both false: nothing to run');
    process.exit(2);
  }
  if (config.runWorker && config.workflowBundlePath !== undefined && !existsSync(config.workflowBundlePath)) {
    console.error(`weka-drives-operator: WEKA_WORKFLOW_BUNDLE: no workflow bundle at ${config.workflowBundlePath}`);
    process.exit(2);
  }
  const logger = operatorLogger(config.logLevel);
  const metrics = new OperatorMetrics({ version: operatorVersion() });
  const sdkMetrics = config.runWorker
    ? installTemporalRuntime(logger, metrics, config.sdkMetricsBufferSize)
    : undefined;

  // One kept-alive connection pool for every API call (client-node alone opens one per call).
  const kubeConfig = new KeepAliveKubeConfig();
  kubeConfig.loadFromDefault();
  const connection = await clientConnection(target);
  const temporal = new Client({ connection, namespace: target.namespace });
  const registered = await customSearchAttributes(connection, target.namespace);
  const temporalProblems =
    registered === 'missing'
      ? [
          `Temporal namespace ${target.namespace} does not exist at ${target.address}: create it (temporal operator namespace create --namespace ${target.namespace}) or set TEMPORAL_NAMESPACE`,
        ]
      : registered === undefined
        ? []
        : searchAttributeProblems(target.namespace, registered);
  if (registered === undefined)
    logger.warn({ namespace: target.namespace }, "could not list the namespace's search attributes: not checked");
  if (temporalProblems.length > 0) {
    console.error(`weka-drives-operator: Temporal is not set up for it:\n  ${temporalProblems.join('\n  ')}`);
    process.exit(2);
  }

  let nativeConnection: NativeConnection | undefined;
  let worker: OperatorWorker | undefined;
  let workerRun: Promise<void> | undefined;
  let watcher: RunningWatcher | undefined;
  let sampler: MutexDepthSampler | undefined;
  let verification: { stop(): void } | undefined;
  let stopping = false;
  // Installed before anything starts, so a SIGTERM during start-up also ends in a clean stop.
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      shutdown(signal).catch((err: unknown) => {
        logger.error({ err }, 'unclean shutdown');
        process.exit(1);
      });
    });
  }

  // Served first, so /healthz answers while the worker and the watcher start (/readyz says 503).
  let http: HttpEndpoint | undefined;
  if (config.httpPort > 0) {
    http = await serveHttp({
      port: config.httpPort,
      address: config.httpAddress,
      registry: metrics.registry,
      beforeScrape: () => sdkMetrics?.drain(),
      notReadyReason: () => {
        if (stopping) return 'shutting down';
        if (config.runWorker && worker?.getState() !== 'RUNNING')
          return `the worker is ${worker?.getState() ?? 'starting'}`;
        if (config.runWatcher && !watcher?.isReady()) return 'the watcher has not handled its first list yet';
        return undefined;
      },
    });
    logger.info({ address: config.httpAddress, port: http.port }, 'serving /metrics, /healthz and /readyz');
  }

  if (config.runWorker) {
    nativeConnection = await workerConnection(target);
    sdkMetrics?.start();
    worker = await createOperatorWorker({
      connection: nativeConnection,
      namespace: target.namespace,
      tuning: { maxCachedWorkflows: config.maxCachedWorkflows },
      ...(withActivities ? { withActivities } : {}),
      ...(config.workflowBundlePath !== undefined ? { workflowBundlePath: config.workflowBundlePath } : {}),
      deps: {
        kubeConfig,
        exec: metrics.countingExec(KubeExecTransport.fromKubeConfig(kubeConfig)),
        temporal,
        taskQueue: config.taskQueue,
        logger,
        settings: config.settings,
        operatorNamespace: config.operatorNamespace,
        proxyImage: config.proxyImage,
        allowedImages: config.allowedImages,
        ...(config.podPriorityClass ? { podPriorityClass: config.podPriorityClass } : {}),
        nodeLossGraceMs: config.nodeLossGraceSeconds * 1000,
        instrument: metrics.instrument,
        onNodeWarning: metrics.nodeWarningRecorded,
        ...overrides,
      },
    });
    workerRun = worker.run();
    workerRun.catch((err: unknown) => {
      logger.fatal({ err }, 'the worker failed');
      process.exit(1);
    });
    logger.info(
      {
        temporal: target.address,
        namespace: target.namespace,
        tls: target.tls,
        taskQueue: config.taskQueue,
        workflowBundle: worker.bundleSource,
      },
      'worker running',
    );
    const self = { pid: process.pid, hostname: hostname(), startedMs: performance.timeOrigin, alive: processAlive };
    failOrphanedActivities({ temporal, taskQueue: config.taskQueue, self, logger }).catch((err: unknown) =>
      logger.warn({ err }, 'could not look for activities a dead operator process left running'),
    );
  }

  if (config.runWatcher) {
    watcher = startWatcher({
      kubeConfig,
      temporal,
      taskQueue: config.taskQueue,
      logger,
      metrics,
      operatorNamespace: config.operatorNamespace,
      ...(watchPods === false ? { watchPods } : {}),
      bringUps: { limit: config.maxConcurrentBringUps, holdMs: config.bringUpHoldSeconds * 1000 },
    });
    sampler = startMutexDepthSampler({ temporal, taskQueue: config.taskQueue, metrics, logger });
    if (config.driveVerificationSeconds > 0)
      verification = startDriveVerification({
        temporal,
        taskQueue: config.taskQueue,
        periodSeconds: config.driveVerificationSeconds,
        logger,
      });
    logger.info({ taskQueue: config.taskQueue }, 'watcher running');
  }

  async function shutdown(signal: string): Promise<void> {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: the watcher stops, in-flight activities get their grace');
    sampler?.stop();
    verification?.stop();
    await watcher?.stop();
    // The worker may have stopped on its own already (a fatal error ends the process elsewhere).
    if (worker?.getState() === 'RUNNING') worker.shutdown();
    // A drain that takes long (an activity that outlives its grace) says what it waits for.
    const draining = setInterval(() => {
      if (worker) logger.warn({ workers: worker.drainStatus() }, 'still waiting for the worker to drain');
    }, DRAIN_REPORT_MS);
    await workerRun;
    clearInterval(draining);
    sdkMetrics?.stop();
    try {
      await nativeConnection?.close();
    } catch (err) {
      if (!sdkMetrics?.explainsCloseFailure()) throw err;
      logger.warn({ err }, "the Temporal SDK's runtime did not shut down cleanly after its metrics were lost");
    }
    await connection.close();
    await http?.close();
    logger.info('stopped');
    process.exit(0);
  }
}
