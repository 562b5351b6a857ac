import { spawnSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import type { Writable } from 'node:stream';
import type { V1Status } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  EXIT_TRAILER,
  KubeExecTransport,
  outcomeError,
  readWrappedOutput,
  STDOUT_END,
  shouldRetry,
  statusToExit,
  wrappedArgv,
  type ExecClient,
} from '../../../activities/exec/kube-exec.js';
import { ExecTransportError, type ExecTarget } from '../../../activities/exec/transport.js';

const target: ExecTarget = { namespace: 'weka', pod: 'drive-0' };

describe('statusToExit', () => {
  it('maps Success to exit code 0', () => {
    expect(statusToExit({ status: 'Success' })).toEqual({ exitCode: 0 });
  });

  it('maps a NonZeroExitCode failure to the code in its ExitCode cause', () => {
    const status: V1Status = {
      status: 'Failure',
      reason: 'NonZeroExitCode',
      message: 'command terminated with non-zero exit code: error executing command [weka], exit code 65',
      details: { causes: [{ reason: 'ExitCode', message: '65' }] },
    };
    expect(statusToExit(status)).toEqual({ exitCode: 65 });
  });

  it('reads the exit code that kwok reports only in an InternalError message', () => {
    const status: V1Status = {
      status: 'Failure',
      reason: 'InternalError',
      message: 'Internal error occurred: error executing command in container: cmd wait: sh -c exit 3: exit status 3',
      code: 500,
    };
    expect(statusToExit(status)).toEqual({ exitCode: 3 });
    expect(statusToExit({ ...status, reason: 'BadRequest' })).toHaveProperty('startFailure');
  });

  it('treats a failure without an exit code as a command that never started', () => {
    const status: V1Status = {
      status: 'Failure',
      reason: 'InternalError',
      message: 'executable file not found in $PATH',
    };
    expect(statusToExit(status)).toEqual({ startFailure: 'executable file not found in $PATH' });
    expect(
      statusToExit({ status: 'Failure', details: { causes: [{ reason: 'ExitCode', message: 'x' }] } }),
    ).toHaveProperty('startFailure');
  });
});

describe('retry decisions', () => {
  it('retries a connection that never opened, up to the attempt limit', () => {
    expect(shouldRetry({ kind: 'connect-failed', message: 'ECONNRESET' }, 1, 3)).toBe(true);
    expect(shouldRetry({ kind: 'connect-failed', message: 'ECONNRESET' }, 3, 3)).toBe(false);
    // A 403 on the upgrade is the apiserver refusing the exec: asking again changes nothing.
    expect(shouldRetry({ kind: 'connect-failed', message: 'Unexpected server response: 403' }, 1, 3)).toBe(false);
    const forbidden = outcomeError(
      { kind: 'connect-failed', message: 'Unexpected server response: 403' },
      'ns/pod: weka',
      1,
    );
    expect(forbidden.name).toBe('ExecForbidden');
    expect(forbidden.commandMayHaveRun).toBe(false);
    // A 404, after every attempt, is a pod that is not there: the exec cannot bring it back.
    const missing = outcomeError({ kind: 'connect-failed', message: 'Unexpected server response: 404' }, 'x', 3);
    expect(missing.name).toBe('ExecPodMissing');
    expect(missing.message).toContain('the pod does not exist');
    expect(missing.commandMayHaveRun).toBe(false);
    expect(outcomeError({ kind: 'connect-failed', message: 'ECONNREFUSED' }, 'x', 3).name).toBe('ExecTransportError');
  });

  it('does not retry once the command may have run', () => {
    expect(shouldRetry({ kind: 'dropped', sawOutput: true }, 1, 3, true)).toBe(false);
    expect(shouldRetry({ kind: 'timeout' }, 1, 3)).toBe(false);
    expect(shouldRetry({ kind: 'start-failed', message: 'x' }, 1, 3)).toBe(false);
    expect(shouldRetry({ kind: 'completed', result: { stdout: '', stderr: '', exitCode: 75 } }, 1, 3)).toBe(false);
  });

  it('retries an early drop with no output only when the caller opted in', () => {
    expect(shouldRetry({ kind: 'dropped', sawOutput: false }, 1, 3)).toBe(false);
    expect(shouldRetry({ kind: 'dropped', sawOutput: false }, 1, 3, true)).toBe(true);
  });
});

/** A stand-in websocket: close() emits 'close' as ws does. */
class FakeSocket extends EventEmitter {
  readonly CLOSED = 3;
  readyState = 1;
  closed = false;
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.readyState = this.CLOSED;
    setImmediate(() => this.emit('close'));
  }
}

type Script = (io: { stdout: Writable; stderr: Writable; status: (s: V1Status) => void; socket: FakeSocket }) => void;

/** An ExecClient that plays one script per attempt; a script of 'refuse' fails the handshake. */
function fakeClient(
  scripts: Array<Script | 'refuse'>,
): ExecClient & { calls: Array<{ container: string; command: string[] }> } {
  const calls: Array<{ container: string; command: string[] }> = [];
  return {
    calls,
    exec: (async (
      _ns: string,
      _pod: string,
      container: string,
      command: string | string[],
      stdout: Writable,
      stderr: Writable,
      _stdin: unknown,
      _tty: boolean,
      status: (s: V1Status) => void,
    ) => {
      calls.push({ container, command: command as string[] });
      const script = scripts[calls.length - 1];
      if (!script || script === 'refuse') throw new Error('Unexpected server response: 503');
      const socket = new FakeSocket();
      setImmediate(() => script({ stdout, stderr, status, socket }));
      return socket;
    }) as unknown as ExecClient['exec'],
  };
}

/** What client-node does when the status frame arrives: end both streams, report, close. */
function finish(io: Parameters<Script>[0], status: V1Status): void {
  io.stdout.end();
  io.stderr.end();
  io.status(status);
  io.socket.close();
}

/** The wrapped command exits with `code`: the wrapper's end lines, then the status for it. */
function exit(io: Parameters<Script>[0], code: number): void {
  io.stdout.write(Buffer.from(`\n${STDOUT_END}\n`));
  io.stderr.write(Buffer.from(`\n${EXIT_TRAILER}${code}\n`));
  finish(
    io,
    code === 0
      ? { status: 'Success' }
      : {
          status: 'Failure',
          reason: 'NonZeroExitCode',
          details: { causes: [{ reason: 'ExitCode', message: `${code}` }] },
        },
  );
}

const noSleep = async () => undefined;

describe('KubeExecTransport', () => {
  it('collects stdout and stderr and returns the exit code from the status', async () => {
    const client = fakeClient([
      (io) => {
        io.stdout.write(Buffer.from('{"ok":'));
        io.stdout.write(Buffer.from('true}'));
        io.stderr.write(Buffer.from('warning'));
        exit(io, 65);
      },
    ]);
    const result = await new KubeExecTransport(client).run({ ...target, container: 'weka' }, [
      'weka',
      'cluster',
      'list',
      '--json',
    ]);
    expect(result).toEqual({ stdout: '{"ok":true}', stderr: 'warning', exitCode: 65 });
    expect(client.calls).toEqual([{ container: 'weka', command: wrappedArgv(['weka', 'cluster', 'list', '--json']) }]);
  });

  it('retries when the connection fails before the command started', async () => {
    const client = fakeClient(['refuse', 'refuse', (io) => exit(io, 0)]);
    const result = await new KubeExecTransport(client, { sleep: noSleep }).run(target, ['true']);
    expect(result.exitCode).toBe(0);
    expect(client.calls).toHaveLength(3);
    expect(client.calls[0]!.container).toBe('');
  });

  it('backs off exponentially between connection attempts, capped at 5 s', async () => {
    const delays: number[] = [];
    const sleep = async (ms: number) => void delays.push(ms);
    const succeedAfter = (refusals: number) =>
      fakeClient([...Array<'refuse'>(refusals).fill('refuse'), (io) => exit(io, 0)]);
    await new KubeExecTransport(succeedAfter(3), { sleep, maxAttempts: 4 }).run(target, ['true']);
    expect(delays).toEqual([200, 400, 800]);
    delays.length = 0;
    await new KubeExecTransport(succeedAfter(4), { sleep, maxAttempts: 5, backoffMs: 1_500 }).run(target, ['true']);
    expect(delays).toEqual([1_500, 3_000, 5_000, 5_000]);
  });

  it('gives up after the attempt limit with a connect error', async () => {
    const client = fakeClient(['refuse', 'refuse', 'refuse', 'refuse']);
    const run = new KubeExecTransport(client, { sleep: noSleep, maxAttempts: 3 }).run(target, ['true']);
    await expect(run).rejects.toMatchObject({ kind: 'connect', commandMayHaveRun: false });
    expect(client.calls).toHaveLength(3);
  });

  it('does not re-run a command whose stream dropped after output arrived', async () => {
    const client = fakeClient([
      (io) => {
        io.stdout.write(Buffer.from('partial'));
        io.socket.close();
      },
      (io) => exit(io, 0),
    ]);
    const run = new KubeExecTransport(client, { sleep: noSleep, retryEarlyDrops: true }).run(target, [
      'weka-sign-drive',
      'virtual',
      'add',
    ]);
    await expect(run).rejects.toMatchObject({ kind: 'dropped', commandMayHaveRun: true });
    expect(client.calls).toHaveLength(1);
  });

  it('by default does not re-run a command whose stream dropped before any output', async () => {
    const client = fakeClient([(io) => io.socket.close(), (io) => exit(io, 0)]);
    await expect(new KubeExecTransport(client, { sleep: noSleep }).run(target, ['x'])).rejects.toBeInstanceOf(
      ExecTransportError,
    );
    expect(client.calls).toHaveLength(1);
  });

  it('re-runs after an early drop when the caller opted in', async () => {
    const client = fakeClient([(io) => io.socket.close(), (io) => exit(io, 0)]);
    const result = await new KubeExecTransport(client, { sleep: noSleep, retryEarlyDrops: true }).run(target, ['x']);
    expect(result.exitCode).toBe(0);
    expect(client.calls).toHaveLength(2);
  });

  it('reports a Success without the exit trailer as a command that may have run', async () => {
    // What the apiserver says when the kubelet goes away mid-exec: Success, and nothing else.
    const silent = fakeClient([(io) => finish(io, { status: 'Success' })]);
    await expect(new KubeExecTransport(silent).run(target, ['weka'])).rejects.toMatchObject({
      kind: 'dropped',
      commandMayHaveRun: true,
    });
    const cut = fakeClient([
      (io) => {
        io.stdout.write(Buffer.from('{"partial'));
        finish(io, { status: 'Success' });
      },
    ]);
    await expect(new KubeExecTransport(cut).run(target, ['weka'])).rejects.toThrow(/after output arrived/);
    // The exit trailer came, but stdout stopped short of its end line: output is missing.
    const short = fakeClient([
      (io) => {
        io.stdout.write(Buffer.from('{"partial'));
        io.stderr.write(Buffer.from(`\n${EXIT_TRAILER}0\n`));
        finish(io, { status: 'Success' });
      },
    ]);
    await expect(new KubeExecTransport(short).run(target, ['weka'])).rejects.toMatchObject({ kind: 'dropped' });
  });

  it('reads the exit code from the trailer even when the status names none', async () => {
    const client = fakeClient([
      (io) => {
        io.stdout.write(Buffer.from(`[]\n${STDOUT_END}\n`));
        io.stderr.write(Buffer.from(`\n${EXIT_TRAILER}0\n`));
        finish(io, { status: 'Failure', reason: 'InternalError', message: 'error copying output' });
      },
    ]);
    expect(await new KubeExecTransport(client).run(target, ['weka'])).toEqual({
      stdout: '[]',
      stderr: '',
      exitCode: 0,
    });
  });

  it('reports a failure status without the end lines, after output, as a command that may have run', async () => {
    const client = fakeClient([
      (io) => {
        io.stdout.write(Buffer.from('{"partial'));
        finish(io, { status: 'Failure', reason: 'InternalError', message: 'connection reset' });
      },
    ]);
    await expect(new KubeExecTransport(client).run(target, ['weka'])).rejects.toMatchObject({
      kind: 'dropped',
      commandMayHaveRun: true,
    });
  });

  it('reports a command the shell could not find as one that never started', async () => {
    const client = fakeClient([
      (io) => {
        io.stderr.write(Buffer.from('weka-drives-exec: 1: weka: not found'));
        exit(io, 127);
      },
    ]);
    await expect(new KubeExecTransport(client).run(target, ['weka'])).rejects.toMatchObject({
      kind: 'start',
      commandMayHaveRun: false,
      message: expect.stringContaining('weka: not found'),
    });
  });

  it('closes the websocket and rejects when the timeout passes', async () => {
    let socket: FakeSocket | undefined;
    const client = fakeClient([
      (io) => {
        socket = io.socket;
      },
    ]);
    await expect(new KubeExecTransport(client).run(target, ['sleep', '60'], { timeoutMs: 100 })).rejects.toMatchObject({
      kind: 'timeout',
      commandMayHaveRun: true,
    });
    expect(socket?.closed).toBe(true);
  });

  it('reports a command the runtime could not start', async () => {
    const client = fakeClient([
      (io) => finish(io, { status: 'Failure', reason: 'InternalError', message: 'executable file not found' }),
    ]);
    await expect(new KubeExecTransport(client).run(target, ['weka'])).rejects.toMatchObject({
      kind: 'start',
      commandMayHaveRun: false,
    });
  });

  it('closes the websocket when the signal aborts', async () => {
    let socket: FakeSocket | undefined;
    const client = fakeClient([
      (io) => {
        socket = io.socket;
      },
    ]);
    const controller = new AbortController();
    const run = new KubeExecTransport(client).run(target, ['sleep', '60'], { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    await expect(run).rejects.toMatchObject({ kind: 'aborted' });
    expect(socket?.closed).toBe(true);
  });
});

describe("the wrapper's end lines", () => {
  const end = `\n${STDOUT_END}\n`;
  it('are read off the end of each stream, which is handed back without them', () => {
    expect(readWrappedOutput(end, `\n${EXIT_TRAILER}0\n`)).toEqual({ exitCode: 0, stdout: '', stderr: '' });
    expect(readWrappedOutput(`{"a":1}\n${end}`, `refused: in use\n\n${EXIT_TRAILER}65\n`)).toEqual({
      exitCode: 65,
      stdout: '{"a":1}\n',
      stderr: 'refused: in use\n',
    });
    expect(readWrappedOutput(`no newline${end}`, `no newline\n${EXIT_TRAILER}3\n`)).toEqual({
      exitCode: 3,
      stdout: 'no newline',
      stderr: 'no newline',
    });
  });

  it('are missing when either is not the last line, or is cut short', () => {
    const trailer = `\n${EXIT_TRAILER}0\n`;
    expect(readWrappedOutput('', '')).toBeUndefined();
    expect(readWrappedOutput(end, '')).toBeUndefined();
    expect(readWrappedOutput('', trailer)).toBeUndefined();
    expect(readWrappedOutput(`${end}more`, trailer)).toBeUndefined();
    expect(readWrappedOutput(`\n${STDOUT_END}`, trailer)).toBeUndefined();
    expect(readWrappedOutput(end, `${trailer}more`)).toBeUndefined();
    expect(readWrappedOutput(end, `\n${EXIT_TRAILER}`)).toBeUndefined();
    expect(readWrappedOutput(end, `\n${EXIT_TRAILER}1`)).toBeUndefined();
    expect(readWrappedOutput(end, `${EXIT_TRAILER}0\n`)).toBeUndefined();
  });

  it('come from a wrapper that hands every argument to the command unparsed, and keeps its exit code', () => {
    const args = ['a b', '$(echo injected)', ';', '*', "'", '"', '\\n', ''];
    const [shell, ...rest] = wrappedArgv([
      'sh',
      '-c',
      'printf "%s|" "$@"; echo; echo oops >&2; exit 7',
      'inner',
      ...args,
    ]);
    const ran = spawnSync(shell!, rest, { encoding: 'utf8' });
    expect(ran.status).toBe(7);
    expect(readWrappedOutput(ran.stdout, ran.stderr)).toEqual({
      exitCode: 7,
      stdout: `${args.join('|')}|\n`,
      stderr: 'oops\n',
    });
  });
});
