// Child processes of the local control plane: started under supervise.sh in their own process
// group, logged to a file each, and stopped as a group so nothing is left behind.
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync, readFileSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { messageOf } from '../../src/errors.js';

const supervisor = fileURLToPath(new URL('./supervise.sh', import.meta.url));

export interface ServerProcess {
  readonly name: string;
  readonly pid: number;
  readonly logPath: string;
  /** Resolves with the exit code (or signal name) once the process has exited. */
  readonly exited: Promise<number | string>;
  hasExited(): boolean;
  /** SIGTERM to the whole group, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
  /** SIGKILL to the whole group, at once. */
  kill(): Promise<void>;
}

export interface StartOptions {
  name: string;
  command: string;
  args: string[];
  logPath: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

// Last resort for an exit that skips the orderly stop (an uncaught error, process.exit): kill
// every group we started. supervise.sh covers the case where this process is SIGKILLed.
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of live) signalGroup(child, 'SIGKILL');
  });
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // The group is already gone.
  }
}

export function startServer(opts: StartOptions): ServerProcess {
  installExitHook();
  const logFd = openSync(opts.logPath, 'a');
  const child = spawn('bash', [supervisor, opts.command, ...opts.args], {
    stdio: ['pipe', logFd, logFd],
    detached: true,
    env: opts.env ?? process.env,
    cwd: opts.cwd,
  });
  closeSync(logFd);
  if (child.pid === undefined) throw new Error(`could not start ${opts.name} (${opts.command})`);
  live.add(child);
  let done = false;
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => {
      done = true;
      live.delete(child);
      resolve(code ?? signal ?? 'unknown');
    });
  });
  // Keep the event loop free to exit: the pipe stays open until this process ends.
  child.unref();
  (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();

  // The child is unref'd, so waiting for its exit alone would let a script with nothing else to do
  // end (exit code 13, an unsettled await) before the exit is seen: a timer holds the loop meanwhile.
  const untilExited = async (): Promise<void> => {
    const hold = setInterval(() => undefined, 1000);
    try {
      await exited;
    } finally {
      clearInterval(hold);
    }
  };
  const stop = async (graceMs = 10_000): Promise<void> => {
    if (done) return;
    signalGroup(child, 'SIGTERM');
    const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), graceMs);
    await untilExited();
    clearTimeout(timer);
    // The server itself may still be shutting down after the supervisor returned.
    signalGroup(child, 'SIGKILL');
  };
  const kill = async (): Promise<void> => {
    if (done) return;
    signalGroup(child, 'SIGKILL');
    await untilExited();
  };
  return {
    name: opts.name,
    pid: child.pid,
    logPath: opts.logPath,
    exited,
    hasExited: () => done,
    stop,
    kill,
  };
}

/** The last lines of a log, for error messages. */
export function tailLog(path: string, lines = 15): string {
  if (!existsSync(path)) return '(no log)';
  const text = readFileSync(path, 'utf8').trimEnd().split('\n');
  return text.slice(-lines).join('\n');
}

/**
 * Polls `probe` until it returns true, failing with a message that names the server and its log
 * when the deadline passes or the process exits first.
 */
export async function waitUntilReady(
  server: ServerProcess,
  probe: () => Promise<boolean>,
  deadlineMs: number,
): Promise<void> {
  const started = Date.now();
  let lastError = '';
  while (Date.now() - started < deadlineMs) {
    if (server.hasExited()) {
      throw new Error(
        `${server.name} exited during start-up (exit ${String(await server.exited)}); log: ${server.logPath}\n${tailLog(server.logPath)}`,
      );
    }
    try {
      if (await probe()) return;
    } catch (err) {
      lastError = messageOf(err);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(
    `${server.name} was not ready within ${deadlineMs} ms${lastError ? ` (last probe error: ${lastError})` : ''}; log: ${server.logPath}\n${tailLog(server.logPath)}`,
  );
}
