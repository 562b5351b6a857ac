import { describe, expect, it } from 'vitest';
import {
  WekaInputError,
  WekaOutputError,
  wholeDriveAddCall,
  clusterCreateCall,
  clusterListCall,
  containerAddCall,
  containerListCall,
  driveAddCall,
  driveDeactivateCall,
  driveListCall,
  driveRemoveCall,
  driveShowCall,
  parseContainerList,
  parseDriveList,
} from '../../../src/weka/index.js';

const VIRTUAL = '11111111-2222-4333-8444-555555555555';
const DRIVE = '99999999-8888-4777-8666-555555555555';
const CLUSTER = 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee';
/** A drive as `weka cluster drive --json` prints it (docs/weka-interface.md, REF weka.go 414-435). */
const printed = {
  uuid: VIRTUAL,
  added_time: '2026-12-06T07:00:00Z',
  device_path: '/dev/nvme0n1',
  serial_number: 'S3EWNX0K600000      ',
  size_bytes: 1000 * 2 ** 30,
  status: 'ACTIVE',
};
const read = {
  uuid: VIRTUAL,
  devicePath: '/dev/nvme0n1',
  serial: 'S3EWNX0K600000',
  sizeBytes: 1000 * 2 ** 30,
  status: 'ACTIVE',
};

describe('weka cluster drive calls', () => {
  it('adds a virtual drive to the pool of its type, with nothing to read back', () => {
    for (const [type, pool] of [
      ['TLC', 'iu4k'],
      ['QLC', 'iubig'],
    ] as const)
      expect(driveAddCall({ containerId: 3, virtualUUID: VIRTUAL, type }).argv).toEqual([
        'weka',
        'cluster',
        'drive',
        'add',
        '3',
        VIRTUAL,
        '--pool',
        pool,
      ]);
    expect(driveAddCall({ containerId: 3, virtualUUID: VIRTUAL, type: 'TLC' }).parse('anything')).toBeUndefined();
  });

  it('adds a whole drive by its device path, in no pool', () => {
    expect(wholeDriveAddCall({ containerId: 3, devicePath: '/dev/nvme0n1' }).argv).toEqual([
      'weka',
      'cluster',
      'drive',
      'add',
      '3',
      '/dev/nvme0n1',
    ]);
  });

  it("lists a container's drives, reads one, deactivates and removes one, forced", () => {
    expect(driveListCall(0).argv).toEqual(['weka', 'cluster', 'drive', '--container', '0', '--json']);
    expect(driveShowCall(DRIVE).argv).toEqual(['weka', 'cluster', 'drive', DRIVE, '--json']);
    expect(driveDeactivateCall(DRIVE).argv).toEqual(['weka', 'cluster', 'drive', 'deactivate', DRIVE, '-f']);
    expect(driveRemoveCall(DRIVE).argv).toEqual(['weka', 'cluster', 'drive', 'remove', DRIVE, '-f']);
  });

  it('validates container IDs and UUIDs', () => {
    expect(() => driveAddCall({ containerId: -1, virtualUUID: VIRTUAL, type: 'TLC' })).toThrow(WekaInputError);
    expect(() => driveAddCall({ containerId: 1, virtualUUID: '$(rm -rf /)', type: 'TLC' })).toThrow(WekaInputError);
    expect(() => driveListCall(1.5)).toThrow(WekaInputError);
    expect(() => driveShowCall('drive-1')).toThrow(WekaInputError);
    expect(() => driveRemoveCall('drive-1')).toThrow(WekaInputError);
  });

  it('reads the printed drives, trimming the padded serial and ignoring fields it does not use', () => {
    expect(parseDriveList(JSON.stringify([printed]))).toEqual([read]);
    expect(parseDriveList(JSON.stringify([{ ...printed, host_id: 'HostId3', failure_domain: 'fd1' }]))).toEqual([read]);
    expect(parseDriveList('[]\n')).toEqual([]);
    expect(parseDriveList(JSON.stringify([{ ...printed, serial_number: '', device_path: null }]))).toEqual([
      { ...read, serial: null, devicePath: null },
    ]);
  });

  it('reads the list after warnings printed before it', () => {
    expect(parseDriveList(`warning: the CLI version differs from the cluster's\n${JSON.stringify([printed])}`)).toEqual(
      [read],
    );
  });

  it.each([
    ['text', 'no drives'],
    ['an object instead of a list', JSON.stringify(printed)],
    ['a missing UUID', JSON.stringify([{ ...printed, uuid: undefined }])],
    ['a size as a string', JSON.stringify([{ ...printed, size_bytes: '3' }])],
    ['no status', JSON.stringify([{ ...printed, status: '' }])],
    ['a serial as a number', JSON.stringify([{ ...printed, serial_number: 7 }])],
    ['a list of strings', '["a"]'],
  ])('rejects a drive list with %s, naming the command', (_why, stdout) => {
    expect(() => driveListCall(3).parse(stdout)).toThrow(WekaOutputError);
    expect(() => driveListCall(3).parse(stdout)).toThrow(/^weka cluster drive --container 3 --json: unexpected output/);
  });
});

const PORTS = { basePort: 35000, agentPort: 35303 };

describe('cluster formation calls', () => {
  it('builds cluster create and list', () => {
    expect(clusterCreateCall('tenant-a').argv).toEqual(['weka', 'cluster', 'create', 'tenant-a', '--json']);
    expect(clusterListCall().argv).toEqual(['weka', 'cluster', 'list', '--json']);
  });

  it('builds container add and list', () => {
    expect(containerAddCall({ clusterGUID: CLUSTER, name: 'drive-0', hostname: 'node-1', ...PORTS }).argv).toEqual([
      'weka',
      'cluster',
      'container',
      'add',
      '--cluster-guid',
      CLUSTER,
      '--name',
      'drive-0',
      '--hostname',
      'node-1',
      '--base-port',
      '35000',
      '--agent-port',
      '35303',
      '--json',
    ]);
    expect(containerListCall(CLUSTER).argv).toEqual([
      'weka',
      'cluster',
      'container',
      'list',
      '--cluster-guid',
      CLUSTER,
      '--json',
    ]);
  });

  it('rejects names that would be read as options', () => {
    expect(() => clusterCreateCall('--help')).toThrow(WekaInputError);
    expect(() => containerAddCall({ clusterGUID: CLUSTER, name: 'ok', hostname: '-n', ...PORTS })).toThrow(
      WekaInputError,
    );
    expect(() => containerAddCall({ clusterGUID: 'x', name: 'ok', hostname: 'n', ...PORTS })).toThrow(WekaInputError);
  });

  it.each([0, -1, 1.5, 65536])('rejects port %s', (port) => {
    const req = { clusterGUID: CLUSTER, name: 'ok', hostname: 'n' };
    expect(() => containerAddCall({ ...req, basePort: port, agentPort: 35303 })).toThrow(WekaInputError);
    expect(() => containerAddCall({ ...req, basePort: 35000, agentPort: port })).toThrow(WekaInputError);
  });

  it('returns the GUID of a created cluster', () => {
    expect(clusterCreateCall('tenant-a').parse(JSON.stringify({ name: 'tenant-a', guid: CLUSTER }))).toEqual({
      name: 'tenant-a',
      guid: CLUSTER,
    });
  });

  it('returns the ID of an added container', () => {
    const stdout = JSON.stringify({ containerId: 7, name: 'drive-0', hostname: 'node-1', clusterGUID: CLUSTER });
    expect(
      containerAddCall({ clusterGUID: CLUSTER, name: 'drive-0', hostname: 'node-1', ...PORTS }).parse(stdout)
        .containerId,
    ).toBe(7);
  });

  it('rejects garbage from cluster and container commands', () => {
    expect(() => clusterCreateCall('a').parse('{"guid": "not-a-guid", "name": "a"}')).toThrow(WekaOutputError);
    expect(() => clusterListCall().parse('{}')).toThrow(WekaOutputError);
    expect(() =>
      containerAddCall({ clusterGUID: CLUSTER, name: 'a', hostname: 'b', ...PORTS }).parse('{"containerId": -1}'),
    ).toThrow(WekaOutputError);
    expect(() => parseContainerList('[{"containerId": 1, "name": "a", "hostname": "b"}]')).toThrow(/clusterGUID/);
  });
});
