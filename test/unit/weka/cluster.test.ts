import { describe, expect, it } from 'vitest';
import {
  WekaInputError,
  WekaOutputError,
  wholeDriveAddCall,
  clusterCreateCall,
  clusterNameCall,
  containerIdentityCall,
  containerListCall,
  joinCalls,
  NO_CLUSTER_GUID,
  parseContainerIdentity,
  parseHostAddress,
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

/**
 * `container-get-identity` as the reference reads it (REF
 * internal/controllers/wekacontainer/funcs_cluster_joining.go 19-86, struct in
 * internal/controllers/resources/pod.go 56-64).
 */
const identity = (value: unknown, hasValue = true, exception: string | null = null) =>
  JSON.stringify({ value, has_value: hasValue, exception });

describe('cluster formation and join calls', () => {
  it("asks a container's own agent for its identity", () => {
    expect(containerIdentityCall('ns_drive-0', 35100).argv).toEqual([
      'weka',
      'local',
      'run',
      'wapi',
      '-H',
      'localhost:35100/jrpc',
      '-W',
      'container-get-identity',
      '--container-name',
      'ns_drive-0',
      '--json',
    ]);
  });

  it.each([
    [
      'a member',
      identity({ cluster_guid: CLUSTER.toUpperCase(), host_id: 12 }),
      { state: 'member', clusterGUID: CLUSTER, containerId: 12 },
    ],
    ['a stem (all-zero GUID)', identity({ cluster_guid: NO_CLUSTER_GUID, host_id: 0 }), { state: 'stem' }],
    ['a stem (empty GUID)', identity({ cluster_guid: '', host_id: 0 }), { state: 'stem' }],
    [
      'no value yet',
      identity(null, false, 'container is starting'),
      { state: 'unknown', reason: 'container is starting' },
    ],
    [
      'warnings before it, and fields it does not know',
      `warning: slow\n${identity({ cluster_guid: CLUSTER, host_id: 3, extra: 1 })}`,
      { state: 'member', clusterGUID: CLUSTER, containerId: 3 },
    ],
  ])('reads the identity of %s', (_, stdout, expected) => {
    expect(parseContainerIdentity(stdout)).toEqual(expected);
  });

  it.each([
    ['no has_value', JSON.stringify({ value: { cluster_guid: CLUSTER, host_id: 1 } })],
    ['a GUID that is not one', identity({ cluster_guid: 'nope', host_id: 1 })],
    ['a negative ID', identity({ cluster_guid: CLUSTER, host_id: -1 })],
    ['no ID', identity({ cluster_guid: CLUSTER })],
    ['text', 'container not found'],
  ])('refuses an identity with %s', (_, stdout) => {
    expect(() => parseContainerIdentity(stdout)).toThrow(WekaOutputError);
  });

  it('creates a cluster of stems by management IP, each with its Weka port, IPv6 in brackets', () => {
    const hosts = [
      { ip: '10.244.0.5', port: 35000 },
      { ip: 'fd00::7', port: 35100 },
    ];
    expect(clusterCreateCall(hosts).argv).toEqual([
      'weka',
      'cluster',
      'create',
      '10.244.0.5',
      'fd00::7',
      '--host-ips',
      '10.244.0.5:35000,[fd00::7]:35100',
    ]);
    expect(clusterNameCall('ns_tenant').argv).toEqual(['weka', 'cluster', 'update', '--cluster-name', 'ns_tenant']);
  });

  it('joins a stem through join IPs, applied, then a restart', () => {
    expect(joinCalls([{ ip: '10.244.0.5', port: 35000 }]).map((c) => c.argv)).toEqual([
      ['weka', 'local', 'resources', 'join-ips', '10.244.0.5:35000'],
      ['weka', 'local', 'resources', 'apply', '-f'],
      ['weka', 'local', 'restart', '--force'],
    ]);
  });

  it('refuses what would be read as an option or is no address', () => {
    expect(() => containerIdentityCall('--help', 35100)).toThrow(WekaInputError);
    expect(() => containerIdentityCall('ok', 0)).toThrow(WekaInputError);
    expect(() => clusterCreateCall([])).toThrow(WekaInputError);
    expect(() => clusterCreateCall([{ ip: 'node-1', port: 35000 }])).toThrow(WekaInputError);
    expect(() => clusterCreateCall([{ ip: '10.0.0.1', port: 70000 }])).toThrow(WekaInputError);
    expect(() => joinCalls([])).toThrow(WekaInputError);
    expect(() => clusterNameCall('-x')).toThrow(WekaInputError);
  });

  it('reads ip:port as spec.joinIps lists it', () => {
    expect(parseHostAddress('10.244.0.5:35000')).toEqual({ ip: '10.244.0.5', port: 35000 });
    expect(parseHostAddress('[fd00::7]:35100')).toEqual({ ip: 'fd00::7', port: 35100 });
    for (const bad of ['10.244.0.5', 'host:35000', '10.244.0.5:0', '10.244.0.5:70000', 'fd00::7:35000', '999.1.1.1:1'])
      expect(parseHostAddress(bad)).toBeUndefined();
  });
});

describe('the container listing', () => {
  it('lists every container of the cluster, reading the ID out of HostId<N>', () => {
    expect(containerListCall().argv).toEqual(['weka', 'cluster', 'container', '--json']);
    const stdout = JSON.stringify([
      {
        host_id: 'HostId<3>',
        hostname: 'node-1',
        container_name: 'ns_a',
        host_ip: '10.0.0.5',
        mgmt_port: 35000,
        status: 'UP',
      },
      { host_id: 'HostId<4>', hostname: 'node-2', container_name: 'ns_b', status: 'INACTIVE' },
    ]);
    expect(parseContainerList(stdout)).toEqual([
      { containerId: 3, name: 'ns_a', hostname: 'node-1', status: 'UP' },
      { containerId: 4, name: 'ns_b', hostname: 'node-2', status: 'INACTIVE' },
    ]);
    expect(() =>
      parseContainerList('[{"host_id": "3", "hostname": "n", "container_name": "a", "status": "UP"}]'),
    ).toThrow(/HostId<N>/);
  });
});
