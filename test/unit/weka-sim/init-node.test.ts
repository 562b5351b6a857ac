import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { changesOfKind, expectOk, nodeDir, listedDrive, signedNode, sim, simRoot } from './helpers.js';

describe('weka-sim init-node', () => {
  it('creates one header file per device, named from the device path', async () => {
    const state = nodeDir(await simRoot(), 'node-1');
    await expectOk(
      sim(
        '--state',
        state,
        'init-node',
        '--device',
        '/dev/nvme0n1:3840:TLC',
        '--device',
        '/dev/disk/by-id/nvme-x:100:QLC:SERIAL1',
      ),
    );
    expect((await readdir(join(state, 'devices'))).sort()).toEqual(['disk%2Fby-id%2Fnvme-x.json', 'nvme0n1.json']);
    expect(await listedDrive(state, '/dev/disk/by-id/nvme-x')).toMatchObject({
      serial: 'SERIAL1',
      capacityGiB: 100,
      type: 'QLC',
      signature: 'none',
      physicalUUID: null,
    });
  });

  it('generates the same serial for the same node and path, and different ones otherwise', async () => {
    const root = await simRoot();
    const serials = [];
    for (const node of ['node-1', 'node-2']) {
      await expectOk(
        sim(
          '--state',
          nodeDir(root, node),
          'init-node',
          '--device',
          '/dev/nvme0n1:1:TLC',
          '--device',
          '/dev/nvme1n1:1:TLC',
        ),
      );
      serials.push(
        (await listedDrive(nodeDir(root, node), '/dev/nvme0n1')).serial,
        (await listedDrive(nodeDir(root, node), '/dev/nvme1n1')).serial,
      );
    }
    expect(new Set(serials).size).toBe(4);
    const again = nodeDir(await simRoot(), 'node-1');
    await expectOk(sim('--state', again, 'init-node', '--device', '/dev/nvme0n1:1:TLC'));
    expect((await listedDrive(again, '/dev/nvme0n1')).serial).toBe(serials[0]);
  });

  it('is idempotent: re-running leaves existing devices, signatures included, alone and adds new ones', async () => {
    const root = await simRoot();
    const state = await signedNode(root);
    const before = await listedDrive(state, '/dev/nvme0n1');
    const out = await expectOk(
      sim('--state', state, 'init-node', '--device', '/dev/nvme0n1:1000:TLC', '--device', '/dev/nvme2n1:500:TLC'),
    );
    expect(out.stdout).toContain('/dev/nvme0n1: unchanged');
    expect(await listedDrive(state, '/dev/nvme0n1')).toEqual(before);
    expect(await listedDrive(state, '/dev/nvme2n1')).toMatchObject({ capacityGiB: 500 });
    expect(await changesOfKind(state, 'device-init')).toBe(3);
  });

  it('refuses to redefine an existing device, changing nothing', async () => {
    const state = await signedNode(await simRoot());
    const result = await sim(
      '--state',
      state,
      'init-node',
      '--device',
      '/dev/nvme9n1:1:TLC',
      '--device',
      '/dev/nvme0n1:2000:TLC',
    );
    expect(result.exitCode).toBe(65);
    expect(result.stderr).toContain('refusing to redefine');
    expect((await sim('--state', state, '--', 'weka-sign-drive', 'show', '/dev/nvme9n1')).exitCode).toBe(65);
  });

  it.each([
    ['no devices', []],
    ['a missing type', ['--device', '/dev/nvme0n1:100']],
    ['an unknown type', ['--device', '/dev/nvme0n1:100:MLC']],
    ['a zero capacity', ['--device', '/dev/nvme0n1:0:TLC']],
    ['a bad path', ['--device', '/tmp/x:1:TLC']],
    ['the same device twice', ['--device', '/dev/nvme0n1:1:TLC', '--device', '/dev/nvme0n1:1:TLC']],
  ])('rejects %s as a usage error', async (_why, args) => {
    const result = await sim('--state', nodeDir(await simRoot(), 'n'), 'init-node', ...args);
    expect(result.exitCode).toBe(64);
  });

  it('requires --state before the command', async () => {
    const result = await sim('init-node', '--device', '/dev/nvme0n1:1:TLC');
    expect(result.exitCode).toBe(64);
    expect(result.stderr).toContain('--state DIR is required');
  });
});
