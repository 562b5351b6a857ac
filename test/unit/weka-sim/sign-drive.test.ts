import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CLUSTER_A,
  CLUSTER_B,
  changesOfKind,
  expectOk,
  readLog,
  showJson,
  signedNode,
  simRoot,
  tool,
  uuid,
  virtualAdd,
  virtualRemove,
} from './helpers.js';

describe('weka-sim weka-sign-drive', () => {
  it('signs a device for proxy, assigning a physical UUID that show reports', async () => {
    const state = await signedNode(await simRoot());
    const shown = await showJson(state, '/dev/nvme0n1');
    expect(shown).toMatchObject({
      devicePath: '/dev/nvme0n1',
      capacityGiB: 1000,
      type: 'TLC',
      signed: true,
      signature: 'proxy',
      virtualDrives: [],
    });
    expect(shown['physicalUUID']).toMatch(/^[0-9a-f-]{36}$/);
    expect(shown['serial']).toMatch(/^SIM[0-9A-F]{14}$/);
  });

  it('shows an unsigned device with signed: false and no physical UUID', async () => {
    const state = await signedNode(await simRoot());
    const shown = await showJson(state, '/dev/nvme1n1');
    expect(shown).toMatchObject({ signed: false, signature: 'none', type: 'QLC', capacityGiB: 2000 });
    expect(shown).not.toHaveProperty('physicalUUID');
  });

  it('adds and removes a virtual drive, storing UUIDs in lower case', async () => {
    const state = await signedNode(await simRoot());
    await expectOk(virtualAdd(state, '/dev/nvme0n1', uuid(1).toUpperCase(), CLUSTER_A, 400));
    expect((await showJson(state, '/dev/nvme0n1'))['virtualDrives']).toEqual([
      { virtualUUID: uuid(1), ownerClusterGUID: CLUSTER_A, sizeGiB: 400 },
    ]);
    await expectOk(virtualRemove(state, '/dev/nvme0n1', uuid(1), CLUSTER_A));
    expect((await showJson(state, '/dev/nvme0n1'))['virtualDrives']).toEqual([]);
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
      'virtual add on a device not signed for proxy',
      async () => undefined,
      (s) => virtualAdd(s, '/dev/nvme1n1', uuid(1), CLUSTER_A, 10),
      /not signed for proxy/,
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
      'virtual remove with the wrong owner GUID',
      (s) => virtualAdd(s, '/dev/nvme0n1', uuid(1), CLUSTER_A, 10),
      (s) =>
        tool(
          s,
          'weka-sign-drive',
          'virtual',
          'remove',
          '/dev/nvme0n1',
          '--virtual-uuid',
          uuid(1),
          '--owner-cluster-guid',
          CLUSTER_B,
        ),
      /belongs to cluster/,
    ],
    [
      'virtual remove of an unknown UUID',
      async () => undefined,
      (s) =>
        tool(
          s,
          'weka-sign-drive',
          'virtual',
          'remove',
          '/dev/nvme0n1',
          '--virtual-uuid',
          uuid(9),
          '--owner-cluster-guid',
          CLUSTER_A,
        ),
      /is not signed on/,
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
    const before = [await showJson(state, '/dev/nvme0n1'), await showJson(state, '/dev/nvme1n1')];
    const result = await command(state);
    expect(result.exitCode).toBe(65);
    expect(result.stderr).toMatch(message);
    expect(result.stdout).toBe('');
    expect([await showJson(state, '/dev/nvme0n1'), await showJson(state, '/dev/nvme1n1')]).toEqual(before);
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

describe('weka-sim usage errors (exit 64)', () => {
  it.each([
    ['an unknown subcommand', ['weka-sign-drive', 'format', '/dev/nvme0n1']],
    ['an unknown tool', ['mkfs', '/dev/nvme0n1']],
    [
      'a malformed virtual UUID',
      [
        'weka-sign-drive',
        'virtual',
        'add',
        '/dev/nvme0n1',
        '--virtual-uuid',
        'x',
        '--owner-cluster-guid',
        CLUSTER_A,
        '--size',
        '1',
      ],
    ],
    [
      'a size that is not a positive integer',
      [
        'weka-sign-drive',
        'virtual',
        'add',
        '/dev/nvme0n1',
        '--virtual-uuid',
        uuid(1),
        '--owner-cluster-guid',
        CLUSTER_A,
        '--size',
        '1e3',
      ],
    ],
    [
      'a zero size',
      [
        'weka-sign-drive',
        'virtual',
        'add',
        '/dev/nvme0n1',
        '--virtual-uuid',
        uuid(1),
        '--owner-cluster-guid',
        CLUSTER_A,
        '--size',
        '0',
      ],
    ],
    [
      'a missing option',
      ['weka-sign-drive', 'virtual', 'add', '/dev/nvme0n1', '--virtual-uuid', uuid(1), '--size', '1'],
    ],
    ['an unknown option', ['weka-sign-drive', 'sign', 'proxy', '/dev/nvme1n1', '--force']],
    ['a device path outside /dev', ['weka-sign-drive', 'sign', 'proxy', '/dev/../etc/passwd']],
  ])('rejects %s', async (_what, argv) => {
    const state = await signedNode(await simRoot());
    const result = await tool(state, ...argv);
    expect(result.exitCode).toBe(64);
    expect(result.stderr).not.toBe('');
    expect(await changesOfKind(state, 'sign-proxy')).toBe(1);
    expect(await changesOfKind(state, 'virtual-add')).toBe(0);
  });
});

describe('weka-sim command log', () => {
  it('records every command with its argv, exit code and changes, reads and refusals included', async () => {
    const state = await signedNode(await simRoot());
    await showJson(state, '/dev/nvme0n1');
    await virtualAdd(state, '/dev/nvme0n1', uuid(1), CLUSTER_A, 10);
    await virtualAdd(state, '/dev/nvme0n1', uuid(1), CLUSTER_A, 10);
    const log = await readLog(state);
    expect(
      log.map((e) => [e.argv[0] === 'init-node' ? 'init-node' : e.argv.slice(1, 3).join(' '), e.exitCode]),
    ).toEqual([
      ['init-node', 0],
      ['sign proxy', 0],
      ['show --json', 0],
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
