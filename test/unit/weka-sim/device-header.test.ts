import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { partitionNumber, partitionPath } from '../../../deploy/local/weka-sim/device-header.js';
import { expectOk, lsblkJson, nodeDir, listedDrive, sim, simRoot, tool } from './helpers.js';

/** A header as the simulator wrote it before devices had a model, partitions or exclusive signatures. */
const OLD_HEADER = {
  devicePath: '/dev/nvme0n1',
  serial: 'OLD1',
  capacityGiB: 100,
  type: 'QLC',
  signature: 'proxy',
  physicalUUID: '00000000-0000-4000-8000-0000000000aa',
  virtualDrives: [],
};

async function nodeWithHeader(header: Record<string, unknown>): Promise<{ state: string; file: string }> {
  const state = nodeDir(await simRoot(), 'node-1');
  await expectOk(sim('--state', state, 'faults', '--clear')); // creates the node's directories
  const file = join(state, 'devices', 'nvme0n1.json');
  await writeFile(file, JSON.stringify(header));
  return { state, file };
}

describe('weka-sim device headers', () => {
  it('loads a header written before the new fields, with their defaults, and leaves the file as it was', async () => {
    const { state, file } = await nodeWithHeader(OLD_HEADER);
    expect(await listedDrive(state, '/dev/nvme0n1')).toMatchObject({
      signature: 'proxy',
      physicalUUID: OLD_HEADER.physicalUUID,
      serial: 'OLD1',
      capacityGiB: 100,
      type: 'QLC',
      virtualDrives: [],
    });
    expect(await lsblkJson(state, '-J', '-o', 'NAME,MODEL,VENDOR,FSTYPE,MOUNTPOINT')).toEqual([
      {
        name: 'nvme0n1',
        model: 'SIM NVMe QLC',
        vendor: 'SIM',
        fstype: null,
        mountpoint: null,
        children: [{ name: 'nvme0n1p1', model: null, vendor: null, fstype: null, mountpoint: null }],
      },
    ]);
    // Reads write nothing back.
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual(OLD_HEADER);
  });

  it('writes every field once a command changes the device', async () => {
    const { state, file } = await nodeWithHeader({ ...OLD_HEADER, signature: 'none', physicalUUID: null });
    await expectOk(tool(state, 'weka-sign-drive', '--', '/dev/nvme0n1'));
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({
      ...OLD_HEADER,
      model: 'SIM NVMe QLC',
      vendor: 'SIM',
      partitions: [],
      fstype: null,
      mountpoint: null,
      holders: [],
      dataPresent: false,
      signature: 'exclusive',
      physicalUUID: expect.stringMatching(/^[0-9a-f-]{36}$/),
      clusterGUID: null,
    });
  });

  it.each([
    ['an unknown signature', { signature: 'shared' }],
    ['a model that is not a string', { model: 7 }],
    ['partitions that are not a list', { partitions: {} }],
    ['a partition without a name', { partitions: [{ fstype: null, mountpoint: null }] }],
    ['a non-boolean dataPresent', { dataPresent: 'yes' }],
    ['holders that are not a list', { holders: '/dev/md0' }],
    ['a holder without a type', { holders: [{ name: '/dev/md0' }] }],
    ['a numeric clusterGUID', { clusterGUID: 1 }],
  ])('calls a header with %s corrupt (exit 70)', async (_what, change) => {
    const { state } = await nodeWithHeader({ ...OLD_HEADER, ...change });
    const result = await tool(state, 'lsblk', '-J');
    expect(result.exitCode).toBe(70);
    expect(result.stderr).toContain('corrupt device header');
  });
});

describe('partition names', () => {
  it.each([
    ['/dev/nvme0n1', 1, '/dev/nvme0n1p1'],
    ['/dev/sda', 1, '/dev/sda1'],
    ['/dev/sdb', 12, '/dev/sdb12'],
    ['/dev/disk/by-id/nvme-x', 2, '/dev/disk/by-id/nvme-x-part2'],
    ['/dev/disk/by-path/pci-0000-nvme-1', 1, '/dev/disk/by-path/pci-0000-nvme-1-part1'],
    ['/dev/vda', 128, '/dev/vda128'],
  ])('partition of %s number %i is %s, and back', (disk, n, name) => {
    expect(partitionPath(disk, n)).toBe(name);
    expect(partitionNumber(disk, name)).toBe(n);
  });

  it.each([
    ['/dev/nvme0n1', '/dev/nvme0n11'],
    ['/dev/nvme0n1', '/dev/nvme0n1p0'],
    ['/dev/sda', '/dev/sdap1'],
    ['/dev/sda', '/dev/sdb1'],
    ['/dev/sda', '/dev/sda'],
    ['/dev/sda', '/dev/sda01'],
    ['/dev/sda', '/dev/sda1x'],
    ['/dev/disk/by-id/nvme-x', '/dev/disk/by-id/nvme-x1'],
  ])('%s has no partition named %s', (disk, name) => {
    expect(partitionNumber(disk, name)).toBeUndefined();
  });
});
