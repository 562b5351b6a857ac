import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CLUSTER_A,
  CLUSTER_B,
  changesOfKind,
  expectOk,
  nodeDir,
  readLog,
  listedDrive,
  signedNode,
  sim,
  simRoot,
  tool,
  UNKNOWN_PHYSICAL_UUID,
  uuid,
  virtualAdd,
} from './helpers.js';

function overcommit(state: string, ...args: string[]) {
  return sim('--state', state, 'overcommit', ...args);
}

const sizes = async (state: string) => (await listedDrive(state, '/dev/nvme0n1')).virtualDrives.map((v) => v.sizeGiB);

describe('weka-sim over-commit mode', () => {
  it('refuses an over-commit by default', async () => {
    const state = await signedNode(await simRoot());
    await expectOk(virtualAdd(state, '/dev/nvme0n1', uuid(1), CLUSTER_A, 600));
    const result = await virtualAdd(state, '/dev/nvme0n1', uuid(2), CLUSTER_B, 500);
    expect(result.exitCode).toBe(65);
    expect(result.stderr).toContain('has 400 GiB left');
    expect(await sizes(state)).toEqual([600]);
  });

  it('in record mode, signs an over-commit and logs by how much the device is over', async () => {
    const state = await signedNode(await simRoot());
    expect((await expectOk(overcommit(state, 'record'))).stdout).toContain('record');
    expect(JSON.parse(await readFile(join(state, 'overcommit.json'), 'utf8'))).toEqual({ mode: 'record' });
    await expectOk(virtualAdd(state, '/dev/nvme0n1', uuid(1), CLUSTER_A, 600));
    await expectOk(virtualAdd(state, '/dev/nvme0n1', uuid(2), CLUSTER_B, 500));
    await expectOk(virtualAdd(state, '/dev/nvme0n1', uuid(3), CLUSTER_B, 50));
    // list reports what is signed, over the capacity: that is what the invariant checker sees.
    expect(await sizes(state)).toEqual([600, 500, 50]);
    const log = await readLog(state);
    expect(log.find((e) => e.argv[0] === 'overcommit')).toMatchObject({
      exitCode: 0,
      changes: [{ kind: 'overcommit-set', mode: 'record' }],
    });
    const adds = log.flatMap((e) => e.changes).filter((c) => c.kind === 'virtual-add');
    // Only the adds beyond the free capacity carry overcommitGiB: used after the add minus capacity.
    expect(adds.map((c) => ('overcommitGiB' in c ? c.overcommitGiB : undefined))).toEqual([undefined, 100, 150]);
  });

  it('in record mode, still refuses everything else', async () => {
    const root = await simRoot();
    const state = await signedNode(root);
    await expectOk(overcommit(state, 'record'));
    await expectOk(virtualAdd(state, '/dev/nvme0n1', uuid(1), CLUSTER_A, 1500));
    const again = await virtualAdd(state, '/dev/nvme0n1', uuid(1), CLUSTER_A, 10);
    expect(again.exitCode).toBe(65);
    expect(again.stderr).toContain('already signed');
    const unsigned = await virtualAdd(state, '/dev/nvme1n1', uuid(2), CLUSTER_A, 5000);
    expect(unsigned.exitCode).toBe(65);
    expect(unsigned.stderr).toContain(`no drive with physical UUID ${UNKNOWN_PHYSICAL_UUID}`);
    await expectOk(tool(state, 'weka-sign-drive', '--', '/dev/nvme1n1'));
    const exclusive = await virtualAdd(state, '/dev/nvme1n1', uuid(2), CLUSTER_A, 5000);
    expect(exclusive.exitCode).toBe(65);
    expect(exclusive.stderr).toContain('not signed for proxy use');
    expect(await changesOfKind(state, 'virtual-add')).toBe(1);
  });

  it('refuses again once switched back to refuse', async () => {
    const state = await signedNode(await simRoot());
    await expectOk(overcommit(state, 'record'));
    await expectOk(virtualAdd(state, '/dev/nvme0n1', uuid(1), CLUSTER_A, 900));
    await expectOk(overcommit(state, 'refuse'));
    expect((await virtualAdd(state, '/dev/nvme0n1', uuid(2), CLUSTER_A, 200)).exitCode).toBe(65);
    expect(await sizes(state)).toEqual([900]);
    expect((await readLog(state)).flatMap((e) => e.changes).filter((c) => c.kind === 'overcommit-set')).toEqual([
      { kind: 'overcommit-set', mode: 'record' },
      { kind: 'overcommit-set', mode: 'refuse' },
    ]);
  });

  it('is set per node', async () => {
    const root = await simRoot();
    const recording = await signedNode(root, 'node-1');
    const other = await signedNode(root, 'node-2');
    await expectOk(overcommit(recording, 'record'));
    await expectOk(virtualAdd(recording, '/dev/nvme0n1', uuid(1), CLUSTER_A, 1200));
    expect((await virtualAdd(other, '/dev/nvme0n1', uuid(2), CLUSTER_A, 1200)).exitCode).toBe(65);
  });

  it.each([
    ['no mode', []],
    ['an unknown mode', ['allow']],
    ['two modes', ['record', 'refuse']],
    ['an option', ['--record']],
  ])('rejects %s with the usage text', async (_why, args) => {
    const state = nodeDir(await simRoot(), 'n');
    const result = await overcommit(state, ...args);
    expect(result.exitCode).toBe(64);
    expect(result.stderr).toContain('weka-sim --state DIR overcommit record');
    expect(result.stderr).toContain('weka-sim --state DIR overcommit refuse');
  });
});
