import { describe, expect, it } from 'vitest';
import type { SimResult } from '../../../deploy/local/weka-sim/outcome.js';
import { driveAt, parseSignDriveList } from '../../../src/weka/index.js';
import {
  CLUSTER_A,
  deviceFiles,
  ROOT_PARTITIONS,
  expectOk,
  lsblkJson,
  readLog,
  rootDiskNode,
  shape,
  listedDrive,
  signedNode,
  sim,
  simRoot,
  tool,
  uuid,
  virtualAdd,
  virtualRemove,
} from './helpers.js';

const ERASE_WEKA = '--allow-erase-weka-partitions';
const ERASE_OTHER = '--allow-erase-non-weka-partitions';
const NON_EMPTY = '--allow-non-empty-device';
const ALL_FLAGS = [ERASE_WEKA, ERASE_OTHER, NON_EMPTY, '--skip-trim-format'];
/** `text` as a whole-string pattern, where each <uuid> stands for any UUID. */
function pattern(text: string): RegExp {
  const escaped = text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  return new RegExp(`^${escaped.replace(/<uuid>/g, '[0-9a-f]{8}-[0-9a-f-]{27}')}$`);
}

type Setup = (state: string) => Promise<unknown>;
const nothing: Setup = async () => undefined;
const partitioned: Setup = (s) =>
  shape(s, '/dev/nvme1n1', '--partition', '/dev/nvme1n1p1:ext4', '--partition', '/dev/nvme1n1p2');
const withFilesystem: Setup = (s) => shape(s, '/dev/nvme1n1', '--fstype', 'xfs');
const withData: Setup = (s) => shape(s, '/dev/nvme1n1', '--data');
const exclusive: Setup = (s) => tool(s, 'weka-sign-drive', '--', '/dev/nvme1n1');
const claimed: Setup = async (s) => {
  await expectOk(tool(s, 'weka-sign-drive', '--', '/dev/nvme1n1'));
  return shape(s, '/dev/nvme1n1', '--cluster-guid', CLUSTER_A);
};
const rootDisk: Setup = async (s) => {
  await expectOk(sim('--state', s, 'init-node', '--device', '/dev/sda:480:TLC'));
  return shape(s, '/dev/sda', ...ROOT_PARTITIONS);
};
const mountedDisk: Setup = (s) => shape(s, '/dev/nvme1n1', '--fstype', 'xfs', '--mountpoint', '/data');
/** A whole-disk LVM physical volume whose volume is in use raw, as a block-mode PersistentVolume's is. */
const heldDisk: Setup = (s) =>
  shape(s, '/dev/nvme1n1', '--fstype', 'LVM2_member', '--holder', '/dev/mapper/vg0-pvc--1:lvm');
const carrying =
  (n: number): Setup =>
  async (s) => {
    for (let i = 1; i <= n; i++) await expectOk(virtualAdd(s, '/dev/nvme0n1', uuid(i), CLUSTER_A, 10));
  };

const sign = (...args: string[]) => ['weka-sign-drive', ...args];
const signProxy = (...args: string[]) => ['weka-sign-drive', 'sign', 'proxy', ...args];

/** A node with /dev/nvme0n1 signed for proxy and /dev/nvme1n1 unsigned, then `setup`. */
async function prepared(setup: Setup): Promise<string> {
  const state = await signedNode(await simRoot());
  const result = await setup(state);
  if (result && typeof result === 'object' && 'exitCode' in result) await expectOk(result as SimResult);
  return state;
}

describe('signing refusals, in the order they are checked (exit 65, nothing changed)', () => {
  const refusals: Array<[string, Setup, string[], string]> = [
    [
      'a device the node lacks',
      nothing,
      sign(...ALL_FLAGS, '--', '/dev/nvme9n1'),
      '/dev/nvme9n1: no such device on node node-1',
    ],
    [
      'a root disk, whatever the flags',
      rootDisk,
      sign(...ALL_FLAGS, '--', '/dev/sda'),
      '/dev/sda: device or resource busy (mounted at /boot/efi, /, [SWAP])',
    ],
    [
      'a root disk, for proxy',
      rootDisk,
      signProxy('/dev/sda'),
      '/dev/sda: device or resource busy (mounted at /boot/efi, /, [SWAP])',
    ],
    [
      'a disk whose own filesystem is mounted',
      mountedDisk,
      sign(...ALL_FLAGS, '--', '/dev/nvme1n1'),
      '/dev/nvme1n1: device or resource busy (mounted at /data)',
    ],
    [
      'a disk another block device is built on, whatever the flags',
      heldDisk,
      sign(...ALL_FLAGS, '--', '/dev/nvme1n1'),
      '/dev/nvme1n1: device or resource busy (held by /dev/mapper/vg0-pvc--1)',
    ],
    [
      'a held disk, for proxy',
      heldDisk,
      signProxy(ERASE_OTHER, '/dev/nvme1n1'),
      '/dev/nvme1n1: device or resource busy (held by /dev/mapper/vg0-pvc--1)',
    ],
    [
      'a proxy device signed for proxy again',
      nothing,
      signProxy('--', '/dev/nvme0n1'),
      `/dev/nvme0n1: /dev/nvme0n1p1 is already a Weka partition (proxy, physical UUID <uuid>); pass ${ERASE_WEKA} to erase it`,
    ],
    [
      'a proxy device signed exclusive',
      nothing,
      sign(ERASE_OTHER, NON_EMPTY, '--', '/dev/nvme0n1'),
      `/dev/nvme0n1: /dev/nvme0n1p1 is already a Weka partition (proxy, physical UUID <uuid>); pass ${ERASE_WEKA} to erase it`,
    ],
    [
      'an exclusive device signed for proxy',
      exclusive,
      signProxy('/dev/nvme1n1'),
      `/dev/nvme1n1: /dev/nvme1n1p1 is already a Weka partition (exclusive, physical UUID <uuid>); pass ${ERASE_WEKA} to erase it`,
    ],
    [
      'an exclusive device claimed by a cluster',
      claimed,
      sign('--', '/dev/nvme1n1'),
      `/dev/nvme1n1: /dev/nvme1n1p1 is already a Weka partition (exclusive, physical UUID <uuid>, cluster GUID ${CLUSTER_A}); pass ${ERASE_WEKA} to erase it`,
    ],
    [
      'a proxy device carrying virtual drives, without the flag',
      carrying(1),
      signProxy('/dev/nvme0n1'),
      `/dev/nvme0n1: /dev/nvme0n1p1 is already a Weka partition (proxy, physical UUID <uuid>); pass ${ERASE_WEKA} to erase it`,
    ],
    [
      'a proxy device carrying a virtual drive, with the flag',
      carrying(1),
      signProxy(ERASE_WEKA, '/dev/nvme0n1'),
      '/dev/nvme0n1 carries 1 virtual drive; remove them first',
    ],
    [
      'a proxy device carrying virtual drives, signed exclusive with the flag',
      carrying(2),
      sign(...ALL_FLAGS, '--', '/dev/nvme0n1'),
      '/dev/nvme0n1 carries 2 virtual drives; remove them first',
    ],
    [
      'non-Weka partitions',
      partitioned,
      sign('--', '/dev/nvme1n1'),
      `/dev/nvme1n1 has non-Weka partitions (/dev/nvme1n1p1 ext4, /dev/nvme1n1p2); pass ${ERASE_OTHER} to erase them`,
    ],
    [
      'non-Weka partitions, with the other flags',
      partitioned,
      signProxy(ERASE_WEKA, NON_EMPTY, '--', '/dev/nvme1n1'),
      `/dev/nvme1n1 has non-Weka partitions (/dev/nvme1n1p1 ext4, /dev/nvme1n1p2); pass ${ERASE_OTHER} to erase them`,
    ],
    [
      'a filesystem on the disk',
      withFilesystem,
      sign(ERASE_WEKA, NON_EMPTY, '--', '/dev/nvme1n1'),
      `/dev/nvme1n1 has a filesystem (xfs); pass ${ERASE_OTHER} to erase it`,
    ],
    ['data', withData, sign('--', '/dev/nvme1n1'), `/dev/nvme1n1 is not empty; pass ${NON_EMPTY} to overwrite it`],
    [
      'data, with the other flags',
      withData,
      signProxy(ERASE_WEKA, ERASE_OTHER, '/dev/nvme1n1'),
      `/dev/nvme1n1 is not empty; pass ${NON_EMPTY} to overwrite it`,
    ],
  ];

  it.each(refusals)('refuses %s', async (_what, setup, argv, message) => {
    const state = await prepared(setup);
    const before = await deviceFiles(state);
    const result = await tool(state, ...argv);
    expect(result.exitCode).toBe(65);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(pattern(`weka-sign-drive: ${message}\n`));
    expect(await deviceFiles(state)).toEqual(before);
    expect((await readLog(state)).at(-1)).toMatchObject({ argv, exitCode: 65, changes: [] });
  });
});

describe('signing', () => {
  const successes: Array<[string, Setup, string[], 'proxy' | 'exclusive', string[]]> = [
    ['a blank device exclusive', nothing, sign('--', '/dev/nvme1n1'), 'exclusive', []],
    ['a blank device exclusive, every flag given', nothing, sign(...ALL_FLAGS, '--', '/dev/nvme1n1'), 'exclusive', []],
    ['exclusive without "--"', nothing, sign('--skip-trim-format', '/dev/nvme1n1'), 'exclusive', []],
    ['for proxy, the old form', nothing, signProxy('/dev/nvme1n1'), 'proxy', []],
    [
      'for proxy with "--" and flags',
      nothing,
      signProxy('--skip-trim-format', NON_EMPTY, '--', '/dev/nvme1n1'),
      'proxy',
      [],
    ],
    ['for proxy, a flag after the device', nothing, signProxy('/dev/nvme1n1', '--skip-trim-format'), 'proxy', []],
    [
      'a proxy device for proxy again, with the flag',
      nothing,
      signProxy(ERASE_WEKA, '--', '/dev/nvme0n1'),
      'proxy',
      [`Weka partition /dev/nvme0n1p1 (proxy, physical UUID <uuid>)`],
    ],
    [
      'a proxy device exclusive, with the flag',
      nothing,
      sign(ERASE_WEKA, '--', '/dev/nvme0n1'),
      'exclusive',
      [`Weka partition /dev/nvme0n1p1 (proxy, physical UUID <uuid>)`],
    ],
    [
      'a claimed exclusive device for proxy, with the flag',
      claimed,
      signProxy(ERASE_WEKA, '/dev/nvme1n1'),
      'proxy',
      [`Weka partition /dev/nvme1n1p1 (exclusive, physical UUID <uuid>, cluster GUID ${CLUSTER_A})`],
    ],
    [
      'a claimed exclusive device exclusive again, with the flag',
      claimed,
      sign(ERASE_WEKA, '--', '/dev/nvme1n1'),
      'exclusive',
      [`Weka partition /dev/nvme1n1p1 (exclusive, physical UUID <uuid>, cluster GUID ${CLUSTER_A})`],
    ],
    [
      'a partitioned device, with the flag',
      partitioned,
      sign(ERASE_OTHER, '--', '/dev/nvme1n1'),
      'exclusive',
      ['partitions /dev/nvme1n1p1 ext4, /dev/nvme1n1p2'],
    ],
    [
      'a disk with a filesystem, with the flag',
      withFilesystem,
      signProxy(ERASE_OTHER, '/dev/nvme1n1'),
      'proxy',
      ['filesystem xfs'],
    ],
    ['a device holding data, with the flag', withData, sign(NON_EMPTY, '--', '/dev/nvme1n1'), 'exclusive', ['data']],
  ];

  it.each(successes)('signs %s', async (_what, setup, argv, signature, erased) => {
    const state = await prepared(setup);
    const device = argv.find((a) => a.startsWith('/dev/'))!;
    const before = await listedDrive(state, device);
    const result = await expectOk(tool(state, ...argv));
    const after = await listedDrive(state, device);
    expect(after).toMatchObject({
      signature,
      physicalUUID: expect.stringMatching(/^[0-9a-f-]{36}$/),
      virtualDrives: [],
    });
    expect(after.physicalUUID).not.toBe(before.physicalUUID);
    if (signature === 'exclusive') expect(after.clusterGUID).toBeNull();
    else expect(after).not.toHaveProperty('clusterGUID');
    const uuid = after.physicalUUID!;
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`Signed ${device} for ${signature} use; physical UUID ${uuid}`);
    expect(lines.slice(1)).toHaveLength(erased.length);
    lines.slice(1).forEach((line, i) => expect(line).toMatch(pattern(`erased ${erased[i]}`)));
    const [change, ...more] = (await readLog(state)).findLast((e) => e.argv.join(' ') === argv.join(' '))!.changes;
    expect(more).toEqual([]);
    expect(change).toEqual({
      kind: `sign-${signature}`,
      device,
      physicalUUID: uuid,
      ...(erased.length > 0 ? { erased: erased.map(() => expect.any(String)) } : {}),
    });
    (change as { erased?: string[] }).erased?.forEach((e, i) => expect(e).toMatch(pattern(erased[i]!)));
    // Signing replaced whatever was there with the one Weka partition.
    expect(await lsblkJson(state, '-Jp', '-o', 'NAME,FSTYPE,PARTTYPE,MOUNTPOINT', device)).toEqual([
      {
        name: device,
        fstype: null,
        parttype: null,
        mountpoint: null,
        children: [
          { name: `${device}p1`, fstype: null, parttype: '993ec906-b4e2-11e7-a205-a0a8cd3ea1de', mountpoint: null },
        ],
      },
    ]);
  });

  it('signs a device once a virtual drive is removed from it', async () => {
    const state = await prepared(carrying(1));
    await expectOk(virtualRemove(state, '/dev/nvme0n1', uuid(1)));
    await expectOk(tool(state, ...sign(ERASE_WEKA, '--', '/dev/nvme0n1')));
  });

  it('a root disk stays busy after its partitions are unmounted only in part', async () => {
    const state = await rootDiskNode(await simRoot());
    await expectOk(shape(state, '/dev/sda', '--partition', '/dev/sda2:ext4'));
    const result = await tool(state, ...sign(ERASE_OTHER, '--', '/dev/sda'));
    expect(result.stderr).toBe('weka-sign-drive: /dev/sda: device or resource busy (mounted at /boot/efi, [SWAP])\n');
  });
});

describe('signing usage errors (exit 64)', () => {
  it.each([
    ['an unknown flag', sign('--force', '--', '/dev/nvme1n1'), 'unknown option --force'],
    ['an unknown flag for proxy', signProxy('--wipe', '/dev/nvme1n1'), 'unknown option --wipe'],
    [
      'a flag given a value',
      sign('--skip-trim-format=yes', '--', '/dev/nvme1n1'),
      'option --skip-trim-format takes no value',
    ],
    ['no device', sign(ERASE_WEKA, '--'), 'expected DEVICE, got []'],
    ['two devices', sign('--', '/dev/nvme1n1', '/dev/nvme0n1'), 'expected DEVICE'],
    ['an option after "--"', sign('--', ERASE_WEKA, '/dev/nvme1n1'), 'expected DEVICE'],
    ['a device path outside /dev', sign('--', '/tmp/disk'), 'invalid device path "/tmp/disk"'],
  ])('rejects %s', async (_what, argv, message) => {
    const state = await signedNode(await simRoot());
    const result = await tool(state, ...argv);
    expect(result.exitCode).toBe(64);
    expect(result.stderr).toContain(message);
    expect((await readLog(state)).flatMap((e) => e.changes).filter((c) => c.kind.startsWith('sign-'))).toHaveLength(1);
  });
});

describe('listing an exclusive drive', () => {
  it('lists it Weka-formatted, not for the proxy, with the claiming cluster, and the operator parses it', async () => {
    const state = await prepared(exclusive);
    const result = await expectOk(tool(state, 'weka-sign-drive', 'list', '-j'));
    const listed = (JSON.parse(result.stdout) as { devices: Array<Record<string, unknown>> }).devices.find(
      (d) => d['path'] === '/dev/nvme1n1',
    );
    expect(listed).toMatchObject({ status: 'weka_formatted', weka_info: { cluster_guid: null, is_proxy: false } });
    const info = driveAt(parseSignDriveList(result.stdout), '/dev/nvme1n1');
    expect(info).toMatchObject({ signature: 'exclusive', physicalUUID: listed!['physical_uuid'], clusterGUID: null });
    await expectOk(shape(state, '/dev/nvme1n1', '--cluster-guid', CLUSTER_A));
    expect(await listedDrive(state, '/dev/nvme1n1')).toMatchObject({ clusterGUID: CLUSTER_A });
  });

  it.each([
    ['unsigned', nothing, '/dev/nvme1n1', 'signature: none', 'no partitions; empty'],
    ['proxy', nothing, '/dev/nvme0n1', `signature: proxy (physical UUID <uuid>)`, 'Weka partition (proxy); empty'],
    [
      'exclusive, unclaimed',
      exclusive,
      '/dev/nvme1n1',
      `signature: exclusive (physical UUID <uuid>, unclaimed)`,
      'Weka partition (exclusive); empty',
    ],
    [
      'exclusive, claimed',
      claimed,
      '/dev/nvme1n1',
      `signature: exclusive (physical UUID <uuid>, cluster GUID ${CLUSTER_A})`,
      'Weka partition (exclusive); empty',
    ],
    [
      'partitioned',
      partitioned,
      '/dev/nvme1n1',
      'signature: none',
      'partitions /dev/nvme1n1p1 ext4, /dev/nvme1n1p2; empty',
    ],
  ])('prints a %s device as text', async (_what, setup, device, signatureLine, layout) => {
    const state = await prepared(setup);
    const { stdout } = await expectOk(tool(state, 'weka-sign-drive', 'show', device));
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`device: ${device}`);
    const type = device === '/dev/nvme0n1' ? 'TLC' : 'QLC';
    expect(lines[3]).toMatch(pattern(`layout: model "SIM NVMe ${type}", vendor "SIM"; ${layout}`));
    expect(lines[4]).toMatch(pattern(signatureLine));
  });

  it('virtual add refuses an exclusive drive', async () => {
    const state = await prepared(exclusive);
    const result = await virtualAdd(state, '/dev/nvme1n1', uuid(1), CLUSTER_A, 10);
    expect(result).toMatchObject({
      exitCode: 65,
      stderr: 'weka-sign-drive: /dev/nvme1n1 is not signed for proxy use\n',
    });
  });
});
