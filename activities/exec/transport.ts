// Running a command "in a pod": the operator's only way to reach weka-sign-drive and weka. Two
// implementations: kube-exec.ts (the Kubernetes exec API, production and the local control plane)
// and local-exec.ts (a local process, for unit tests).

/** The container a command runs in. Without `container`, the pod's default container. */
export interface ExecTarget {
  readonly namespace: string;
  readonly pod: string;
  readonly container?: string;
}

export interface ExecOptions {
  /** Give up after this long; the command may still have run (see ExecTransportError). */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

/** A command that ran to completion, whatever its exit code. */
export interface ExecResult {
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: number;
}

export interface ExecTransport {
  /** argv reaches the command as is: no shell parses it. Rejects only with ExecTransportError. */
  run(target: ExecTarget, argv: readonly string[], opts?: ExecOptions): Promise<ExecResult>;
}

export const EXEC_TRANSPORT_ERROR = 'ExecTransportError';

export const DEFAULT_EXEC_TIMEOUT_MS = 60_000;

/**
 * connect: no connection to the container (command did not run);
 * start:   connected, but the command did not start: the runtime could not start the wrapper
 *          shell (no such container, no sh), or the shell could not run the command (exit 126/127);
 * dropped: the stream ended without the wrapper's end lines (kube-exec.ts), whatever the status
 *          said (the command may have run);
 * timeout / aborted: we stopped waiting (the command may have run, or may still be running).
 */
export type ExecFailureKind = 'connect' | 'start' | 'dropped' | 'timeout' | 'aborted';

/** No exit code came back. Retryable: the caller's idempotency probe settles what happened. */
export class ExecTransportError extends Error {
  override readonly name: string = EXEC_TRANSPORT_ERROR;
  readonly kind: ExecFailureKind;
  /** False only when the command certainly did not run. */
  readonly commandMayHaveRun: boolean;

  constructor(kind: ExecFailureKind, message: string, commandMayHaveRun: boolean) {
    super(message);
    this.kind = kind;
    this.commandMayHaveRun = commandMayHaveRun;
  }
}

export const EXEC_FORBIDDEN = 'ExecForbidden';

/**
 * The apiserver refused the exec itself (403: RBAC, or an admission policy on pods/exec): the
 * command never ran, and asking again changes nothing until an administrator acts. Not retryable.
 */
export class ExecForbiddenError extends ExecTransportError {
  override readonly name: string = EXEC_FORBIDDEN;

  constructor(message: string) {
    super('connect', message, false);
  }
}

export const EXEC_POD_MISSING = 'ExecPodMissing';

/**
 * The apiserver answered the exec with 404, on every attempt: the pod is not there (deleted, or
 * made again under the same name and not running yet). The command never ran, and retrying the
 * exec cannot bring the pod back: whoever runs the step makes the pod again first. Not retryable.
 */
export class ExecPodMissingError extends ExecTransportError {
  override readonly name: string = EXEC_POD_MISSING;

  constructor(message: string) {
    super('connect', message, false);
  }
}

/** "ns/pod[/container]: argv..." for error messages. */
export function describeExec(target: ExecTarget, argv: readonly string[]): string {
  const where = `${target.namespace}/${target.pod}${target.container ? `/${target.container}` : ''}`;
  return `${where}: ${argv.join(' ')}`;
}
