import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CLUSTER_A,
  CLUSTER_B,
  changesOfKind,
  expectOk,
  readLog,
  listedDrive,
  physicalUUIDAt,
  signedNode,
  simRoot,
  tool,
  uuid,
  UNKNOWN_PHYSICAL_UUID,
  virtualAdd,
  virtualRemove,
} from './helpers.js';

describe('weka-sim weka-sign-drive', () => {
  it('signs a device for proxy, assigning a physical UUID that list reports', async () => {
    const state = await signedNode(await simRoot());
    const listed = await listedDrive(state, '/dev/nvme0n1');
    expect(listed).toMatchObject({
      devicePath: '/dev/nvme0n1',
      capacityGiB: 1000,
      type: 'TLC',
      signature: 'proxy',
      virtualDrives: [],
    });
    expect(listed.physicalUUID).toMatch(/^[0-9a-f-]{36}$/);
    expect(listed.serial).toMatch(/^SIM[0-9A-F]{14}$/);
  });

  it('lists a proxy drive and an unsigned one in the layout of list -j', async () => {
    const state = await signedNode(await simRoot());
    await expectOk(virtualAdd(state, '/dev/nvme0n1', uuid(1), CLUSTER_A, 400));
    const out = await expectOk(tool(state, 'weka-sign-drive', 'list', '-j'));
    const report = JSON.parse(out.stdout) as Record<string, unknown>;
    expect(Object.keys(report)).toEqual(['command', 'timestamp', 'devices']);
    expect(Date.parse(report['timestamp'] as string)).not.toBeNaN();
    expect(report['devices']).toEqual([
      {
        path: '/dev/nvme0n1',
        status: 'weka_formatted',
        physical_uuid: await physicalUUIDAt(state, '/dev/nvme0n1'),
        hardware: {
          serial_number: expect.stringMatching(/^SIM[0-9A-F]{14}$/),
          model: expect.any(String),
          size_bytes: 1000 * 2 ** 30,
          iu_size: 4096,
        },
        weka_info: {
          cluster_guid: null,
          is_proxy: true,
          virtual_drives: [{ virtual_uuid: uuid(1), cluster_uuid: CLUSTER_A, size_gb: 400 }],
        },
      },
      {
        path: '/dev/nvme1n1',
        status: 'excluded',
        physical_uuid: '',
        hardware: {
          serial_number: expect.stringMatching(/^SIM[0-9A-F]{14}$/),
          model: expect.any(String),
          size_bytes: 2000 * 2 ** 30,
          iu_size: 16384,
        },
        weka_info: null,
      },
    ]);
  });

  it('lists an unsigned device with no signature and no physical UUID', async () => {
    const state = await signedNode(await simRoot());
    const listed = await listedDrive(state, '/dev/nvme1n1');
    expect(listed).toMatchObject({ signature: 'none', type: 'QLC', capacityGiB: 2000, virtualDrives: [] });
    expect(listed.physicalUUID).toBeNull();
  });

  it('shows a device as a partition header and its hardware with --json, the partition only once signed', async () => {
    const state = await signedNode(await simRoot());
    const shown = async (device: string) =>
      JSON.parse((await expectOk(tool(state, 'weka-sign-drive', 'show', device, '--json'))).stdout) as unknown;
    const serial = (await listedDrive(state, '/dev/nvme0n1')).serial;
    expect(await shown('/dev/nvme0n1')).toEqual({
      partitions: [
        {
          size: 1000 * 2 ** 30,
          header: { physical_uuid: await physicalUUIDAt(state, '/dev/nvme0n1'), is_proxy: true },
        },
      ],
      hardware: { serial_number: serial, model: expect.any(String), size_bytes: 1000 * 2 ** 30, iu_size: 4096 },
    });
    expect(await shown('/dev/nvme1n1')).toEqual({
      partitions: [],
      hardware: expect.objectContaining({ size_bytes: 2000 * 2 ** 30, iu_size: 16384 }),
    });
    await expectOk(tool(state, 'weka-sign-drive', '--', '/dev/nvme1n1'));
    expect(await shown('/dev/nvme1n1')).toMatchObject({
      partitions: [{ header: { physical_uuid: await physicalUUIDAt(state, '/dev/nvme1n1'), is_proxy: false } }],
    });
  });

  it('adds and removes a virtual drive, storing UUIDs in lower case', async () => {
    const state = await signedNode(await simRoot());
    await expectOk(virtualAdd(state, '/dev/nvme0n1', uuid(1).toUpperCase(), CLUSTER_A, 400));
    expect((await listedDrive(state, '/dev/nvme0n1')).virtualDrives).toEqual([
      { virtualUUID: uuid(1), ownerClusterGUID: CLUSTER_A, sizeGiB: 400 },
    ]);
    const physical = await physicalUUIDAt(state, '/dev/nvme0n1');
    await expectOk(
      tool(
        state,
        'weka-sign-drive',
        'virtual',
        'remove',
        physical.toUpperCase(),
        '--virtual-uuid',
        uuid(1).toUpperCase(),
      ),
    );
    expect((await listedDrive(state, '/dev/nvme0n1')).virtualDrives).toEqual([]);
    expect(await changesOfKind(state, 'virtual-add')).toBe(1);
    expect(await changesOfKind(state, 'virtual-remove')).toBe(1);
  });

  it('fills a device exactly to capacity', async () => {
    const state = await signedNode(await simRoot());
    await expectOk(virtualAdd(state, '/dev/nvme0n1', uuid(1), CLUSTER_A, 600));
    await expectOk(virtualAdd(state, '/dev/nvme0n1', uuid(2), CLUSTER_B, 400));
  });
});

describe('weka-sim refusals (exit 65, message on stderr, nothing changed)', () => {
  const refusals: Array<
    [string, (state: string) => Promise<unknown>, (state: string) => ReturnType<typeof tool>, RegExp]
  > = [
    [
      'signing a device twice',
      async () => undefined,
      (s) => tool(s, 'weka-sign-drive', 'sign', 'proxy', '/dev/nvme0n1'),
      /already a Weka partition/,
    ],
    [
      'virtual add on a drive signed exclusive, not for proxy',
      (s) => tool(s, 'weka-sign-drive', '--', '/dev/nvme1n1'),
      (s) => virtualAdd(s, '/dev/nvme1n1', uuid(1), CLUSTER_A, 10),
      /\/dev\/nvme1n1 is not signed for proxy use/,
    ],
    [
      'virtual add naming a physical UUID no drive of the node has',
      async () => undefined,
      (s) => virtualAdd(s, '/dev/nvme1n1', uuid(1), CLUSTER_A, 10),
      new RegExp(`no drive with physical UUID ${UNKNOWN_PHYSICAL_UUID} on node node-1`),
    ],
    [
      'a virtual UUID already present',
      (s) => virtualAdd(s, '/dev/nvme0n1', uuid(1), CLUSTER_A, 10),
      (s) => virtualAdd(s, '/dev/nvme0n1', uuid(1), CLUSTER_A, 10),
      /already signed on \/dev\/nvme0n1/,
    ],
    [
      'more GiB than the device has left',
      (s) => virtualAdd(s, '/dev/nvme0n1', uuid(1), CLUSTER_A, 600),
      (s) => virtualAdd(s, '/dev/nvme0n1', uuid(2), CLUSTER_A, 401),
      /has 400 GiB left/,
    ],
    [
      'virtual remove from a physical drive that does not carry the virtual UUID',
      async (s) => {
        await expectOk(tool(s, 'weka-sign-drive', 'sign', 'proxy', '/dev/nvme1n1'));
        await expectOk(virtualAdd(s, '/dev/nvme0n1', uuid(1), CLUSTER_A, 10));
      },
      (s) => virtualRemove(s, '/dev/nvme1n1', uuid(1)),
      /virtual UUID 00000000-0000-4000-8000-000000000001 is not signed on \/dev\/nvme1n1/,
    ],
    [
      'virtual remove of an unknown UUID',
      async () => undefined,
      (s) => virtualRemove(s, '/dev/nvme0n1', uuid(9)),
      /is not signed on \/dev\/nvme0n1/,
    ],
    [
      'virtual remove naming a physical UUID no drive of the node has',
      (s) => virtualAdd(s, '/dev/nvme0n1', uuid(1), CLUSTER_A, 10),
      (s) => virtualRemove(s, '/dev/nvme1n1', uuid(1)),
      new RegExp(`no drive with physical UUID ${UNKNOWN_PHYSICAL_UUID} on node node-1`),
    ],
    [
      'a device the node does not have',
      async () => undefined,
      (s) => tool(s, 'weka-sign-drive', 'show', '--json', '/dev/nvme7n1'),
      /no such device on node node-1/,
    ],
  ];

  it.each(refusals)('refuses %s', async (_what, setup, command, message) => {
    const state = await signedNode(await simRoot());
    await setup(state);
    const before = [await listedDrive(state, '/dev/nvme0n1'), await listedDrive(state, '/dev/nvme1n1')];
    const result = await command(state);
    expect(result.exitCode).toBe(65);
    expect(result.stderr).toMatch(message);
    expect(result.stdout).toBe('');
    expect([await listedDrive(state, '/dev/nvme0n1'), await listedDrive(state, '/dev/nvme1n1')]).toEqual(before);
    const refused = (await readLog(state)).filter((e) => e.exitCode === 65);
    expect(refused).toHaveLength(1);
    expect(refused[0]!.changes).toEqual([]);
  });

  it('refuses a virtual UUID already signed on another device of the node', async () => {
    const state = await signedNode(await simRoot());
    await expectOk(tool(state, 'weka-sign-drive', 'sign', 'proxy', '/dev/nvme1n1'));
    await expectOk(virtualAdd(state, '/dev/nvme0n1', uuid(1), CLUSTER_A, 10));
    const result = await virtualAdd(state, '/dev/nvme1n1', uuid(1), CLUSTER_A, 10);
    expect(result.exitCode).toBe(65);
    expect(result.stderr).toContain('already signed on /dev/nvme0n1');
  });
});

/** Stands for the physical UUID of /dev/nvme0n1 in an argv below. */
const PHYSICAL = '<physical UUID of /dev/nvme0n1>';
const add = (...options: string[]) => ['weka-sign-drive', 'virtual', 'add', PHYSICAL, ...options];

describe('weka-sim usage errors (exit 64)', () => {
  it.each([
    ['an unknown subcommand', ['weka-sign-drive', 'format', '/dev/nvme0n1'], /unknown command/],
    ['an unknown tool', ['mkfs', '/dev/nvme0n1'], /mkfs/],
    [
      'a malformed virtual UUID',
      add('--size', '1', '--owner-cluster-guid', CLUSTER_A, '--virtual-uuid', 'x'),
      /--virtual-uuid must be a UUID/,
    ],
    [
      'a size that is not a positive integer',
      add('--size', '1e3', '--owner-cluster-guid', CLUSTER_A, '--virtual-uuid', uuid(1)),
      /--size must be an integer/,
    ],
    [
      'a zero size',
      add('--size', '0', '--owner-cluster-guid', CLUSTER_A, '--virtual-uuid', uuid(1)),
      /--size must be an integer >= 1/,
    ],
    ['a missing option', add('--size', '1', '--virtual-uuid', uuid(1)), /missing required option --owner-cluster-guid/],
    [
      'a virtual add naming the device rather than its physical UUID',
      [
        'weka-sign-drive',
        'virtual',
        'add',
        '/dev/nvme0n1',
        '--size',
        '1',
        '--owner-cluster-guid',
        CLUSTER_A,
        '--virtual-uuid',
        uuid(1),
      ],
      /PHYSICAL_UUID must be a UUID, got "\/dev\/nvme0n1"/,
    ],
    [
      'a virtual remove given an owner cluster GUID, which remove does not take',
      ['weka-sign-drive', 'virtual', 'remove', PHYSICAL, '--virtual-uuid', uuid(1), '--owner-cluster-guid', CLUSTER_A],
      /unknown option --owner-cluster-guid/,
    ],
    ['an unknown option', ['weka-sign-drive', 'sign', 'proxy', '/dev/nvme1n1', '--force'], /unknown option --force/],
    ['a device path outside /dev', ['weka-sign-drive', 'sign', 'proxy', '/dev/../etc/passwd'], /invalid device path/],
  ])('rejects %s', async (_what, argv, message) => {
    const state = await signedNode(await simRoot());
    const physical = await physicalUUIDAt(state, '/dev/nvme0n1');
    const result = await tool(state, ...argv.map((a) => (a === PHYSICAL ? physical : a)));
    expect(result.exitCode).toBe(64);
    expect(result.stderr).toMatch(message);
    expect(await changesOfKind(state, 'sign-proxy')).toBe(1);
    expect(await changesOfKind(state, 'virtual-add')).toBe(0);
  });
});

describe('weka-sim command log', () => {
  it('records every command with its argv, exit code and changes, reads and refusals included', async () => {
    const state = await signedNode(await simRoot());
    await listedDrive(state, '/dev/nvme0n1');
    await virtualAdd(state, '/dev/nvme0n1', uuid(1), CLUSTER_A, 10);
    await virtualAdd(state, '/dev/nvme0n1', uuid(1), CLUSTER_A, 10);
    const log = await readLog(state);
    expect(
      log.map((e) => [e.argv[0] === 'init-node' ? 'init-node' : e.argv.slice(1, 3).join(' '), e.exitCode]),
    ).toEqual([
      ['init-node', 0],
      ['sign proxy', 0],
      ['list -j', 0],
      ['virtual add', 0],
      ['virtual add', 65],
    ]);
    expect(log[3]!.changes).toEqual([
      { kind: 'virtual-add', device: '/dev/nvme0n1', virtualUUID: uuid(1), ownerClusterGUID: CLUSTER_A, sizeGiB: 10 },
    ]);
    expect(log.every((e) => !Number.isNaN(Date.parse(e.time)))).toBe(true);
  });
});

describe('weka-sim on corrupt state', () => {
  it('exits 70 naming the file rather than guessing', async () => {
    const state = await signedNode(await simRoot());
    await writeFile(join(state, 'devices', 'nvme0n1.json'), '{"devicePath": "/dev/nvme0n1", "trunc');
    const result = await tool(state, 'weka-sign-drive', 'show', '--json', '/dev/nvme1n1');
    expect(result.exitCode).toBe(70);
    expect(result.stderr).toContain('nvme0n1.json');
  });
});
