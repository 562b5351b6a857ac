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
  driveListCall,
  driveRemoveCall,
  parseContainerList,
  parseDriveList,
} from '../../../src/weka/index.js';

const VIRTUAL = '11111111-2222-4333-8444-555555555555';
const DRIVE = '99999999-8888-4777-8666-555555555555';
const CLUSTER = 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee';
const drive = {
  driveUUID: DRIVE,
  virtualUUID: VIRTUAL,
  devicePath: null,
  serial: null,
  containerId: 3,
  sizeGiB: 1000,
  status: 'ACTIVE',
};

describe('weka cluster drive calls', () => {
  it('builds drive add, list and remove as argv arrays', () => {
    expect(driveAddCall({ containerId: 3, virtualUUID: VIRTUAL }).argv).toEqual([
      'weka',
      'cluster',
      'drive',
      'add',
      '3',
      VIRTUAL,
      '--json',
    ]);
    expect(driveListCall(0).argv).toEqual(['weka', 'cluster', 'drive', 'list', '0', '--json']);
    expect(driveRemoveCall(DRIVE).argv).toEqual(['weka', 'cluster', 'drive', 'remove', DRIVE]);
  });

  it('validates container IDs and UUIDs', () => {
    expect(() => driveAddCall({ containerId: -1, virtualUUID: VIRTUAL })).toThrow(WekaInputError);
    expect(() => driveAddCall({ containerId: 1, virtualUUID: '$(rm -rf /)' })).toThrow(WekaInputError);
    expect(() => driveListCall(1.5)).toThrow(WekaInputError);
    expect(() => driveRemoveCall('drive-1')).toThrow(WekaInputError);
  });

  it('parses the drive that drive add reports', () => {
    expect(driveAddCall({ containerId: 3, virtualUUID: VIRTUAL }).parse(JSON.stringify(drive))).toEqual(drive);
  });

  it('adds a whole drive by its device path, and reads it back with its serial', () => {
    const whole = { ...drive, virtualUUID: null, devicePath: '/dev/nvme0n1', serial: 'S1' };
    const call = wholeDriveAddCall({ containerId: 3, devicePath: '/dev/nvme0n1' });
    expect(call.argv).toEqual(['weka', 'cluster', 'drive', 'add', '3', '/dev/nvme0n1', '--json']);
    expect(call.parse(JSON.stringify(whole))).toEqual(whole);
    // Written before drives had a device path: a virtual drive.
    const { devicePath: _d, serial: _s, ...older } = drive;
    expect(parseDriveList(JSON.stringify([older]))).toEqual([drive]);
    expect(() => parseDriveList(JSON.stringify([{ ...whole, virtualUUID: VIRTUAL }]))).toThrow(WekaOutputError);
    expect(() => parseDriveList(JSON.stringify([{ ...drive, virtualUUID: null }]))).toThrow(WekaOutputError);
  });

  it('parses a drive list, empty or not', () => {
    expect(parseDriveList('[]\n')).toEqual([]);
    expect(parseDriveList(JSON.stringify([drive, { ...drive, driveUUID: VIRTUAL }]))).toHaveLength(2);
  });

  it.each([
    ['text', 'no drives'],
    ['an object instead of a list', JSON.stringify(drive)],
    ['a missing drive UUID', JSON.stringify([{ ...drive, driveUUID: undefined }])],
    ['a container ID as a string', JSON.stringify([{ ...drive, containerId: '3' }])],
    ['a zero size', JSON.stringify([{ ...drive, sizeGiB: 0 }])],
    ['a list of strings', '["a"]'],
  ])('rejects a drive list with %s, naming the command', (_why, stdout) => {
    expect(() => driveListCall(3).parse(stdout)).toThrow(WekaOutputError);
    expect(() => driveListCall(3).parse(stdout)).toThrow(/^weka cluster drive list 3 --json: unexpected output/);
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
