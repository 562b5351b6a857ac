// The Temporal SDK's runtime, installed before its first connection: its logs (Core's, the
// worker's and the workflows' own) go through pino, and its metrics into a buffer drained into the
// operator's registry every second and at every scrape. The process handles SIGTERM and SIGINT
// itself, watcher first, so the runtime reacts to no signal.
//
// Core's buffer has a fixed size. If it fills between two drains, Core drops updates, among them
// the ones that introduce a metric or a label set, and a later drain that meets an update of such a
// metric fails inside the native module (a Rust panic). So the first dropped update ends the SDK's
// metrics for the life of the process: said once (log and weka_drives_sdk_metrics_lost), the SDK
// series taken off /metrics, Core's message for each further drop not repeated, and the failure it
// causes when the runtime shuts down reported by `failedClose` instead of making the stop unclean.
import type { LogLevel, LogMetadata, Logger as SdkLogger } from '@temporalio/common';
import { MetricsBuffer, Runtime } from '@temporalio/worker';
import type { Logger } from 'pino';
import { sdkLogger } from './logging.js';
import type { OperatorMetrics } from './metrics.js';
import { SdkMetrics } from './sdk-metrics.js';

export const SDK_METRICS_DRAIN_MS = 1_000;
const CORE_BUFFER_FULL = /metrics buffer is full/i;

export interface SdkRuntime {
  /** From the first native connection on: the native runtime, and so the buffer, exists only then. */
  start(): void;
  /** Before the last native connection closes. */
  stop(): void;
  /** Folds what Core buffered into /metrics (a scrape calls it). */
  drain(): void;
  /** Whether an error closing the native connection comes from the lost metrics, not a real fault. */
  explainsCloseFailure(): boolean;
}

export function installTemporalRuntime(logger: Logger, metrics: OperatorMetrics, maxBufferSize: number): SdkRuntime {
  const buffer = new MetricsBuffer({ useSecondsForDurations: true, maxBufferSize });
  const sdk = new SdkMetrics(metrics.registry);
  let live = false;
  let lost = false;
  let readable = true;
  metrics.sdkMetricsLost.set(0);
  const markLost = (detail: Record<string, unknown>) => {
    if (lost) return;
    lost = true;
    metrics.sdkMetricsLost.set(1);
    sdk.forget();
    logger.error(
      { ...detail, maxBufferSize, drainMs: SDK_METRICS_DRAIN_MS },
      `the Temporal SDK's metrics are lost until the operator restarts: Core's buffer of ${maxBufferSize} updates ` +
        'overflowed between two drains (raise WEKA_SDK_METRICS_BUFFER_SIZE); the operator itself is unaffected',
    );
  };

  const base = sdkLogger(logger.child({ component: 'temporal-sdk' }));
  const log = (level: LogLevel, message: string, meta?: LogMetadata) => {
    if (CORE_BUFFER_FULL.test(message)) markLost({ core: message });
    else base.log(level, message, meta);
  };
  const forwarded: SdkLogger = {
    log,
    trace: (message, meta) => log('TRACE', message, meta),
    debug: (message, meta) => log('DEBUG', message, meta),
    info: (message, meta) => log('INFO', message, meta),
    warn: (message, meta) => log('WARN', message, meta),
    error: (message, meta) => log('ERROR', message, meta),
  };
  Runtime.install({
    logger: forwarded,
    telemetryOptions: {
      logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} },
      metrics: { buffer },
    },
    shutdownSignals: [],
  });

  const drain = () => {
    if (!live || !readable) return;
    try {
      const updates = buffer.retrieveUpdates();
      // After a drop the updates are incomplete; drained all the same, to keep Core's buffer from
      // filling again and Core from logging every further drop.
      if (!lost) sdk.apply(updates);
    } catch (err) {
      // The native side panicked on an update of a metric whose introduction was dropped: it
      // would again on every drain, printing a backtrace each time.
      readable = false;
      markLost({ err });
    }
  };
  let timer: NodeJS.Timeout | undefined;
  return {
    start() {
      live = true;
      timer = setInterval(drain, SDK_METRICS_DRAIN_MS).unref();
    },
    stop() {
      live = false;
      clearInterval(timer);
    },
    drain,
    explainsCloseFailure: () => lost,
  };
}
