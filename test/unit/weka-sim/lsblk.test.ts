import { describe, expect, it } from 'vitest';
import { humanSize } from '../../../deploy/local/weka-sim/lsblk.js';
import {
  DISCOVERY_LSBLK,
  HOST_DISCOVERY,
  expectOk,
  lsblkJson,
  nodeDir,
  readLog,
  rootDiskNode,
  sim,
  simRoot,
  tool,
} from './helpers.js';

const GiB = 2 ** 30;
const MiB = 2 ** 20;
const WEKA = '993ec906-b4e2-11e7-a205-a0a8cd3ea1de';

/** The root-disk node with its NVMe drive signed exclusive. */
async function hostNode(): Promise<string> {
  const state = await rootDiskNode(await simRoot());
  await expectOk(tool(state, 'weka-sign-drive', '--', '/dev/nvme0n1'));
  return state;
}

describe('weka-sim lsblk', () => {
  it("answers the reference operator's discovery command as util-linux prints it", async () => {
    const state = await hostNode();
    const result = await expectOk(tool(state, ...HOST_DISCOVERY, ...DISCOVERY_LSBLK));
    expect(result.stdout).toBe(`{
   "blockdevices": [
      {"name":"/dev/nvme0n1", "type":"disk", "mountpoint":null, "serial":"NVME0",
         "children": [
            {"name":"/dev/nvme0n1p1", "type":"part", "mountpoint":null, "serial":null}
         ]
      },
      {"name":"/dev/sda", "type":"disk", "mountpoint":null, "serial":"SATA0",
         "children": [
            {"name":"/dev/sda1", "type":"part", "mountpoint":"/boot/efi", "serial":null},
            {"name":"/dev/sda2", "type":"part", "mountpoint":"/", "serial":null},
            {"name":"/dev/sda3", "type":"part", "mountpoint":"[SWAP]", "serial":null}
         ]
      }
   ]
}
`);
    expect(result.stderr).toBe('');
  });

  it('shows every column, sizes in bytes with -b', async () => {
    const state = await hostNode();
    const partition = Math.floor((480 * GiB - MiB) / 3 / MiB) * MiB;
    const part = (name: string, fstype: string, parttype: string, mountpoint: string) => ({
      name,
      type: 'part',
      size: partition,
      serial: null,
      model: null,
      vendor: null,
      fstype,
      parttype,
      mountpoint,
    });
    expect(
      await lsblkJson(state, '-Jb', '-o', 'NAME,TYPE,SIZE,SERIAL,MODEL,VENDOR,FSTYPE,PARTTYPE,MOUNTPOINT'),
    ).toEqual([
      {
        name: 'nvme0n1',
        type: 'disk',
        size: 7680 * GiB,
        serial: 'NVME0',
        model: 'SIM NVMe TLC',
        vendor: 'SIM',
        fstype: null,
        parttype: null,
        mountpoint: null,
        children: [
          {
            name: 'nvme0n1p1',
            type: 'part',
            size: 7680 * GiB - MiB,
            serial: null,
            model: null,
            vendor: null,
            fstype: null,
            parttype: WEKA,
            mountpoint: null,
          },
        ],
      },
      {
        name: 'sda',
        type: 'disk',
        size: 480 * GiB,
        serial: 'SATA0',
        model: 'SIM SATA SSD',
        vendor: 'SIM',
        fstype: null,
        parttype: null,
        mountpoint: null,
        children: [
          part('sda1', 'vfat', 'c12a7328-f81f-11d2-ba4b-00a0c93ec93b', '/boot/efi'),
          part('sda2', 'ext4', '0fc63daf-8483-4772-8e79-3d69d8477de4', '/'),
          part('sda3', 'swap', '0657fd6d-a4ab-43c4-84e5-0933c84b4f4f', '[SWAP]'),
        ],
      },
    ]);
  });

  it.each([
    [
      'the default columns',
      ['-Jd'],
      [
        { name: 'nvme0n1', size: '7.5T', type: 'disk', mountpoint: null },
        { name: 'sda', size: '480G', type: 'disk', mountpoint: null },
      ],
    ],
    [
      'human sizes',
      ['-J', '-o', 'NAME,SIZE', '/dev/sda'],
      [{ name: 'sda', size: '480G', children: ['sda1', 'sda2', 'sda3'].map((name) => ({ name, size: '160G' })) }],
    ],
    [
      'long options',
      ['--json', '--nodeps', '--paths', '--output', 'NAME'],
      [{ name: '/dev/nvme0n1' }, { name: '/dev/sda' }],
    ],
    [
      'clustered short options, -o joined',
      ['-Jdpb', '-oNAME,SIZE'],
      [
        { name: '/dev/nvme0n1', size: 7680 * GiB },
        { name: '/dev/sda', size: 480 * GiB },
      ],
    ],
    [
      '--output=, column names in any case',
      ['-Jd', '--output=name,Model'],
      [
        { name: 'nvme0n1', model: 'SIM NVMe TLC' },
        { name: 'sda', model: 'SIM SATA SSD' },
      ],
    ],
    [
      '"+" adding to the defaults',
      ['-Jd', '-o', '+SERIAL'],
      [
        { name: 'nvme0n1', size: '7.5T', type: 'disk', mountpoint: null, serial: 'NVME0' },
        { name: 'sda', size: '480G', type: 'disk', mountpoint: null, serial: 'SATA0' },
      ],
    ],
    [
      'a device, with its partitions',
      ['-J', '-o', 'NAME', '/dev/sda'],
      [{ name: 'sda', children: [{ name: 'sda1' }, { name: 'sda2' }, { name: 'sda3' }] }],
    ],
    [
      'partitions and disks, in the order given',
      ['-Jp', '-o', 'NAME,TYPE', '--', '/dev/sda2', '/dev/nvme0n1p1', '/dev/sda'],
      [
        { name: '/dev/sda2', type: 'part' },
        { name: '/dev/nvme0n1p1', type: 'part' },
        {
          name: '/dev/sda',
          type: 'disk',
          children: [
            { name: '/dev/sda1', type: 'part' },
            { name: '/dev/sda2', type: 'part' },
            { name: '/dev/sda3', type: 'part' },
          ],
        },
      ],
    ],
    [
      'a device with -d: no children',
      ['-J', '-d', '-o', 'NAME,PARTTYPE', '/dev/nvme0n1'],
      [{ name: 'nvme0n1', parttype: null }],
    ],
  ])('supports %s', async (_what, args, expected) => {
    const state = await hostNode();
    expect(await lsblkJson(state, ...args)).toEqual(expected);
  });

  it('lists the devices built on a disk among its children, after its partitions, not with -d', async () => {
    const state = await hostNode();
    await expectOk(sim('--state', state, 'init-node', '--device', '/dev/sdb:480:TLC', '--device', '/dev/sdc:480:TLC'));
    // One md array over two disks is a child of each, as util-linux lists it.
    for (const disk of ['/dev/sdb', '/dev/sdc'])
      await expectOk(
        sim('--state', state, 'device', disk, '--fstype', 'linux_raid_member', '--holder', '/dev/md0:raid1'),
      );
    await expectOk(sim('--state', state, 'device', '/dev/sda', '--holder', '/dev/mapper/vg0-pvc--1:lvm'));
    const result = await expectOk(
      tool(state, 'lsblk', '-Jbp', '-o', 'NAME,TYPE,SIZE,FSTYPE,MOUNTPOINT', '/dev/sda', '/dev/sdb', '/dev/sdc'),
    );
    expect(JSON.parse(result.stdout)).toEqual({
      blockdevices: [
        {
          name: '/dev/sda',
          type: 'disk',
          size: 480 * GiB,
          fstype: null,
          mountpoint: null,
          children: [
            ...['/dev/sda1', '/dev/sda2', '/dev/sda3'].map((name) => expect.objectContaining({ name, type: 'part' })),
            { name: '/dev/mapper/vg0-pvc--1', type: 'lvm', size: 480 * GiB - MiB, fstype: null, mountpoint: null },
          ],
        },
        ...['/dev/sdb', '/dev/sdc'].map((name) => ({
          name,
          type: 'disk',
          size: 480 * GiB,
          fstype: 'linux_raid_member',
          mountpoint: null,
          children: [{ name: '/dev/md0', type: 'raid1', size: 480 * GiB - MiB, fstype: null, mountpoint: null }],
        })),
      ],
    });
    expect(await lsblkJson(state, '-J', '-o', 'NAME,TYPE', '/dev/mapper/vg0-pvc--1')).toEqual([
      { name: 'vg0-pvc--1', type: 'lvm' },
    ]);
    expect(await lsblkJson(state, '-Jd', '-o', 'NAME', '/dev/sdb')).toEqual([{ name: 'sdb' }]);
  });

  it('names the Weka partition as the kernel or udev names partitions', async () => {
    const state = nodeDir(await simRoot(), 'node-1');
    const devices = ['/dev/sdb', '/dev/nvme3n1', '/dev/disk/by-id/nvme-x'];
    await expectOk(sim('--state', state, 'init-node', ...devices.flatMap((d) => ['--device', `${d}:10:TLC`])));
    for (const d of devices) await expectOk(tool(state, 'weka-sign-drive', 'sign', 'proxy', d));
    const names = (await lsblkJson(state, '-Jp', '-o', 'NAME', ...devices)).map((d) => d['children']);
    expect(names).toEqual([
      [{ name: '/dev/sdb1' }],
      [{ name: '/dev/nvme3n1p1' }],
      [{ name: '/dev/disk/by-id/nvme-x-part1' }],
    ]);
  });

  it('lists no devices on a node without any', async () => {
    const state = nodeDir(await simRoot(), 'empty');
    await expectOk(sim('--state', state, 'faults', '--clear'));
    expect(await lsblkJson(state, '-J')).toEqual([]);
  });

  it('lists a partial answer with exit 64 when only some devices exist', async () => {
    const state = await hostNode();
    const result = await tool(state, 'lsblk', '-J', '-o', 'NAME', '/dev/nvme7n1', '/dev/sda1');
    expect(result.exitCode).toBe(64);
    expect(result.stderr).toBe('lsblk: /dev/nvme7n1: not a block device\n');
    expect(JSON.parse(result.stdout)).toEqual({ blockdevices: [{ name: 'sda1' }] });
    expect((await readLog(state)).at(-1)).toMatchObject({
      exitCode: 64,
      changes: [],
      message: 'lsblk: /dev/nvme7n1: not a block device',
    });
  });

  it.each([
    ['an unknown column', ['-J', '-o', 'NAME,FOO'], 1, 'lsblk: unknown column: FOO\n'],
    ['an unknown column, as given', ['-J', '-o', '+maj:min'], 1, 'lsblk: unknown column: maj:min\n'],
    ['an empty column', ['-J', '-o', 'NAME,'], 1, 'lsblk: unknown column: \n'],
    ['an unknown device', ['-J', '/dev/x'], 32, 'lsblk: /dev/x: not a block device\n'],
    [
      'unknown devices',
      ['-J', 'sda', '/dev/sdz'],
      32,
      'lsblk: sda: not a block device\nlsblk: /dev/sdz: not a block device\n',
    ],
    ['no -J', ['-p', '-o', 'NAME'], 64, 'lsblk: only JSON output is simulated: pass -J (--json);'],
    ['-n', ['-Jn'], 64, "lsblk: unsupported option -- 'n';"],
    ['--list', ['-J', '--list'], 64, "lsblk: unsupported option '--list';"],
    ['-o without columns', ['-J', '-o'], 64, "lsblk: option requires an argument -- 'o'"],
    ['--output without columns', ['-J', '--output'], 64, "lsblk: option '--output' requires an argument"],
    ['a value for a flag', ['--json=yes'], 64, "lsblk: option '--json' doesn't allow an argument"],
  ])('fails on %s', async (_what, args, exitCode, stderr) => {
    const state = await hostNode();
    const result = await tool(state, 'lsblk', ...args);
    expect(result.exitCode).toBe(exitCode);
    expect(result.stdout).toBe('');
    expect(result.stderr.startsWith(stderr)).toBe(true);
    expect((await readLog(state)).at(-1)).toMatchObject({ argv: ['lsblk', ...args], exitCode, changes: [] });
  });
});

describe('human sizes (util-linux size_to_human_string)', () => {
  it.each([
    [0, '0B'],
    [512, '512B'],
    [1024, '1K'],
    [1536, '1.5K'],
    [480 * GiB, '480G'],
    [1000 * GiB, '1000G'],
    [1024 * GiB - MiB, '1024G'],
    [3840 * GiB, '3.8T'],
    [7680 * GiB, '7.5T'],
    [7680 * GiB - MiB, '7.5T'],
    [30720 * GiB, '30T'],
    [1.04 * GiB, '1G'],
    [1.06 * GiB, '1.1G'],
  ])('%i bytes is %s', (bytes, text) => {
    expect(humanSize(Math.round(bytes))).toBe(text);
  });
});
