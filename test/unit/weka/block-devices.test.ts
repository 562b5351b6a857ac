import { describe, expect, it } from 'vitest';
import {
  foreignContentOf,
  hasWekaPartition,
  holdersOf,
  listBlockDevicesCall,
  mountsOf,
  parseBlockDevices,
  WEKA_PARTITION_TYPE,
  WekaOutputError,
} from '../../../src/weka/index.js';

const LSBLK = JSON.stringify({
  blockdevices: [
    {
      name: '/dev/sda',
      type: 'disk',
      size: 512110190592,
      serial: 'ROOT1',
      model: 'SIM SATA        ',
      vendor: 'ATA     ',
      fstype: null,
      parttype: null,
      mountpoint: null,
      children: [
        {
          name: '/dev/sda1',
          type: 'part',
          size: 1073741824,
          serial: null,
          model: null,
          vendor: null,
          fstype: 'vfat',
          parttype: 'c12a7328-f81f-11d2-ba4b-00a0c93ec93b',
          mountpoint: '/boot/efi',
        },
        {
          name: '/dev/sda2',
          type: 'part',
          size: '511036448768',
          serial: null,
          model: null,
          vendor: null,
          fstype: 'ext4',
          parttype: '0fc63daf-8483-4772-8e79-3d69d8477de4',
          mountpoint: '/',
        },
      ],
    },
    {
      name: '/dev/nvme0n1',
      type: 'disk',
      size: 4123168604160,
      serial: 'S1',
      model: 'SIM NVMe TLC',
      vendor: null,
      fstype: null,
      parttype: null,
      mountpoint: null,
      children: [
        {
          name: '/dev/nvme0n1p1',
          type: 'part',
          size: 4123168604160,
          serial: null,
          model: null,
          vendor: null,
          fstype: null,
          parttype: WEKA_PARTITION_TYPE,
          mountpoint: null,
        },
      ],
    },
    {
      name: '/dev/nvme1n1',
      type: 'disk',
      size: 0,
      serial: 'S2',
      model: 'x',
      vendor: '',
      fstype: 'xfs',
      parttype: null,
      mountpoint: null,
    },
  ],
});

/**
 * Disks with holders, as util-linux's lsblk prints them: each device the kernel lists in a disk's
 * (or a partition's) /sys/block/.../holders is one of its children, after its partitions, typed by
 * its DM UUID prefix or md level and named /dev/mapper/<name> (device-mapper) with --paths; an
 * array or volume over several disks is a child of each (util-linux lsblk-cmd/lsblk.c,
 * process_dependencies() and get_type(); tests/expected/lsblk/lsblk-simple-lvm-basic shows one
 * LVM volume under each of its four physical volumes).
 */
const HELD = JSON.stringify({
  blockdevices: [
    ...['/dev/sdb', '/dev/sdc'].map((name) => ({
      name,
      type: 'disk',
      size: 480103981056,
      fstype: 'linux_raid_member',
      mountpoint: null,
      children: [{ name: '/dev/md0', type: 'raid1', size: 479968690176, fstype: null, mountpoint: null }],
    })),
    {
      name: '/dev/nvme2n1',
      type: 'disk',
      size: 3840755982336,
      fstype: null,
      mountpoint: null,
      children: [
        { name: '/dev/nvme2n1p1', type: 'part', size: 1073741824, fstype: 'ext4', mountpoint: null },
        {
          name: '/dev/nvme2n1p2',
          type: 'part',
          size: 3839681191936,
          fstype: 'LVM2_member',
          mountpoint: null,
          children: [
            { name: '/dev/mapper/vg0-pvc--1', type: 'lvm', size: 107374182400, fstype: null, mountpoint: null },
            { name: '/dev/mapper/vg0-pvc--2', type: 'lvm', size: 107374182400, fstype: 'xfs', mountpoint: null },
          ],
        },
      ],
    },
  ],
});

describe('lsblk through nsenter', () => {
  it("runs lsblk in the host's mount namespace with JSON, bytes and full paths", () => {
    expect(listBlockDevicesCall().argv).toEqual([
      'nsenter',
      '--mount',
      '--pid',
      '--target',
      '1',
      '--',
      'lsblk',
      '--json',
      '--bytes',
      '--paths',
      '--output',
      'NAME,TYPE,SIZE,SERIAL,MODEL,VENDOR,FSTYPE,PARTTYPE,MOUNTPOINT',
    ]);
  });

  it('reads disks and their partitions, trimming padded values and reading empty ones as null', () => {
    const [root, nvme, xfs] = parseBlockDevices(LSBLK);
    expect(root).toMatchObject({ path: '/dev/sda', type: 'disk', model: 'SIM SATA', vendor: 'ATA', serial: 'ROOT1' });
    expect(root!.children.map((c) => [c.path, c.sizeBytes, c.mountpoint])).toEqual([
      ['/dev/sda1', 1073741824, '/boot/efi'],
      ['/dev/sda2', 511036448768, '/'],
    ]);
    expect(mountsOf(root!)).toEqual(['/boot/efi', '/']);
    expect(foreignContentOf(root!)).toEqual(['partitions /dev/sda1 (vfat), /dev/sda2 (ext4)']);
    expect(hasWekaPartition(nvme!)).toBe(true);
    expect(foreignContentOf(nvme!)).toEqual([]);
    expect(xfs).toMatchObject({ vendor: null, fstype: 'xfs', children: [] });
    expect(foreignContentOf(xfs!)).toEqual(['a xfs filesystem']);
  });

  it('tells the devices built on a disk (its holders) from its partitions, at any depth', () => {
    const [sdb, sdc, nvme] = parseBlockDevices(HELD);
    expect(holdersOf(sdb!).map((h) => [h.path, h.type])).toEqual([['/dev/md0', 'raid1']]);
    expect(holdersOf(sdc!).map((h) => h.path)).toEqual(['/dev/md0']);
    expect(holdersOf(nvme!).map((h) => [h.path, h.type])).toEqual([
      ['/dev/mapper/vg0-pvc--1', 'lvm'],
      ['/dev/mapper/vg0-pvc--2', 'lvm'],
    ]);
    expect(mountsOf(nvme!)).toEqual([]);
    // A holder is not one of the disk's partitions.
    expect(foreignContentOf(sdb!)).toEqual(['a linux_raid_member filesystem']);
    expect(foreignContentOf(nvme!)).toEqual(['partitions /dev/nvme2n1p1 (ext4), /dev/nvme2n1p2 (LVM2_member)']);
    const [root] = parseBlockDevices(LSBLK);
    expect(holdersOf(root!)).toEqual([]);
  });

  it.each([
    ['not JSON', 'lsblk: oops'],
    ['no list', '{"devices":[]}'],
    ['a name outside /dev', '{"blockdevices":[{"name":"sda","type":"disk","size":1}]}'],
    ['a missing type', '{"blockdevices":[{"name":"/dev/sda","size":1}]}'],
    ['a negative size', '{"blockdevices":[{"name":"/dev/sda","type":"disk","size":-1}]}'],
    ['a number for a model', '{"blockdevices":[{"name":"/dev/sda","type":"disk","size":1,"model":7}]}'],
  ])('refuses output with %s', (_what, stdout) => {
    expect(() => parseBlockDevices(stdout)).toThrow(WekaOutputError);
  });
});
