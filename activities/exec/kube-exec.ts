// Runs a command in a pod container through the Kubernetes exec API (a websocket to the
// apiserver, proxied to the node's kubelet).
//
// The apiserver's status alone does not say whether the command ran: when the kubelet goes away
// mid-exec, the apiserver reads the closed error stream as "no error" and reports Success, with no
// output or only part of it. So every command runs under a fixed `sh -c` wrapper that ends stdout
// with an end line and stderr with the exit code (the trailer). Only both prove that the command
// finished and that all of its output arrived; without them the command may or may not have run
// (`dropped`), and the caller's idempotency probe decides. The exit code is the trailer's.
import { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { Exec, type KubeConfig, type V1Status } from '@kubernetes/client-node';
import { backoffDelay } from '../../src/backoff.js';
import {
  DEFAULT_EXEC_TIMEOUT_MS,
  describeExec,
  ExecForbiddenError,
  ExecPodMissingError,
  ExecTransportError,
  type ExecOptions,
  type ExecResult,
  type ExecTarget,
  type ExecTransport,
} from './transport.js';

/** The one method used from client-node's Exec, so tests can stand in for the apiserver. */
export type ExecClient = Pick<Exec, 'exec'>;

export interface KubeExecOptions {
  /** Connection attempts per run (see shouldRetry). Default 3. */
  readonly maxAttempts?: number;
  /** Delay before the first retry; doubles after each, up to MAX_RETRY_DELAY_MS. Default 200 ms. */
  readonly backoffMs?: number;
  readonly defaultTimeoutMs?: number;
  /**
   * Also retry when the socket opened but closed before any output or status. Off by default:
   * the kubelet answers the upgrade before it starts the command, so the command may have run,
   * and re-running a non-idempotent command (virtual add) would then be refused. Only for
   * read-only callers.
   */
  readonly retryEarlyDrops?: boolean;
  readonly sleep?: (ms: number) => Promise<void>;
}

/** How one attempt ended. */
export type AttemptOutcome =
  | { readonly kind: 'completed'; readonly result: ExecResult }
  | { readonly kind: 'start-failed'; readonly message: string }
  | { readonly kind: 'connect-failed'; readonly message: string }
  | { readonly kind: 'dropped'; readonly sawOutput: boolean }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'aborted' };

type StatusMeaning = { readonly exitCode: number } | { readonly startFailure: string };

/**
 * Success → exit 0. Failure with an ExitCode cause (reason NonZeroExitCode) → that code. Any
 * other Failure (container not found, executable not found, …) names no exit code: the runtime
 * did not start the command, when nothing was written either (see attemptExec).
 */
export function statusToExit(status: V1Status): StatusMeaning {
  if (status.status === 'Success') return { exitCode: 0 };
  const cause = status.details?.causes?.find((c) => c.reason === 'ExitCode');
  if (cause?.message !== undefined && /^\d+$/.test(cause.message)) return { exitCode: Number(cause.message) };
  // A kubelet reports a non-zero exit as an ExitCode cause. kwok (the local control plane's
  // kubelet) reports it as an InternalError whose message ends with Go's "exit status N"; the
  // command did run, so this is its exit code, not a failure to start.
  const reported = /: exit status (\d+)$/.exec(status.message ?? '');
  if (status.reason === 'InternalError' && reported) return { exitCode: Number(reported[1]) };
  return { startFailure: status.message ?? status.reason ?? 'exec failed without an exit code' };
}

/** The wrapper's last line on stdout, after the command's own output: `\n<STDOUT_END>\n`. */
export const STDOUT_END = 'weka-drives-exec-end';

/** Starts the wrapper's last line on stderr, the exit trailer: `\n<EXIT_TRAILER><code>\n`. */
export const EXIT_TRAILER = 'weka-drives-exec-exit:';

/** argv0 of the wrapper shell, so the script's own messages name it. */
const WRAPPER_NAME = 'weka-drives-exec';

/** Runs its arguments as a command (never parsed by the shell), then prints the two end lines. */
const WRAPPER_SCRIPT = `"$@"; s=$?; printf '\\n${STDOUT_END}\\n'; printf '\\n${EXIT_TRAILER}%s\\n' "$s" >&2; exit "$s"`;

/** The argv sent to the apiserver for `argv`. */
export function wrappedArgv(argv: readonly string[]): string[] {
  return ['sh', '-c', WRAPPER_SCRIPT, WRAPPER_NAME, ...argv];
}

/** Where each stream's end line must be: its last line. */
const STDOUT_END_LINE = `\n${STDOUT_END}\n`;
const EXIT_TRAILER_LINE = new RegExp(`\\n${EXIT_TRAILER}(\\d+)\\n$`);

/** sh's exit codes for a command it could not run: not executable, not found. */
const SHELL_COULD_NOT_RUN = new Set([126, 127]);

export interface WrappedOutput {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * The wrapped command's exit code and its own output, the wrapper's end lines cut off; undefined
 * unless both end lines are there, each the last line of its stream.
 */
export function readWrappedOutput(stdout: string, stderr: string): WrappedOutput | undefined {
  const trailer = EXIT_TRAILER_LINE.exec(stderr);
  if (!trailer || !stdout.endsWith(STDOUT_END_LINE)) return undefined;
  return {
    exitCode: Number(trailer[1]),
    stdout: stdout.slice(0, stdout.length - STDOUT_END_LINE.length),
    stderr: stderr.slice(0, trailer.index),
  };
}

/** Retry only what certainly did not run: a connection that never opened (or, opted in, an early drop). */
export function shouldRetry(
  outcome: AttemptOutcome,
  attempt: number,
  maxAttempts: number,
  retryEarlyDrops = false,
): boolean {
  if (attempt >= maxAttempts) return false;
  if (outcome.kind === 'connect-failed') return !isForbidden(outcome);
  return retryEarlyDrops && outcome.kind === 'dropped' && !outcome.sawOutput;
}

/** The websocket upgrade answered 404: there is no such pod. */
export function isPodMissing(outcome: AttemptOutcome): boolean {
  return outcome.kind === 'connect-failed' && /Unexpected server response: 404\b/.test(outcome.message);
}

/** The websocket upgrade answered 403: the apiserver forbids this exec (RBAC or an admission policy). */
export function isForbidden(outcome: AttemptOutcome): boolean {
  return outcome.kind === 'connect-failed' && /Unexpected server response: 403\b/.test(outcome.message);
}

/** The longest wait between two connection attempts. */
export const MAX_RETRY_DELAY_MS = 5_000;

export class KubeExecTransport implements ExecTransport {
  constructor(
    private readonly client: ExecClient,
    private readonly options: KubeExecOptions = {},
  ) {}

  static fromKubeConfig(kc: KubeConfig, options: KubeExecOptions = {}): KubeExecTransport {
    return new KubeExecTransport(new Exec(kc), options);
  }

  async run(target: ExecTarget, argv: readonly string[], opts: ExecOptions = {}): Promise<ExecResult> {
    const what = describeExec(target, argv);
    const maxAttempts = this.options.maxAttempts ?? 3;
    const sleep = this.options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
    const deadline = Date.now() + (opts.timeoutMs ?? this.options.defaultTimeoutMs ?? DEFAULT_EXEC_TIMEOUT_MS);
    for (let attempt = 1; ; attempt++) {
      if (opts.signal?.aborted) throw new ExecTransportError('aborted', `${what}: aborted`, attempt > 1);
      const outcome = await attemptExec(this.client, target, argv, deadline - Date.now(), opts.signal);
      if (outcome.kind === 'completed') return outcome.result;
      if (!shouldRetry(outcome, attempt, maxAttempts, this.options.retryEarlyDrops))
        throw outcomeError(outcome, what, attempt);
      const delay = backoffDelay(attempt, {
        initialMs: this.options.backoffMs ?? 200,
        maxMs: MAX_RETRY_DELAY_MS,
        jitter: false,
      });
      if (Date.now() + delay >= deadline)
        throw new ExecTransportError(
          'timeout',
          `${what}: timed out while retrying (${describeOutcome(outcome)})`,
          false,
        );
      await sleep(delay);
    }
  }
}

export function outcomeError(
  outcome: Exclude<AttemptOutcome, { kind: 'completed' }>,
  what: string,
  attempts: number,
): ExecTransportError {
  const suffix = attempts > 1 ? ` (after ${attempts} attempts)` : '';
  switch (outcome.kind) {
    case 'connect-failed':
      if (isForbidden(outcome))
        return new ExecForbiddenError(
          `${what}: ${describeOutcome(outcome)}: the apiserver forbids this exec (RBAC, or an admission policy on pods/exec)`,
        );
      if (isPodMissing(outcome))
        return new ExecPodMissingError(`${what}: ${describeOutcome(outcome)}${suffix}: the pod does not exist`);
      return new ExecTransportError('connect', `${what}: ${describeOutcome(outcome)}${suffix}`, false);
    case 'start-failed':
      return new ExecTransportError('start', `${what}: ${describeOutcome(outcome)}`, false);
    case 'dropped':
      return new ExecTransportError('dropped', `${what}: ${describeOutcome(outcome)}`, true);
    case 'timeout':
      return new ExecTransportError('timeout', `${what}: ${describeOutcome(outcome)}`, true);
    case 'aborted':
      return new ExecTransportError('aborted', `${what}: ${describeOutcome(outcome)}`, true);
  }
}

function describeOutcome(outcome: Exclude<AttemptOutcome, { kind: 'completed' }>): string {
  switch (outcome.kind) {
    case 'connect-failed':
      return `could not connect: ${outcome.message}`;
    case 'start-failed':
      return `command did not start: ${outcome.message}`;
    case 'dropped':
      return `stream ended without the wrapper's exit code${outcome.sawOutput ? ' after output arrived' : ''}; the command may have run`;
    case 'timeout':
      return 'timed out waiting for the exit status; the command may have run';
    case 'aborted':
      return 'aborted; the command may have run';
  }
}

type ExecSocket = Awaited<ReturnType<Exec['exec']>>;

/** One websocket session: resolves with how it ended, never rejects. */
function attemptExec(
  client: ExecClient,
  target: ExecTarget,
  argv: readonly string[],
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<AttemptOutcome> {
  return new Promise((resolve) => {
    const stdoutChunks: Buffer[] = [];
    const stderrChunks: Buffer[] = [];
    let sawOutput = false;
    let status: V1Status | undefined;
    let socket: ExecSocket | undefined;
    let settled = false;
    const collector = (chunks: Buffer[]) => {
      const stream = new Writable({
        write(chunk: Buffer, _encoding, callback) {
          if (chunk.length > 0) sawOutput = true;
          chunks.push(Buffer.from(chunk));
          callback();
        },
      });
      stream.on('error', () => undefined); // a late write after end() must not crash the worker
      return stream;
    };
    const stdout = collector(stdoutChunks);
    const stderr = collector(stderrChunks);

    const settle = (outcome: AttemptOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      socket?.close();
      resolve(outcome);
    };
    const timer = setTimeout(() => settle({ kind: 'timeout' }), Math.max(0, timeoutMs));
    const onAbort = () => settle({ kind: 'aborted' });
    signal?.addEventListener('abort', onAbort, { once: true });

    const onStatus = (s: V1Status) => {
      status = s;
      void complete(s);
    };
    const complete = async (s: V1Status) => {
      // client-node ends both streams before reporting the status; wait until they have flushed.
      for (const stream of [stdout, stderr]) if (!stream.writableEnded) stream.end();
      await Promise.all([finished(stdout), finished(stderr)]).catch(() => undefined);
      const ran = readWrappedOutput(
        Buffer.concat(stdoutChunks).toString('utf8'),
        Buffer.concat(stderrChunks).toString('utf8'),
      );
      if (ran && SHELL_COULD_NOT_RUN.has(ran.exitCode))
        return settle({ kind: 'start-failed', message: `exit ${ran.exitCode}: ${ran.stderr.trim()}` });
      if (ran) return settle({ kind: 'completed', result: ran });
      // No end lines and nothing written: a status that names no exit code is the runtime not
      // starting the wrapper (no such container, no sh). Anything else may have run.
      const meaning = statusToExit(s);
      if ('startFailure' in meaning && !sawOutput)
        return settle({ kind: 'start-failed', message: meaning.startFailure });
      settle({ kind: 'dropped', sawOutput });
    };

    client
      .exec(
        target.namespace,
        target.pod,
        target.container ?? '',
        wrappedArgv(argv),
        stdout,
        stderr,
        null,
        false,
        onStatus,
      )
      .then(
        (ws) => {
          socket = ws;
          if (settled) {
            ws.close();
            return;
          }
          const onClose = () => {
            if (status === undefined) settle({ kind: 'dropped', sawOutput });
          };
          if (ws.readyState === ws.CLOSED) onClose();
          else ws.on('close', onClose);
        },
        (err: unknown) => settle({ kind: 'connect-failed', message: describeError(err) }),
      );
  });
}

/** ws rejects the handshake with an ErrorEvent-like object, not always an Error. */
function describeError(err: unknown): string {
  if (typeof err === 'object' && err !== null && 'message' in err) return String((err as { message: unknown }).message);
  return String(err);
}
