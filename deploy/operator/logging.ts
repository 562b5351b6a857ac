// The operator's one log: JSON lines from pino on stdout, with level names ("info", not 30), errors
// as objects (type, message, stack, and a Kubernetes API error's status code and reason), every
// line written inside an activity naming its workflow and activity, and the Temporal SDK's own
// lines (Core's and the worker's) forwarded into the same stream.
import { asyncLocalStorage } from '@temporalio/activity';
import type { LogLevel, LogMetadata, Logger as SdkLogger } from '@temporalio/common';
import { apiMessage, httpStatus } from '../../activities/kube/errors.js';
import { pino, stdSerializers, type Logger, type LevelWithSilent } from 'pino';

export function operatorLogger(level: LevelWithSilent, destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    name: 'weka-drives-operator',
    formatters: { level: (label) => ({ level: label }) },
    serializers: { err: serializeError, error: serializeError },
    mixin: activityFields,
  };
  return destination ? pino(options, destination) : pino(options);
}

/** The workflow and activity a line written inside an activity belongs to; nothing elsewhere. */
export function activityFields(): Record<string, unknown> {
  const info = asyncLocalStorage.getStore()?.info;
  if (!info) return {};
  return {
    workflowId: info.workflowExecution?.workflowId,
    runId: info.workflowExecution?.runId,
    activity: info.activityType,
    attempt: info.attempt,
  };
}

/**
 * pino's error serializer, plus what makes a Kubernetes API error readable: @kubernetes/client-node
 * throws an ApiException whose message holds the whole response, headers included; the status code
 * and the apiserver's own message are what a reader needs.
 */
export function serializeError(err: unknown): unknown {
  if (!(err instanceof Error)) return err;
  const out = stdSerializers.err(err) as unknown as Record<string, unknown>;
  const code = httpStatus(err);
  if (code !== undefined && (err as { body?: unknown }).body !== undefined) {
    out.code = code;
    out.message = apiMessage(err);
    delete out.body;
    delete out.headers;
  }
  return out;
}

const PINO_LEVEL: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

/**
 * The Temporal SDK's Logger over pino: the SDK calls (message, meta), pino wants (meta, message).
 * The SDK's meta carries sdkComponent (worker, workflow, activity, core) and a timestamp under a
 * symbol key, which pino does not serialize.
 */
export function sdkLogger(logger: Logger): SdkLogger {
  const write = (level: LogLevel, message: string, meta?: LogMetadata) => {
    logger[PINO_LEVEL[level]]({ ...meta }, message);
  };
  return {
    log: write,
    trace: (message, meta) => write('TRACE', message, meta),
    debug: (message, meta) => write('DEBUG', message, meta),
    info: (message, meta) => write('INFO', message, meta),
    warn: (message, meta) => write('WARN', message, meta),
    error: (message, meta) => write('ERROR', message, meta),
  };
}
