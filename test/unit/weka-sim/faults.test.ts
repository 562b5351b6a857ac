import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { uniform } from '../../../deploy/local/weka-sim/faults.js';
import {
  CLUSTER_A,
  changesOfKind,
  expectOk,
  nodeDir,
  readLog,
  listedDrive,
  signedNode,
  sim,
  simRoot,
  tool,
  uuid,
  virtualAdd,
} from './helpers.js';

function faults(state: string, ...args: string[]) {
  return expectOk(sim('--state', state, 'faults', ...args));
}

describe('weka-sim fault injection', () => {
  it('fails before effect with exit 75 and changes nothing', async () => {
    const state = await signedNode(await simRoot());
    await faults(state, '--fail-rate', '1');
    const result = await virtualAdd(state, '/dev/nvme0n1', uuid(1), CLUSTER_A, 10);
    expect(result.exitCode).toBe(75);
    expect(result.stderr).toContain('simulated failure');
    await faults(state, '--clear');
    expect((await listedDrive(state, '/dev/nvme0n1')).virtualDrives).toEqual([]);
    const failed = (await readLog(state)).find((e) => e.exitCode === 75);
    expect(failed).toMatchObject({ fault: 'fail-before-effect', changes: [] });
  });

  it('fails after effect: the change is made and logged, the caller gets exit 75 and no answer', async () => {
    const state = await signedNode(await simRoot());
    await faults(state, '--fail-after-effect-rate', '1');
    const result = await virtualAdd(state, '/dev/nvme0n1', uuid(1), CLUSTER_A, 10);
    expect(result).toMatchObject({ exitCode: 75, stdout: '' });
    expect(result.stderr).toContain('simulated crash after the change');
    await faults(state, '--clear');
    expect((await listedDrive(state, '/dev/nvme0n1')).virtualDrives).toHaveLength(1);
    expect((await readLog(state)).find((e) => e.exitCode === 75)).toMatchObject({
      fault: 'fail-after-effect',
      changes: [{ kind: 'virtual-add' }],
    });
    // A blind retry is refused: this is why the operator probes before re-running.
    expect((await virtualAdd(state, '/dev/nvme0n1', uuid(1), CLUSTER_A, 10)).exitCode).toBe(65);
    expect(await changesOfKind(state, 'virtual-add')).toBe(1);
  });

  it('lets reads fail too, without effect', async () => {
    const state = await signedNode(await simRoot());
    await faults(state, '--fail-after-effect-rate', '1');
    const result = await tool(state, 'weka-sign-drive', 'list', '-j');
    expect(result).toMatchObject({ exitCode: 75, stdout: '' });
  });

  it('fails the same commands for the same seed, and a rate between 0 and 1 fails some but not all', async () => {
    const root = await simRoot();
    const outcomes: number[][] = [];
    for (const node of ['node-1', 'node-2']) {
      const state = await signedNode(root, node);
      await faults(state, '--fail-rate', '0.5', '--seed', '42');
      const codes: number[] = [];
      for (let i = 0; i < 24; i++) codes.push((await tool(state, 'weka-sign-drive', 'list', '-j')).exitCode);
      outcomes.push(codes);
    }
    expect(outcomes[0]).toEqual(outcomes[1]);
    expect(outcomes[0]).toContain(0);
    expect(outcomes[0]).toContain(75);
  });

  it('draws a different sequence for a different seed', () => {
    const sequence = (seed: number) => Array.from({ length: 16 }, (_, n) => uniform(seed, n) < 0.5);
    expect(sequence(1)).not.toEqual(sequence(2));
    expect(Array.from({ length: 1000 }, (_, n) => uniform(7, n)).every((x) => x >= 0 && x < 1)).toBe(true);
  });

  it('adds the configured latency to each command', async () => {
    const state = await signedNode(await simRoot());
    await faults(state, '--latency-ms', '150');
    const started = Date.now();
    await expectOk(tool(state, 'weka-sign-drive', 'list', '-j'));
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
  });

  it('slows only the commands --latency-for names, by their first words', async () => {
    const state = await signedNode(await simRoot());
    await faults(state, '--latency-ms', '400', '--latency-for', 'weka-sign-drive virtual add');
    const timed = async (...argv: string[]) => {
      const started = Date.now();
      await tool(state, ...argv);
      return Date.now() - started;
    };
    expect(await timed('weka-sign-drive', 'list', '-j')).toBeLessThan(400);
    expect(await timed('weka-sign-drive', 'virtual', 'add', 'not-a-uuid')).toBeGreaterThanOrEqual(400);
  });

  it('lists a command while it sleeps out its latency, and no longer once it has run', async () => {
    const state = await signedNode(await simRoot());
    await faults(state, '--latency-ms', '1500', '--latency-for', 'weka-sign-drive list');
    expect((await faults(state, '--waiting')).stdout).toBe('');
    const slow = tool(state, 'weka-sign-drive', 'list', '-j');
    const listed = async () =>
      (await faults(state, '--waiting')).stdout
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { argv: string[] });
    expect((await listed()).map((w) => w.argv)).toEqual([['weka-sign-drive', 'list', '-j']]);
    await expectOk(slow);
    expect(await listed()).toEqual([]);
  });

  it('keeps settings per state directory and removes them on --clear', async () => {
    const root = await simRoot();
    const state = await signedNode(root, 'node-1');
    const other = await signedNode(root, 'node-2');
    await faults(state, '--fail-rate', '1');
    expect((await tool(other, 'weka-sign-drive', 'list', '-j')).exitCode).toBe(0);
    expect(JSON.parse(await readFile(join(state, 'faults.json'), 'utf8'))).toMatchObject({ failRate: 1, seed: 1 });
    await faults(state, '--clear');
    await expect(access(join(state, 'faults.json'))).rejects.toThrow();
    expect((await tool(state, 'weka-sign-drive', 'list', '-j')).exitCode).toBe(0);
  });

  it.each([
    ['a rate above 1', ['--fail-rate', '1.5']],
    ['a negative latency', ['--latency-ms', '-1']],
    ['a non-numeric rate', ['--fail-rate', 'often']],
    ['nothing to set', []],
    ['--clear with settings', ['--clear', '--fail-rate', '1']],
    ['--latency-for without a latency', ['--latency-for', 'weka']],
    ['an empty --latency-for', ['--latency-ms', '5', '--latency-for', ' ']],
    ['--waiting with settings', ['--waiting', '--latency-ms', '5']],
  ])('rejects %s', async (_why, args) => {
    expect((await sim('--state', nodeDir(await simRoot(), 'n'), 'faults', ...args)).exitCode).toBe(64);
  });
});
