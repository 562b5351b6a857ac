import { describe, expect, it } from 'vitest';
import {
  WekaDeviceNotListed,
  WekaInputError,
  WekaOutputError,
  driveTypeOfIuSize,
  freeCapacityGiB,
  listDrivesCall,
  parseSignDriveList,
  readDriveCall,
  signExclusiveCall,
  signProxyCall,
  virtualAddCall,
  virtualRemoveCall,
} from '../../../src/weka/index.js';

const VIRTUAL = '11111111-2222-4333-8444-555555555555';
const CLUSTER = 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee';
const PHYSICAL = 'fb05d910-0000-4000-8000-000000000001';

/** One device as `weka-sign-drive list -j` prints it (test/fixtures/weka/README.md). */
const proxyDevice = {
  path: '/dev/nvme0n1',
  status: 'weka_formatted',
  physical_uuid: PHYSICAL,
  hardware: { serial_number: 'S5XYNS0T123', size_bytes: 3840 * 2 ** 30, iu_size: 4096 },
  weka_info: {
    cluster_guid: null,
    is_proxy: true,
    virtual_drives: [{ virtual_uuid: VIRTUAL, cluster_uuid: CLUSTER, size_gb: 1000 }],
  },
};

const listOf = (...devices: unknown[]) => JSON.stringify({ command: 'list', timestamp: 'now', devices });
const parsedOne = (device: unknown) => parseSignDriveList(listOf(device))[0]!;

describe('weka-sign-drive argv builders', () => {
  it('always ends sign proxy with -- before the device, and lists with -j', () => {
    expect(signProxyCall('/dev/nvme0n1').argv).toEqual(['weka-sign-drive', 'sign', 'proxy', '--', '/dev/nvme0n1']);
    expect(listDrivesCall().argv).toEqual(['weka-sign-drive', 'list', '-j']);
    expect(readDriveCall('/dev/nvme0n1').argv).toEqual(['weka-sign-drive', 'list', '-j']);
  });

  it("adds a virtual drive by the physical drive's UUID, with its size, owner and virtual UUID", () => {
    const call = virtualAddCall({
      physicalUUID: PHYSICAL,
      virtualUUID: VIRTUAL,
      ownerClusterGUID: CLUSTER,
      sizeGiB: 1000,
    });
    expect(call.argv).toEqual([
      'weka-sign-drive',
      'virtual',
      'add',
      PHYSICAL,
      '--size',
      '1000',
      '--owner-cluster-guid',
      CLUSTER,
      '--virtual-uuid',
      VIRTUAL,
    ]);
  });

  it("removes a virtual drive by the physical drive's UUID and the virtual UUID", () => {
    expect(virtualRemoveCall({ physicalUUID: PHYSICAL, virtualUUID: VIRTUAL }).argv).toEqual([
      'weka-sign-drive',
      'virtual',
      'remove',
      PHYSICAL,
      '--virtual-uuid',
      VIRTUAL,
    ]);
  });

  it('refuses shell metacharacters and bad values before anything runs', () => {
    expect(() => signProxyCall('/dev/nvme0n1 && reboot')).toThrow(WekaInputError);
    expect(() => readDriveCall('/dev/$(id)')).toThrow(WekaInputError);
    const good = { physicalUUID: PHYSICAL, virtualUUID: VIRTUAL, ownerClusterGUID: CLUSTER, sizeGiB: 10 };
    expect(() => virtualAddCall({ ...good, virtualUUID: `${VIRTUAL};ls` })).toThrow(/virtual UUID/);
    expect(() => virtualAddCall({ ...good, ownerClusterGUID: '--force' })).toThrow(/owner cluster GUID/);
    expect(() => virtualAddCall({ ...good, physicalUUID: '/dev/nvme0n1' })).toThrow(/physical UUID/);
    expect(() => virtualAddCall({ ...good, sizeGiB: 0 })).toThrow(/size in GiB/);
    expect(() => virtualAddCall({ ...good, sizeGiB: 10.5 })).toThrow(/size in GiB/);
    expect(() => virtualRemoveCall({ ...good, physicalUUID: 'x' })).toThrow(/physical UUID/);
  });
});

describe('parseSignDriveList', () => {
  it('reads a proxy drive with its virtual drives, its capacity in whole GiB and its type from the IU size', () => {
    const info = parsedOne({ ...proxyDevice, hardware: { ...proxyDevice.hardware, size_bytes: 3840 * 2 ** 30 + 5 } });
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

  it.each([
    [0, 'TLC'],
    [4096, 'TLC'],
    [16383, 'TLC'],
    [16384, 'QLC'],
    [65536, 'QLC'],
  ])('takes an IU size of %i bytes for %s', (iuSize, type) => {
    expect(driveTypeOfIuSize(iuSize)).toBe(type);
    expect(parsedOne({ ...proxyDevice, hardware: { ...proxyDevice.hardware, iu_size: iuSize } }).type).toBe(type);
  });

  it('reads a drive signed for the proxy but not yet taken by it from the sentinel cluster GUID', () => {
    for (const guid of ['026938D8-A8A2-4AD4-A316-2F23358A1E7A', 'Proxy GUID'])
      expect(parsedOne({ ...proxyDevice, weka_info: { cluster_guid: guid, is_proxy: false } })).toMatchObject({
        signature: 'proxy',
        virtualDrives: [],
      });
  });

  it("reads a Weka-formatted drive that is not the proxy's as exclusive, claimed by the cluster it names or by none", () => {
    const exclusive = (cluster_guid: unknown) =>
      parsedOne({ ...proxyDevice, weka_info: { cluster_guid, is_proxy: false } });
    expect(exclusive(null)).toMatchObject({ signature: 'exclusive', clusterGUID: null, physicalUUID: PHYSICAL });
    expect(exclusive('')).toMatchObject({ signature: 'exclusive', clusterGUID: null });
    expect(exclusive(CLUSTER)).toMatchObject({ signature: 'exclusive', clusterGUID: CLUSTER });
  });

  it('reads a device without weka_info as unsigned, and one with Weka data but another status as other', () => {
    expect(parsedOne({ ...proxyDevice, status: 'excluded', physical_uuid: '', weka_info: null })).toMatchObject({
      signature: 'none',
      physicalUUID: null,
      virtualDrives: [],
    });
    expect(parsedOne({ ...proxyDevice, status: 'excluded' }).signature).toBe('other');
  });

  it('trims a padded serial, takes hardware.serial when serial_number is missing, and ignores unknown fields', () => {
    const hardware = { serial: '  S1 ', size_bytes: 2 ** 30, iu_size: 4096, firmware: 'x' };
    expect(parsedOne({ ...proxyDevice, hardware, extra: { a: 1 } })).toMatchObject({ serial: 'S1', capacityGiB: 1 });
  });

  it('reads the JSON after warnings the tool prints first', () => {
    expect(parseSignDriveList(`WARNING: slow device\n${listOf(proxyDevice)}`)).toHaveLength(1);
  });

  it('finds one device by its path, and says which ones were listed when it is not there', () => {
    const call = readDriveCall('/dev/nvme9n1');
    expect(readDriveCall('/dev/nvme0n1').parse(listOf(proxyDevice)).physicalUUID).toBe(PHYSICAL);
    expect(() => call.parse(listOf(proxyDevice))).toThrow(WekaDeviceNotListed);
    expect(() => call.parse(listOf(proxyDevice))).toThrow(
      'weka-sign-drive list -j: no device /dev/nvme9n1 (listed: /dev/nvme0n1)',
    );
  });

  it.each([
    ['empty output', ''],
    ['plain text', 'Error: device busy'],
    ['truncated JSON', listOf(proxyDevice).slice(0, 40)],
    ['an array', '[]'],
    ['null', 'null'],
    ['no devices', JSON.stringify({ command: 'list' })],
    ['log noise after the JSON', `${listOf(proxyDevice)}\nwarning: slow device`],
    ['a device without a path', listOf({ ...proxyDevice, path: undefined })],
    ['a device without hardware', listOf({ ...proxyDevice, hardware: undefined })],
    ['size as a string', listOf({ ...proxyDevice, hardware: { ...proxyDevice.hardware, size_bytes: '3840' } })],
    ['a negative size', listOf({ ...proxyDevice, hardware: { ...proxyDevice.hardware, size_bytes: -1 } })],
    ['an empty serial', listOf({ ...proxyDevice, hardware: { ...proxyDevice.hardware, serial_number: ' ' } })],
    ['a bad physical UUID', listOf({ ...proxyDevice, physical_uuid: 'nope' })],
    ['is_proxy missing', listOf({ ...proxyDevice, weka_info: { cluster_guid: null } })],
    ['Weka-formatted without weka_info', listOf({ ...proxyDevice, weka_info: null })],
    ['a cluster GUID that is a number', listOf({ ...proxyDevice, weka_info: { cluster_guid: 7, is_proxy: false } })],
    [
      'a fractional virtual drive size',
      listOf({
        ...proxyDevice,
        weka_info: { is_proxy: true, virtual_drives: [{ virtual_uuid: VIRTUAL, cluster_uuid: CLUSTER, size_gb: 1.5 }] },
      }),
    ],
    [
      'a virtual drive without its cluster',
      listOf({
        ...proxyDevice,
        weka_info: { is_proxy: true, virtual_drives: [{ virtual_uuid: VIRTUAL, size_gb: 1 }] },
      }),
    ],
    ['virtual_drives not a list', listOf({ ...proxyDevice, weka_info: { is_proxy: true, virtual_drives: {} } })],
  ])('rejects %s as WekaOutputError', (_why, stdout) => {
    expect(() => parseSignDriveList(stdout)).toThrow(WekaOutputError);
  });

  it('names the command and quotes the output in the error', () => {
    expect(() => readDriveCall('/dev/nvme3n1').parse('segmentation fault')).toThrow(
      'weka-sign-drive list -j: unexpected output (not valid JSON): "segmentation fault"',
    );
  });

  it('quotes only the beginning of a huge garbage output', () => {
    let message = '';
    try {
      parseSignDriveList('#'.repeat(100_000));
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

  it('puts the flags, when given, before -- and the device', () => {
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
});
