// Which devices a signing type chooses, and the verdict on each: signed, already signed, or skipped
// with the reason, never losing data the operation did not give up in so many words.
import { describe, expect, it } from 'vitest';
import {
  chooseDevices,
  nothingChosenMessage,
  refusalSkip,
  signingVerdict,
  type SigningInput,
} from '../../../src/node/device-signing.js';
import { WEKA_PARTITION_TYPE, type BlockDevice, type DriveInfo } from '../../../src/weka/index.js';

function disk(path: string, o: Partial<BlockDevice> = {}): BlockDevice {
  return {
    path,
    type: 'disk',
    sizeBytes: 3840 * 2 ** 30,
    serial: `SN-${path.slice(5)}`,
    model: 'SIM NVMe TLC',
    vendor: null,
    fstype: null,
    parttype: null,
    mountpoint: null,
    children: [],
    ...o,
  };
}
const part = (path: string, fstype: string | null, mountpoint: string | null, parttype: string | null = null) =>
  disk(path, { type: 'part', fstype, mountpoint, parttype, serial: null, model: null });
/** The "Linux filesystem" partition type GUID. */
const LINUX = '0fc63daf-8483-4772-8e79-3d69d8477de4';

const ROOT = disk('/dev/sda', { model: 'SIM SATA', children: [part('/dev/sda1', 'ext4', '/')] });
const DATA = disk('/dev/sdb', { children: [part('/dev/sdb1', 'xfs', '/var/lib/data')] });
const PARTED = disk('/dev/nvme2n1', { children: [part('/dev/nvme2n1p1', 'ext4', null)] });
const FS = disk('/dev/nvme3n1', { fstype: 'xfs' });
const EMPTY = disk('/dev/nvme0n1');
const WEKA = disk('/dev/nvme1n1', { children: [part('/dev/nvme1n1p1', null, null, WEKA_PARTITION_TYPE)] });
const AWS = disk('/dev/nvme4n1', { model: 'Amazon EC2 NVMe Instance Storage' });
const EBS = disk('/dev/nvme5n1', { model: 'Amazon Elastic Block Store' });
const GCP = disk('/dev/nvme6n1', { model: 'nvme_card' });
const GCP_PD = disk('/dev/nvme7n1', { model: 'nvme_card-pd' });
const ROM = disk('/dev/sr0', { type: 'rom' });
/** A block device built on a disk or a partition, as lsblk lists it among their children. */
const holder = (path: string, type: string, o: Partial<BlockDevice> = {}) =>
  disk(path, { type, serial: null, model: null, ...o });
/** A whole-disk LVM physical volume whose volume a block-mode PersistentVolume uses raw: nothing mounted. */
const LVM_PV = disk('/dev/nvme8n1', {
  fstype: 'LVM2_member',
  children: [holder('/dev/mapper/vg0-pvc--1', 'lvm')],
});
const NODE = [ROOT, DATA, PARTED, FS, EMPTY, WEKA, AWS, EBS, GCP, GCP_PD, ROM, LVM_PV];

describe('chooseDevices', () => {
  it('device-paths: the listed disks; a missing path or a partition is skipped with the reason', () => {
    expect(chooseDevices('device-paths', ['/dev/nvme0n1', '/dev/nvme9n1', '/dev/sda1'], NODE)).toEqual({
      chosen: ['/dev/nvme0n1'],
      skipped: [
        {
          devicePath: '/dev/nvme9n1',
          reason: 'NotFound',
          message: expect.stringMatching(/not a block device on this node/),
        },
        { devicePath: '/dev/sda1', reason: 'NotADisk', message: expect.stringMatching(/not a whole disk/) },
      ],
    });
  });

  it('all-not-root: every disk but the one holding /; mounted and held ones are chosen, to be skipped by the verdict', () => {
    expect(chooseDevices('all-not-root', [], NODE).chosen).toEqual(
      NODE.filter((d) => d !== ROOT && d !== ROM).map((d) => d.path),
    );
  });

  it('aws-all and gcp-all: only the local NVMe drives of the cloud, never its network volumes', () => {
    expect(chooseDevices('aws-all', [], NODE).chosen).toEqual(['/dev/nvme4n1']);
    expect(chooseDevices('gcp-all', [], NODE).chosen).toEqual(['/dev/nvme6n1']);
  });

  it('says why a type chose nothing, naming what the node has', () => {
    expect(chooseDevices('aws-all', [], [ROOT, EMPTY]).chosen).toEqual([]);
    expect(nothingChosenMessage('aws-all', [ROOT, EMPTY])).toMatch(
      /aws-all found no disk of model "Amazon EC2 NVMe Instance Storage" on the node \(disks: \/dev\/sda \(SIM SATA\), \/dev\/nvme0n1 \(SIM NVMe TLC\)\)/,
    );
    expect(nothingChosenMessage('all-not-root', [ROOT])).toMatch(/besides the root disk/);
  });
});

function info(device: BlockDevice, o: Partial<DriveInfo> = {}): DriveInfo {
  return {
    devicePath: device.path,
    serial: device.serial ?? '',
    capacityGiB: 3840,
    type: 'TLC',
    signature: 'none',
    physicalUUID: null,
    virtualDrives: [],
    ...o,
  };
}
const UUID = '11111111-2222-4333-8444-555555555555';
const verdict = (device: BlockDevice, o: Partial<SigningInput> = {}, i: Partial<DriveInfo> = {}) =>
  signingVerdict({ mode: 'exclusive', device, info: info(device, i), options: {}, heldSerials: new Set(), ...o });

describe('signingVerdict', () => {
  it('signs an empty, unsigned disk with no flags', () => {
    expect(verdict(EMPTY)).toEqual({ action: 'sign', flags: [], erases: [] });
  });

  const ALL_OPTIONS = {
    allowEraseNonWekaPartitions: true,
    allowEraseWekaPartitions: true,
    allowNonEmptyDevice: true,
  };

  it('never signs the root disk or a mounted disk, whatever the options say', () => {
    expect(verdict(ROOT, { options: ALL_OPTIONS })).toMatchObject({ action: 'skip', reason: 'RootDisk' });
    expect(verdict(DATA, { options: ALL_OPTIONS })).toMatchObject({
      action: 'skip',
      reason: 'Mounted',
      message: expect.stringMatching(/mounted at \/var\/lib\/data; a mounted device is never signed: unmount it first/),
    });
  });

  it.each([
    ['an LVM volume on the whole disk (a block-mode PersistentVolume)', LVM_PV, '/dev/mapper/vg0-pvc--1 (lvm)'],
    [
      'an LVM volume on a partition',
      disk('/dev/nvme9n1', {
        children: [
          { ...part('/dev/nvme9n1p1', 'LVM2_member', null, LINUX), children: [holder('/dev/mapper/vg1-data', 'lvm')] },
          part('/dev/nvme9n1p2', 'ext4', null, LINUX),
        ],
      }),
      '/dev/mapper/vg1-data (lvm)',
    ],
    [
      'a dm-crypt mapping',
      disk('/dev/sdd', { fstype: 'crypto_LUKS', children: [holder('/dev/mapper/luks-1', 'crypt')] }),
      '/dev/mapper/luks-1 (crypt)',
    ],
    [
      'a multipath device (with its kpartx partition)',
      disk('/dev/sde', {
        children: [holder('/dev/mapper/mpatha', 'mpath', { children: [holder('/dev/mapper/mpatha1', 'part')] })],
      }),
      '/dev/mapper/mpatha (mpath)',
    ],
    [
      'an md RAID array',
      disk('/dev/sdc', { fstype: 'linux_raid_member', children: [holder('/dev/md0', 'raid1')] }),
      '/dev/md0 (raid1)',
    ],
    [
      'a plain device-mapper table and a kpartx partition',
      disk('/dev/sdf', { children: [holder('/dev/mapper/sdf1', 'part'), holder('/dev/mapper/linear0', 'dm')] }),
      '/dev/mapper/sdf1 (part), /dev/mapper/linear0 (dm)',
    ],
  ])('never signs a disk held by %s, whatever the options say', (_what, device, holders) => {
    for (const options of [{}, ALL_OPTIONS]) {
      expect(verdict(device, { options })).toEqual({
        action: 'skip',
        reason: 'Held',
        message: `${device.path} is held by ${holders}: a device that another block device is built on (an LVM volume, dm-crypt, multipath or md RAID, such as the volume of a block-mode PersistentVolume) is never signed, whatever the options; remove that device first`,
      });
    }
    // Not even a device already signed: a holder on it is newer than the signature.
    expect(verdict(device, {}, { signature: 'exclusive', physicalUUID: UUID })).toMatchObject({ reason: 'Held' });
  });

  it('says Mounted rather than Held when the holder is mounted, and RootDisk when it holds /', () => {
    const home = disk('/dev/sdg', {
      fstype: 'LVM2_member',
      children: [holder('/dev/mapper/vg2-home', 'lvm', { fstype: 'xfs', mountpoint: '/home' })],
    });
    expect(verdict(home)).toMatchObject({ reason: 'Mounted', message: expect.stringMatching(/mounted at \/home/) });
    const lvmRoot = holder('/dev/mapper/vg-root', 'lvm', { fstype: 'ext4', mountpoint: '/' });
    const root = disk('/dev/sdh', {
      children: [{ ...part('/dev/sdh1', 'LVM2_member', null, LINUX), children: [lvmRoot] }],
    });
    expect(verdict(root)).toMatchObject({ reason: 'RootDisk' });
    expect(chooseDevices('all-not-root', [], [root, home]).chosen).toEqual([home.path]);
  });

  it('skips partitions and filesystems unless allowEraseNonWekaPartitions, and then says what is erased', () => {
    expect(verdict(PARTED)).toMatchObject({
      action: 'skip',
      reason: 'HasPartitions',
      message: expect.stringMatching(
        /has partitions \/dev\/nvme2n1p1 \(ext4\); set options.allowEraseNonWekaPartitions/,
      ),
    });
    expect(verdict(FS)).toMatchObject({ action: 'skip', reason: 'HasPartitions' });
    expect(verdict(PARTED, { options: { allowEraseNonWekaPartitions: true } })).toEqual({
      action: 'sign',
      flags: ['--allow-erase-non-weka-partitions'],
      erases: ['partitions /dev/nvme2n1p1 (ext4)'],
    });
  });

  it('is done already when the disk is signed for the same use', () => {
    expect(verdict(WEKA, {}, { signature: 'exclusive', physicalUUID: UUID })).toEqual({ action: 'already-signed' });
    expect(verdict(WEKA, { mode: 'proxy' }, { signature: 'proxy', physicalUUID: UUID })).toEqual({
      action: 'already-signed',
    });
  });

  it('never gives one drive to both uses: the other use is erased only when allowed and nothing holds the drive', () => {
    const proxyDrive = { signature: 'proxy' as const, physicalUUID: UUID };
    expect(verdict(WEKA, {}, proxyDrive)).toMatchObject({ action: 'skip', reason: 'SignedForOtherUse' });
    const allowed = { options: { allowEraseWekaPartitions: true } };
    expect(verdict(WEKA, allowed, proxyDrive)).toEqual({
      action: 'sign',
      flags: ['--allow-erase-weka-partitions'],
      erases: ['its Weka signature for proxy use'],
    });
    const vd = { virtualUUID: UUID, ownerClusterGUID: UUID, sizeGiB: 400 };
    expect(verdict(WEKA, allowed, { ...proxyDrive, virtualDrives: [vd] })).toMatchObject({
      action: 'skip',
      reason: 'InUse',
    });
    const exclusive = { signature: 'exclusive' as const, physicalUUID: UUID };
    expect(verdict(WEKA, { ...allowed, mode: 'proxy' }, { ...exclusive, clusterGUID: UUID })).toMatchObject({
      action: 'skip',
      reason: 'InUse',
      message: expect.stringMatching(/added to Weka cluster/),
    });
    expect(verdict(WEKA, { ...allowed, mode: 'proxy', heldSerials: new Set([WEKA.serial!]) }, exclusive)).toMatchObject(
      { action: 'skip', reason: 'InUse', message: expect.stringMatching(/allocated to a drive container/) },
    );
  });

  it('passes allowNonEmptyDevice and skipTrimFormat on to the tool, which alone can tell emptiness', () => {
    expect(verdict(EMPTY, { options: { allowNonEmptyDevice: true, skipTrimFormat: true } })).toEqual({
      action: 'sign',
      flags: ['--allow-non-empty-device', '--skip-trim-format'],
      erases: [],
    });
  });
});

describe('refusalSkip', () => {
  it('names the option for a device the tool found not empty', () => {
    expect(refusalSkip('/dev/x', '/dev/x is not empty; pass --allow-non-empty-device to overwrite it')).toMatchObject({
      reason: 'NotEmpty',
      message: expect.stringMatching(/set options.allowNonEmptyDevice/),
    });
    expect(refusalSkip('/dev/x', '/dev/x: device or resource busy (mounted at /a)').reason).toBe('Mounted');
    expect(refusalSkip('/dev/x', 'something else').reason).toBe('Refused');
  });
});
