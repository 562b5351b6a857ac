import { describe, expect, it } from 'vitest';
import { deviceShapeArgs } from '../../../deploy/local/weka-sim/device-shape.js';
import { createdDevices } from '../../../deploy/local/weka-sim/init-node.js';
import { initNodeDevices } from '../../../deploy/local/weka-sim/node-devices.js';
import type { SimResult } from '../../../deploy/local/weka-sim/outcome.js';
import {
  CLUSTER_A,
  deviceFiles,
  expectOk,
  lsblkJson,
  nodeDir,
  readLog,
  rootDiskNode,
  shape,
  listedDrive,
  signedNode,
  sim,
  simRoot,
  tool,
} from './helpers.js';

describe('weka-sim device (shaping a device as a node admin would)', () => {
  it('gives a disk its model and partitions, logs the shape, and lsblk shows it', async () => {
    const state = await rootDiskNode(await simRoot());
    const [entry] = (await readLog(state)).filter((e) => e.argv[0] === 'device');
    expect(entry!.changes).toEqual([
      {
        kind: 'device-shape',
        device: '/dev/sda',
        model: 'SIM SATA SSD',
        vendor: 'SIM',
        partitions: [
          { name: '/dev/sda1', fstype: 'vfat', mountpoint: '/boot/efi' },
          { name: '/dev/sda2', fstype: 'ext4', mountpoint: '/' },
          { name: '/dev/sda3', fstype: 'swap', mountpoint: '[SWAP]' },
        ],
        fstype: null,
        mountpoint: null,
        holders: [],
        dataPresent: false,
        clusterGUID: null,
      },
    ]);
    expect(await lsblkJson(state, '-J', '-o', 'NAME,MODEL,MOUNTPOINT', '/dev/sda')).toEqual([
      {
        name: 'sda',
        model: 'SIM SATA SSD',
        mountpoint: null,
        children: [
          { name: 'sda1', model: null, mountpoint: '/boot/efi' },
          { name: 'sda2', model: null, mountpoint: '/' },
          { name: 'sda3', model: null, mountpoint: '[SWAP]' },
        ],
      },
    ]);
  });

  it('answers each change with the whole new shape, and "unchanged" when nothing changes', async () => {
    const state = await signedNode(await simRoot());
    const steps: Array<[string[], string]> = [
      [
        ['--partition', '/dev/nvme1n1p2:xfs', '--partition', '/dev/nvme1n1p1'],
        '/dev/nvme1n1: model "SIM NVMe QLC", vendor "SIM"; partitions /dev/nvme1n1p1, /dev/nvme1n1p2 xfs; empty',
      ],
      [
        ['--partition', '/dev/nvme1n1p1:ext4:/mnt/a b'],
        '/dev/nvme1n1: model "SIM NVMe QLC", vendor "SIM"; partitions /dev/nvme1n1p1 ext4 on /mnt/a b, /dev/nvme1n1p2 xfs; empty',
      ],
      [
        ['--partition=/dev/nvme1n1p1:ext4:/mnt/a b'],
        '/dev/nvme1n1: unchanged (model "SIM NVMe QLC", vendor "SIM"; partitions /dev/nvme1n1p1 ext4 on /mnt/a b, /dev/nvme1n1p2 xfs; empty)',
      ],
      [
        ['--clear-partitions', '--fstype', 'xfs', '--mountpoint', '/data', '--vendor', 'ACME', '--model', 'X 1'],
        '/dev/nvme1n1: model "X 1", vendor "ACME"; filesystem xfs on /data; empty',
      ],
      [
        ['--no-mountpoint', '--no-fstype', '--data'],
        '/dev/nvme1n1: model "X 1", vendor "ACME"; no partitions; holds data',
      ],
      [['--no-data'], '/dev/nvme1n1: model "X 1", vendor "ACME"; no partitions; empty'],
      [['--model', 'Y'], '/dev/nvme0n1: model "Y", vendor "SIM"; Weka partition (proxy); empty'],
    ];
    for (const [args, stdout] of steps) {
      const device = stdout.slice(0, stdout.indexOf(':'));
      const result = await expectOk(shape(state, device, ...args));
      expect(result.stdout).toBe(`${stdout}\n`);
    }
    const shapes = (await readLog(state)).flatMap((e) => e.changes).filter((c) => c.kind === 'device-shape');
    expect(shapes).toHaveLength(steps.length - 1);
  });

  it('builds holders on a disk, which lsblk lists after its partitions, and clears them', async () => {
    const state = await signedNode(await simRoot());
    const held = await expectOk(
      shape(
        state,
        '/dev/nvme1n1',
        '--partition',
        '/dev/nvme1n1p1:ext4',
        '--holder',
        '/dev/mapper/vg0-pvc--1:lvm',
        '--holder=/dev/md0:raid1',
      ),
    );
    expect(held.stdout).toBe(
      '/dev/nvme1n1: model "SIM NVMe QLC", vendor "SIM"; partitions /dev/nvme1n1p1 ext4; empty; held by /dev/mapper/vg0-pvc--1 (lvm), /dev/md0 (raid1)\n',
    );
    // Given again with another type, a holder is replaced, not added.
    await expectOk(shape(state, '/dev/nvme1n1', '--holder', '/dev/mapper/vg0-pvc--1:crypt'));
    expect(await lsblkJson(state, '-Jp', '-o', 'NAME,TYPE,FSTYPE,MOUNTPOINT', '/dev/nvme1n1')).toEqual([
      {
        name: '/dev/nvme1n1',
        type: 'disk',
        fstype: null,
        mountpoint: null,
        children: [
          { name: '/dev/nvme1n1p1', type: 'part', fstype: 'ext4', mountpoint: null },
          { name: '/dev/mapper/vg0-pvc--1', type: 'crypt', fstype: null, mountpoint: null },
          { name: '/dev/md0', type: 'raid1', fstype: null, mountpoint: null },
        ],
      },
    ]);
    // A device signed for Weka can be held too (a mapping is made on any disk): lsblk shows both.
    await expectOk(shape(state, '/dev/nvme0n1', '--holder', '/dev/mapper/linear0:dm'));
    expect((await lsblkJson(state, '-J', '-o', 'NAME,TYPE', '/dev/nvme0n1'))[0]!.children).toEqual([
      { name: 'nvme0n1p1', type: 'part' },
      { name: 'linear0', type: 'dm' },
    ]);
    await expectOk(shape(state, '/dev/nvme1n1', '--clear-holders'));
    expect(await lsblkJson(state, '-Jp', '-o', 'NAME', '/dev/nvme1n1')).toEqual([
      { name: '/dev/nvme1n1', children: [{ name: '/dev/nvme1n1p1' }] },
    ]);
    const shapes = (await readLog(state)).flatMap((e) => e.changes).filter((c) => c.kind === 'device-shape');
    expect(shapes.map((c) => (c as { holders: unknown }).holders)).toEqual([
      [
        { name: '/dev/mapper/vg0-pvc--1', type: 'lvm' },
        { name: '/dev/md0', type: 'raid1' },
      ],
      [
        { name: '/dev/mapper/vg0-pvc--1', type: 'crypt' },
        { name: '/dev/md0', type: 'raid1' },
      ],
      [{ name: '/dev/mapper/linear0', type: 'dm' }],
      [],
    ]);
  });

  it('sets and clears the claiming cluster of an exclusive drive', async () => {
    const state = await signedNode(await simRoot());
    await expectOk(tool(state, 'weka-sign-drive', '--', '/dev/nvme1n1'));
    await expectOk(shape(state, '/dev/nvme1n1', '--cluster-guid', CLUSTER_A.toUpperCase()));
    expect(await listedDrive(state, '/dev/nvme1n1')).toMatchObject({ signature: 'exclusive', clusterGUID: CLUSTER_A });
    await expectOk(shape(state, '/dev/nvme1n1', '--no-cluster-guid'));
    expect(await listedDrive(state, '/dev/nvme1n1')).toMatchObject({ signature: 'exclusive', clusterGUID: null });
  });
});

describe('weka-sim device refusals (exit 65, nothing changed)', () => {
  const refusals: Array<[string, (state: string) => Promise<SimResult | undefined>, string[], string]> = [
    [
      'an unknown device',
      async () => undefined,
      ['/dev/nvme9n1', '--data'],
      '/dev/nvme9n1: no such device on node node-1',
    ],
    [
      'partitions on a device signed for Weka',
      async () => undefined,
      ['/dev/nvme0n1', '--partition', '/dev/nvme0n1p2'],
      '/dev/nvme0n1 carries a Weka partition (proxy); it cannot also have partitions, a filesystem or data',
    ],
    [
      'data on an exclusive device',
      (s) => tool(s, 'weka-sign-drive', '--', '/dev/nvme1n1'),
      ['/dev/nvme1n1', '--data'],
      '/dev/nvme1n1 carries a Weka partition (exclusive); it cannot also have partitions, a filesystem or data',
    ],
    [
      'a filesystem on a disk that has partitions',
      (s) => shape(s, '/dev/nvme1n1', '--partition', '/dev/nvme1n1p1'),
      ['/dev/nvme1n1', '--fstype', 'ext4'],
      '/dev/nvme1n1 cannot have both a filesystem on the disk (ext4) and partitions',
    ],
    [
      'data on a disk with a filesystem',
      (s) => shape(s, '/dev/nvme1n1', '--fstype', 'ext4'),
      ['/dev/nvme1n1', '--data'],
      '/dev/nvme1n1: --data means content with no recognised signature, but it has partitions or a filesystem',
    ],
    [
      'a disk mounted without a filesystem',
      async () => undefined,
      ['/dev/nvme1n1', '--mountpoint', '/data'],
      'cannot mount /dev/nvme1n1 at /data: it has no filesystem',
    ],
    [
      'a partition mounted without a filesystem',
      async () => undefined,
      ['/dev/nvme1n1', '--partition', '/dev/nvme1n1p1::/data'],
      'cannot mount /dev/nvme1n1p1 at /data: it has no filesystem',
    ],
    [
      'swap mounted at a path',
      async () => undefined,
      ['/dev/nvme1n1', '--partition', '/dev/nvme1n1p1:swap:/data'],
      '/dev/nvme1n1p1: only a swap filesystem is used as [SWAP], and swap is never mounted at a path',
    ],
    [
      'ext4 used as swap',
      async () => undefined,
      ['/dev/nvme1n1', '--fstype', 'ext4', '--mountpoint', '[SWAP]'],
      '/dev/nvme1n1: only a swap filesystem is used as [SWAP], and swap is never mounted at a path',
    ],
    [
      'a mountpoint another device has',
      (s) => shape(s, '/dev/nvme1n1', '--partition', '/dev/nvme1n1p1:ext4:/'),
      ['/dev/nvme2n1', '--fstype', 'xfs', '--mountpoint', '/'],
      '/ is already mounted from /dev/nvme1n1',
    ],
    [
      'one mountpoint twice on a disk',
      async () => undefined,
      ['/dev/nvme1n1', '--partition', '/dev/nvme1n1p1:ext4:/a', '--partition', '/dev/nvme1n1p2:xfs:/a'],
      '/a would be mounted twice on /dev/nvme1n1',
    ],
    [
      'a claiming cluster on a drive not signed exclusive',
      async () => undefined,
      ['/dev/nvme0n1', '--cluster-guid', CLUSTER_A],
      '/dev/nvme0n1 is not signed exclusive; only an exclusive drive is claimed by a cluster',
    ],
    [
      'a holder named like another device of the node',
      (s) => sim('--state', s, 'init-node', '--device', '/dev/md0:10:TLC'),
      ['/dev/nvme1n1', '--holder', '/dev/mapper/x:dm', '--holder', '/dev/md0:raid1'],
      '/dev/md0 is a device of node node-1, not a holder of /dev/nvme1n1',
    ],
    [
      'a partition named like another device of the node',
      (s) => sim('--state', s, 'init-node', '--device', '/dev/nvme1n1p1:10:TLC'),
      ['/dev/nvme1n1', '--partition', '/dev/nvme1n1p1'],
      '/dev/nvme1n1p1 is a device of node node-1, not a partition of /dev/nvme1n1',
    ],
  ];

  it.each(refusals)('refuses %s', async (_what, setup, args, message) => {
    const state = await signedNode(await simRoot());
    await expectOk(sim('--state', state, 'init-node', '--device', '/dev/nvme2n1:10:TLC'));
    const prepared = await setup(state);
    if (prepared) await expectOk(prepared);
    const before = await deviceFiles(state);
    const result = await shape(state, ...args);
    expect(result).toEqual({ exitCode: 65, stdout: '', stderr: `device: ${message}\n` });
    expect(await deviceFiles(state)).toEqual(before);
    expect((await readLog(state)).at(-1)).toMatchObject({ argv: ['device', ...args], exitCode: 65, changes: [] });
  });
});

describe('weka-sim device usage errors (exit 64)', () => {
  it.each([
    ['no change asked for', ['/dev/nvme1n1'], 'nothing to change'],
    ['no device', ['--data'], 'expected PATH, got []'],
    ['two devices', ['/dev/nvme1n1', '/dev/nvme0n1', '--data'], 'expected PATH'],
    ['a device path outside /dev', ['/etc/passwd', '--data'], 'invalid device path "/etc/passwd"'],
    ['an unknown option', ['/dev/nvme1n1', '--size', '3'], 'unknown option --size'],
    ['a partition path outside /dev', ['/dev/nvme1n1', '--partition', 'sda1'], 'invalid partition path'],
    [
      "another disk's partition",
      ['/dev/nvme1n1', '--partition', '/dev/sda1'],
      '/dev/sda1 is not a partition name of /dev/nvme1n1 (expected /dev/nvme1n1p1, /dev/nvme1n1p2, ...)',
    ],
    ['a partition without p after a digit', ['/dev/nvme1n1', '--partition', '/dev/nvme1n11'], 'not a partition name'],
    [
      'the same partition twice',
      ['/dev/nvme1n1', '--partition', '/dev/nvme1n1p1', '--partition', '/dev/nvme1n1p1:ext4'],
      'partition /dev/nvme1n1p1 given twice',
    ],
    ['a bad filesystem type', ['/dev/nvme1n1', '--fstype', 'ext 4'], 'invalid filesystem type "ext 4"'],
    [
      'a bad partition filesystem type',
      ['/dev/nvme1n1', '--partition', '/dev/nvme1n1p1:e;x'],
      'invalid filesystem type "e;x"',
    ],
    [
      'a relative mountpoint',
      ['/dev/nvme1n1', '--fstype', 'ext4', '--mountpoint', 'data'],
      'a mountpoint is an absolute path or [SWAP]',
    ],
    [
      '--fstype with --no-fstype',
      ['/dev/nvme1n1', '--fstype', 'ext4', '--no-fstype'],
      '--fstype and --no-fstype contradict each other',
    ],
    [
      '--mountpoint with --no-mountpoint',
      ['/dev/nvme1n1', '--mountpoint', '/a', '--no-mountpoint'],
      'contradict each other',
    ],
    ['--data with --no-data', ['/dev/nvme1n1', '--data', '--no-data'], '--data and --no-data contradict each other'],
    ['an empty model', ['/dev/nvme1n1', '--model', ''], '--model must be 1 to 64 printable ASCII characters'],
    [
      'a vendor with a newline',
      ['/dev/nvme1n1', '--vendor', 'A\nB'],
      '--vendor must be 1 to 64 printable ASCII characters',
    ],
    ['a model of 65 characters', ['/dev/nvme1n1', '--model', 'M'.repeat(65)], '--model must be 1 to 64'],
    ['a cluster GUID that is not a UUID', ['/dev/nvme1n1', '--cluster-guid', 'x'], '--cluster-guid must be a UUID'],
    ['a holder without a type', ['/dev/nvme1n1', '--holder', '/dev/mapper/vg0-lv'], "a device-mapper holder's type"],
    ['an md holder typed lvm', ['/dev/nvme1n1', '--holder', '/dev/md0:lvm'], "an md holder's type is one of raid0"],
    ['a dm holder typed raid1', ['/dev/nvme1n1', '--holder', '/dev/mapper/x:raid1'], "a device-mapper holder's type"],
    [
      'a holder outside /dev/mapper and md',
      ['/dev/nvme1n1', '--holder', '/dev/dm-0:dm'],
      'a holder is /dev/mapper/NAME',
    ],
    [
      'the same holder twice',
      ['/dev/nvme1n1', '--holder', '/dev/md0:raid1', '--holder', '/dev/md0:raid0'],
      'holder /dev/md0 given twice',
    ],
  ])('rejects %s', async (_what, args, message) => {
    const state = await signedNode(await simRoot());
    const result = await shape(state, ...args);
    expect(result.exitCode).toBe(64);
    expect(result.stderr).toContain(message);
  });
});

describe('shaping the devices a fake node starts with', () => {
  it.each([
    [{ path: '/dev/nvme0n1' }, undefined],
    [{ path: '/dev/sda', model: 'SIM SATA', vendor: 'ATA' }, ['/dev/sda', '--model', 'SIM SATA', '--vendor', 'ATA']],
    [
      {
        path: '/dev/sda',
        partitions: [
          { name: '/dev/sda1' },
          { name: '/dev/sda2', fstype: 'ext4' },
          { name: '/dev/sda3', fstype: 'ext4', mountpoint: '/' },
          { name: '/dev/sda4', fstype: null, mountpoint: null },
        ],
      },
      [
        '/dev/sda',
        '--partition',
        '/dev/sda1',
        '--partition',
        '/dev/sda2:ext4',
        '--partition',
        '/dev/sda3:ext4:/',
        '--partition',
        '/dev/sda4',
      ],
    ],
    [
      { path: '/dev/sdb', fstype: 'xfs', mountpoint: '/data' },
      ['/dev/sdb', '--fstype', 'xfs', '--mountpoint', '/data'],
    ],
    [{ path: '/dev/sdb', fstype: null, mountpoint: null, dataPresent: false }, undefined],
    [{ path: '/dev/sdb', dataPresent: true }, ['/dev/sdb', '--data']],
    [
      { path: '/dev/sdb', fstype: 'LVM2_member', holders: [{ name: '/dev/mapper/vg0-pvc--1', type: 'lvm' }] },
      ['/dev/sdb', '--fstype', 'LVM2_member', '--holder', '/dev/mapper/vg0-pvc--1:lvm'],
    ],
  ])('%j gives device arguments %j', (spec, args) => {
    expect(deviceShapeArgs(spec)).toEqual(args);
  });

  it('reads which devices init-node created', () => {
    expect(
      createdDevices(
        '/dev/nvme0n1: unchanged\n/dev/sda: created (480 GiB TLC, serial S)\n/dev/disk/by-id/x: created (1 GiB QLC, serial T)\n',
      ),
    ).toEqual(['/dev/sda', '/dev/disk/by-id/x']);
  });

  it('creates and shapes new devices, and leaves a device that exists alone when the node is added again', async () => {
    const state = nodeDir(await simRoot(), 'node-1');
    const run = async (command: 'init-node' | 'device', args: string[]) =>
      (await expectOk(sim('--state', state, command, ...args))).stdout;
    const devices = [
      { path: '/dev/nvme0n1', capacityGiB: 3840, type: 'TLC' as const, dataPresent: true },
      {
        path: '/dev/sda',
        capacityGiB: 480,
        type: 'TLC' as const,
        model: 'SIM SATA',
        partitions: [{ name: '/dev/sda1', fstype: 'ext4', mountpoint: '/' }],
      },
    ];
    await initNodeDevices(devices, run);
    expect(await lsblkJson(state, '-Jp', '-o', 'NAME,MODEL,FSTYPE,MOUNTPOINT')).toEqual([
      { name: '/dev/nvme0n1', model: 'SIM NVMe TLC', fstype: null, mountpoint: null },
      {
        name: '/dev/sda',
        model: 'SIM SATA',
        fstype: null,
        mountpoint: null,
        children: [{ name: '/dev/sda1', model: null, fstype: 'ext4', mountpoint: '/' }],
      },
    ]);
    await expectOk(tool(state, 'weka-sign-drive', '--allow-non-empty-device', '--', '/dev/nvme0n1'));
    await initNodeDevices(devices, run);
    expect(await listedDrive(state, '/dev/nvme0n1')).toMatchObject({ signature: 'exclusive' });
    expect((await readLog(state)).filter((e) => e.argv[0] === 'device')).toHaveLength(2);
  });
});
