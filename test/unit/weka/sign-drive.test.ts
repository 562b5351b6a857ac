import { describe, expect, it } from 'vitest';
import {
  WekaInputError,
  WekaOutputError,
  freeCapacityGiB,
  parseDriveShow,
  showDriveCall,
  signExclusiveCall,
  signProxyCall,
  virtualAddCall,
  virtualRemoveCall,
} from '../../../src/weka/index.js';

const VIRTUAL = '11111111-2222-4333-8444-555555555555';
const CLUSTER = 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee';
const PHYSICAL = 'fb05d910-0000-4000-8000-000000000001';

const signedShow = {
  devicePath: '/dev/nvme0n1',
  serial: 'S5XYNS0T123',
  capacityGiB: 3840,
  type: 'TLC',
  signed: true,
  signature: 'proxy',
  physicalUUID: PHYSICAL,
  virtualDrives: [{ virtualUUID: VIRTUAL, ownerClusterGUID: CLUSTER, sizeGiB: 1000 }],
};

describe('weka-sign-drive argv builders', () => {
  it('builds sign proxy and show as argv arrays', () => {
    expect(signProxyCall('/dev/nvme0n1').argv).toEqual(['weka-sign-drive', 'sign', 'proxy', '/dev/nvme0n1']);
    expect(showDriveCall('/dev/nvme0n1').argv).toEqual(['weka-sign-drive', 'show', '--json', '/dev/nvme0n1']);
  });

  it('builds virtual add with UUID, owner GUID and size in GiB', () => {
    const call = virtualAddCall({
      devicePath: '/dev/nvme0n1',
      virtualUUID: VIRTUAL,
      ownerClusterGUID: CLUSTER,
      sizeGiB: 1000,
    });
    expect(call.argv).toEqual([
      'weka-sign-drive',
      'virtual',
      'add',
      '/dev/nvme0n1',
      '--virtual-uuid',
      VIRTUAL,
      '--owner-cluster-guid',
      CLUSTER,
      '--size',
      '1000',
    ]);
  });

  it('builds virtual remove with UUID and owner GUID', () => {
    const call = virtualRemoveCall({ devicePath: '/dev/nvme1n1', virtualUUID: VIRTUAL, ownerClusterGUID: CLUSTER });
    expect(call.argv).toEqual([
      'weka-sign-drive',
      'virtual',
      'remove',
      '/dev/nvme1n1',
      '--virtual-uuid',
      VIRTUAL,
      '--owner-cluster-guid',
      CLUSTER,
    ]);
  });

  it('refuses shell metacharacters and bad values before anything runs', () => {
    expect(() => signProxyCall('/dev/nvme0n1 && reboot')).toThrow(WekaInputError);
    expect(() => showDriveCall('/dev/$(id)')).toThrow(WekaInputError);
    const good = { devicePath: '/dev/nvme0n1', virtualUUID: VIRTUAL, ownerClusterGUID: CLUSTER, sizeGiB: 10 };
    expect(() => virtualAddCall({ ...good, virtualUUID: `${VIRTUAL};ls` })).toThrow(/virtual UUID/);
    expect(() => virtualAddCall({ ...good, ownerClusterGUID: '--force' })).toThrow(/owner cluster GUID/);
    expect(() => virtualAddCall({ ...good, sizeGiB: 0 })).toThrow(/size in GiB/);
    expect(() => virtualAddCall({ ...good, sizeGiB: 10.5 })).toThrow(/size in GiB/);
    expect(() => virtualRemoveCall({ ...good, devicePath: '/dev/../sda' })).toThrow(/device path/);
  });
});

describe('parseDriveShow', () => {
  it('reads a proxy-signed device with its virtual drives', () => {
    const info = parseDriveShow(JSON.stringify(signedShow));
    expect(info).toEqual({
      devicePath: '/dev/nvme0n1',
      serial: 'S5XYNS0T123',
      capacityGiB: 3840,
      type: 'TLC',
      signature: 'proxy',
      physicalUUID: PHYSICAL,
      virtualDrives: [{ virtualUUID: VIRTUAL, ownerClusterGUID: CLUSTER, sizeGiB: 1000 }],
    });
    expect(freeCapacityGiB(info)).toBe(2840);
  });

  it('reads an unsigned device as having no physical UUID', () => {
    const { physicalUUID: _p, ...rest } = signedShow;
    const info = parseDriveShow(
      JSON.stringify({ ...rest, signed: false, signature: 'none', virtualDrives: [], type: 'QLC' }),
    );
    expect(info.signature).toBe('none');
    expect(info.physicalUUID).toBeNull();
    expect(info.type).toBe('QLC');
  });

  it('reads a device signed for something other than proxy or exclusive use as "other"', () => {
    expect(parseDriveShow(JSON.stringify({ ...signedShow, signature: 'legacy', virtualDrives: [] })).signature).toBe(
      'other',
    );
  });

  it.each([
    ['empty output', ''],
    ['plain text', 'Error: device busy'],
    ['truncated JSON', JSON.stringify(signedShow).slice(0, 40)],
    ['an array', '[]'],
    ['null', 'null'],
    ['a JSON string', '"ok"'],
    ['log noise after the JSON', `${JSON.stringify(signedShow)}\nwarning: slow device`],
    ['unknown drive type', JSON.stringify({ ...signedShow, type: 'SLC' })],
    ['capacity as a string', JSON.stringify({ ...signedShow, capacityGiB: '3840' })],
    ['negative capacity', JSON.stringify({ ...signedShow, capacityGiB: -1 })],
    [
      'fractional size',
      JSON.stringify({
        ...signedShow,
        virtualDrives: [{ virtualUUID: VIRTUAL, ownerClusterGUID: CLUSTER, sizeGiB: 1.5 }],
      }),
    ],
    [
      'virtual drive without owner',
      JSON.stringify({ ...signedShow, virtualDrives: [{ virtualUUID: VIRTUAL, sizeGiB: 1 }] }),
    ],
    [
      'virtual drive with a bad UUID',
      JSON.stringify({ ...signedShow, virtualDrives: [{ virtualUUID: 'x', ownerClusterGUID: CLUSTER, sizeGiB: 1 }] }),
    ],
    ['virtualDrives not a list', JSON.stringify({ ...signedShow, virtualDrives: {} })],
    ['signed without physical UUID', JSON.stringify({ ...signedShow, physicalUUID: undefined })],
    ['signed flag missing', JSON.stringify({ ...signedShow, signed: undefined })],
    ['unsigned with a physical UUID', JSON.stringify({ ...signedShow, signed: false, virtualDrives: [] })],
    ['unsigned with virtual drives', JSON.stringify({ ...signedShow, signed: false, physicalUUID: undefined })],
    ['empty serial', JSON.stringify({ ...signedShow, serial: '' })],
  ])('rejects %s as WekaOutputError', (_why, stdout) => {
    expect(() => parseDriveShow(stdout)).toThrow(WekaOutputError);
  });

  it('names the command and quotes the output in the error', () => {
    const call = showDriveCall('/dev/nvme3n1');
    expect(() => call.parse('segmentation fault')).toThrow(
      'weka-sign-drive show --json /dev/nvme3n1: unexpected output (not valid JSON): "segmentation fault"',
    );
  });

  it('quotes only the beginning of a huge garbage output', () => {
    let message = '';
    try {
      parseDriveShow('#'.repeat(100_000));
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message.length).toBeLessThan(600);
    expect(message).toContain('more characters');
  });
});

describe('signing with what it may destroy', () => {
  it('signs for exclusive use with no subcommand, flags in a fixed order, then -- and the device', () => {
    expect(signExclusiveCall('/dev/nvme0n1').argv).toEqual(['weka-sign-drive', '--', '/dev/nvme0n1']);
    expect(signExclusiveCall('/dev/nvme0n1', ['--skip-trim-format', '--allow-erase-non-weka-partitions']).argv).toEqual(
      ['weka-sign-drive', '--allow-erase-non-weka-partitions', '--skip-trim-format', '--', '/dev/nvme0n1'],
    );
  });

  it('keeps the plain proxy form without flags, and adds them before -- when given', () => {
    expect(signProxyCall('/dev/nvme0n1').argv).toEqual(['weka-sign-drive', 'sign', 'proxy', '/dev/nvme0n1']);
    expect(signProxyCall('/dev/nvme0n1', ['--allow-erase-weka-partitions']).argv).toEqual([
      'weka-sign-drive',
      'sign',
      'proxy',
      '--allow-erase-weka-partitions',
      '--',
      '/dev/nvme0n1',
    ]);
  });

  it('refuses a flag the tool does not have, and a bad path, before anything runs', () => {
    expect(() => signExclusiveCall('/dev/nvme0n1', ['--force' as never])).toThrow(WekaInputError);
    expect(() => signExclusiveCall('/dev/x; reboot')).toThrow(WekaInputError);
  });

  it('reads an exclusive header, claimed by a cluster or not', () => {
    const exclusive = { ...signedShow, signature: 'exclusive', virtualDrives: [] };
    expect(parseDriveShow(JSON.stringify({ ...exclusive, clusterGUID: null }))).toMatchObject({
      signature: 'exclusive',
      clusterGUID: null,
    });
    expect(parseDriveShow(JSON.stringify({ ...exclusive, clusterGUID: CLUSTER }))).toMatchObject({
      signature: 'exclusive',
      clusterGUID: CLUSTER,
    });
    expect(() => parseDriveShow(JSON.stringify({ ...exclusive, clusterGUID: 'x' }))).toThrow(WekaOutputError);
  });
});
