// Runs the command as a local child process (no shell). The pod target is not a place here; an
// optional mapping turns it into the process's environment and working directory, e.g. to point
// the simulator shims at the state directory of the pod's node.
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import {
  DEFAULT_EXEC_TIMEOUT_MS,
  describeExec,
  ExecTransportError,
  type ExecOptions,
  type ExecResult,
  type ExecTarget,
  type ExecTransport,
} from './transport.js';

export interface LocalPlacement {
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
}

export interface LocalExecOptions {
  readonly resolveTarget?: (target: ExecTarget) => LocalPlacement;
  readonly defaultTimeoutMs?: number;
}

export class LocalExecTransport implements ExecTransport {
  constructor(private readonly options: LocalExecOptions = {}) {}

  run(target: ExecTarget, argv: readonly string[], opts: ExecOptions = {}): Promise<ExecResult> {
    const what = describeExec(target, argv);
    const [command, ...args] = argv;
    if (command === undefined) return Promise.reject(new ExecTransportError('start', `${what}: empty argv`, false));
    if (opts.signal?.aborted)
      return Promise.reject(new ExecTransportError('aborted', `${what}: aborted before start`, false));
    const placement = this.options.resolveTarget?.(target) ?? {};
    const timeoutMs = opts.timeoutMs ?? this.options.defaultTimeoutMs ?? DEFAULT_EXEC_TIMEOUT_MS;

    return new Promise((resolve, reject) => {
      // detached: the child leads its own process group, so a timeout kills anything it spawned.
      const child = spawn(command, args, {
        cwd: placement.cwd,
        env: { ...process.env, ...placement.env },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
      const stdout: Buffer[] = [];
      const stderr: Buffer[] = [];
      child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
      child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
      let stopped: ExecTransportError | undefined;
      let settled = false;

      const stop = (why: ExecTransportError) => {
        stopped ??= why;
        try {
          if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      };
      const timer = setTimeout(
        () => stop(new ExecTransportError('timeout', `${what}: timed out after ${timeoutMs} ms`, true)),
        timeoutMs,
      );
      const onAbort = () => stop(new ExecTransportError('aborted', `${what}: aborted`, true));
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      const settle = (fn: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        fn();
      };

      child.on('error', (err) =>
        settle(() => reject(new ExecTransportError('start', `${what}: ${err.message}`, false))),
      );
      child.on('close', (code, signal) =>
        settle(() => {
          if (stopped) return reject(stopped);
          resolve({
            stdout: Buffer.concat(stdout).toString('utf8'),
            stderr: Buffer.concat(stderr).toString('utf8'),
            exitCode: code ?? signalExitCode(signal),
          });
        }),
      );
    });
  }
}

/** A process killed by a signal reports 128 + the signal number, as shells and kubelets do. */
export function signalExitCode(signal: NodeJS.Signals | null): number {
  return 128 + (signal ? constants.signals[signal] : 0);
}
