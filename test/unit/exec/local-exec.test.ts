import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalExecTransport, signalExitCode } from '../../../activities/exec/local-exec.js';
import { ExecTransportError, type ExecTarget } from '../../../activities/exec/transport.js';

const target: ExecTarget = { namespace: 'weka', pod: 'drive-0', container: 'weka' };
const node = process.execPath;

async function rejection(promise: Promise<unknown>): Promise<ExecTransportError> {
  try {
    await promise;
  } catch (err) {
    return err as ExecTransportError;
  }
  throw new Error('expected a rejection');
}

describe('LocalExecTransport', () => {
  const transport = new LocalExecTransport();

  it('returns stdout, stderr and the exit code of a finished process', async () => {
    const result = await transport.run(target, [
      node,
      '-e',
      'process.stdout.write("out"); process.stderr.write("err"); process.exit(65)',
    ]);
    expect(result).toEqual({ stdout: 'out', stderr: 'err', exitCode: 65 });
  });

  it('passes argv without a shell, so metacharacters stay literal', async () => {
    const args = ['$(echo pwned)', '; rm -rf /', '`id`', "it's", 'a b'];
    const result = await transport.run(target, [
      node,
      '-e',
      'console.log(JSON.stringify(process.argv.slice(1)))',
      ...args,
    ]);
    expect(JSON.parse(result.stdout)).toEqual(args);
  });

  it('reports a process killed by a signal as 128 + the signal number', async () => {
    const result = await transport.run(target, [node, '-e', 'process.kill(process.pid, "SIGTERM")']);
    expect(result.exitCode).toBe(signalExitCode('SIGTERM'));
    expect(result.exitCode).toBe(143);
  });

  it('kills the process and rejects with a timeout that says the command may have run', async () => {
    const started = Date.now();
    const error = await rejection(
      transport.run(target, [node, '-e', 'setTimeout(() => {}, 60_000)'], { timeoutMs: 200 }),
    );
    expect(error).toBeInstanceOf(ExecTransportError);
    expect(error).toMatchObject({ kind: 'timeout', commandMayHaveRun: true });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('kills grandchildren too on timeout, so their open pipes do not hold the call', async () => {
    const started = Date.now();
    const script =
      'require("child_process").spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "inherit" }); setTimeout(() => {}, 60000)';
    const error = await rejection(transport.run(target, [node, '-e', script], { timeoutMs: 300 }));
    expect(error.kind).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('rejects with a start failure when the executable does not exist', async () => {
    const error = await rejection(transport.run(target, ['/nonexistent/weka-sign-drive', 'show']));
    expect(error).toMatchObject({ kind: 'start', commandMayHaveRun: false });
    expect(error.message).toContain('weka/drive-0/weka');
  });

  it('rejects an empty argv and an already aborted signal without starting anything', async () => {
    expect((await rejection(transport.run(target, []))).kind).toBe('start');
    const error = await rejection(transport.run(target, [node, '-e', ''], { signal: AbortSignal.abort() }));
    expect(error).toMatchObject({ kind: 'aborted', commandMayHaveRun: false });
  });

  it('stops the process when the signal aborts', async () => {
    const controller = new AbortController();
    const pending = transport.run(target, [node, '-e', 'setTimeout(() => {}, 60_000)'], { signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    expect((await rejection(pending)).kind).toBe('aborted');
  });

  it('maps the target to the environment and working directory of the process', async () => {
    const dir = await realpath(await mkdtemp(join(tmpdir(), 'local-exec-')));
    try {
      const mapped = new LocalExecTransport({
        resolveTarget: (t) => ({ env: { WEKA_SIM_STATE: `/sim/nodes/${t.pod}` }, cwd: dir }),
      });
      const result = await mapped.run(target, [
        node,
        '-e',
        'console.log(process.env.WEKA_SIM_STATE + " " + process.cwd())',
      ]);
      expect(result.stdout.trim()).toBe(`/sim/nodes/drive-0 ${dir}`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
