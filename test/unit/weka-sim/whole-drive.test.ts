// Whole exclusive drives in a cluster, as the reference operator handles them: `weka cluster drive
// add CONTAINER_ID DEVICE_PATH`, `drive remove -f DRIVE_UUID`, then `weka-sign-drive
// --allow-erase-weka-partitions -- DEVICE` to erase the cluster's claim. What each refuses, what it
// prints and logs, and the drive JSON both kinds of drive share.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WEKA_USAGE } from '../../../deploy/local/weka-sim/weka-tool.js';
import { parseDriveAdd, parseDriveList } from '../../../src/weka/index.js';
import {
  CLUSTER_B,
  addContainer,
  createCluster,
  deviceFiles,
  expectOk,
  nodeDir,
  readLog,
  shape,
  showJson,
  sim,
  simRoot,
  tool,
  uuid,
  virtualAdd,
} from './helpers.js';

const ERASE_WEKA = '--allow-erase-weka-partitions';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** The keys of a drive in `drive add|list --json`, in order, for both kinds of drive. */
const DRIVE_KEYS = ['driveUUID', 'virtualUUID', 'devicePath', 'serial', 'containerId', 'sizeGiB', 'status'];

interface Node {
  readonly root: string;
  readonly state: string;
  readonly guid: string;
  readonly containerId: number;
}

/**
 * node-1 with /dev/nvme0n1 signed for proxy, /dev/nvme1n1 (serial EXCL1, 2000 GiB) signed for
 * exclusive use and unclaimed, /dev/nvme2n1 unsigned; cluster tenant-a with container drive-0 on
 * node-1.
 */
async function exclusiveNode(): Promise<Node> {
  const root = await simRoot();
  const state = nodeDir(root, 'node-1');
  const devices = ['/dev/nvme0n1:1000:TLC', '/dev/nvme1n1:2000:QLC:EXCL1', '/dev/nvme2n1:500:TLC'];
  await expectOk(sim('--state', state, 'init-node', ...devices.flatMap((d) => ['--device', d])));
  await expectOk(tool(state, 'weka-sign-drive', 'sign', 'proxy', '/dev/nvme0n1'));
  await expectOk(tool(state, 'weka-sign-drive', '--', '/dev/nvme1n1'));
  const guid = await createCluster(state, 'tenant-a');
  const containerId = await addContainer(state, guid, 'drive-0');
  return { root, state, guid, containerId };
}

const driveAdd = (state: string, ...args: string[]) => tool(state, 'weka', 'cluster', 'drive', 'add', ...args);
const driveRemove = (state: string, ...args: string[]) => tool(state, 'weka', 'cluster', 'drive', 'remove', ...args);
const signExclusive = (state: string, ...flags: string[]) =>
  tool(state, 'weka-sign-drive', ...flags, '--', '/dev/nvme1n1');

/** Adds /dev/nvme1n1 to the container (or `containerId`) and returns its drive UUID. */
async function addWhole(n: Node, containerId = n.containerId): Promise<string> {
  const out = await expectOk(driveAdd(n.state, String(containerId), '/dev/nvme1n1', '--json'));
  return (JSON.parse(out.stdout) as { driveUUID: string }).driveUUID;
}

async function driveList(state: string, containerId: number): Promise<Array<Record<string, unknown>>> {
  const out = await expectOk(tool(state, 'weka', 'cluster', 'drive', 'list', String(containerId), '--json'));
  return JSON.parse(out.stdout) as Array<Record<string, unknown>>;
}

function clustersFile(n: Node): string {
  return join(n.root, 'clusters', 'clusters.json');
}

async function lastChanges(state: string): Promise<unknown[]> {
  return [...(await readLog(state)).at(-1)!.changes];
}

describe('weka cluster drive add of a whole exclusive drive', () => {
  it('adds the device to the container, claims it for the cluster and logs it', async () => {
    const n = await exclusiveNode();
    const before = await showJson(n.state, '/dev/nvme1n1');
    const out = await expectOk(driveAdd(n.state, String(n.containerId), '/dev/nvme1n1', '--json'));
    const drive = JSON.parse(out.stdout) as Record<string, unknown>;
    expect(Object.keys(drive)).toEqual(DRIVE_KEYS);
    expect(drive).toEqual({
      driveUUID: expect.stringMatching(UUID),
      virtualUUID: null,
      devicePath: '/dev/nvme1n1',
      serial: 'EXCL1',
      containerId: n.containerId,
      sizeGiB: 2000,
      status: 'ACTIVE',
    });
    const driveUUID = drive['driveUUID'] as string;
    expect(await lastChanges(n.state)).toEqual([
      { kind: 'drive-add', driveUUID, devicePath: '/dev/nvme1n1', serial: 'EXCL1', containerId: n.containerId },
    ]);
    // The header on disk (read back by another command) carries the cluster's claim; nothing else changed.
    expect(await showJson(n.state, '/dev/nvme1n1')).toEqual({ ...before, clusterGUID: n.guid });
    const saved = JSON.parse(await readFile(clustersFile(n), 'utf8')) as { drives: unknown[] };
    expect(saved.drives).toEqual([{ ...drive, node: 'node-1' }]);
    expect(await driveList(n.state, n.containerId)).toEqual([drive]);
  });

  it('says what it added in text without --json', async () => {
    const n = await exclusiveNode();
    const out = await expectOk(driveAdd(n.state, String(n.containerId), '/dev/nvme1n1'));
    const [drive] = await driveList(n.state, n.containerId);
    expect(out.stdout).toBe(
      `Added drive ${String(drive!['driveUUID'])} (/dev/nvme1n1, serial EXCL1) to container ${n.containerId}\n`,
    );
  });

  type Refusal = [string, (n: Node) => Promise<unknown>, (n: Node) => string[], (n: Node) => Promise<string>];
  const nothing = async () => undefined;
  const add = (device: string) => (n: Node) => [String(n.containerId), device];
  const refusals: Refusal[] = [
    ['an unknown container', nothing, () => ['42', '/dev/nvme1n1'], async () => 'no container with ID 42'],
    [
      'a container on another host',
      (n) => addContainer(n.state, n.guid, 'drive-1', 'node-2'),
      (n) => [String(n.containerId + 1), '/dev/nvme1n1'],
      async (n) =>
        `container ${n.containerId + 1} (drive-1) runs on node-2, not on node node-1; add a drive on the container's host`,
    ],
    [
      'a device the node lacks',
      nothing,
      add('/dev/nvme9n1'),
      async () => '/dev/nvme9n1: no such device on node node-1',
    ],
    [
      'an unsigned device',
      nothing,
      add('/dev/nvme2n1'),
      async () => '/dev/nvme2n1 is not signed for exclusive use (signature: none)',
    ],
    [
      'a device signed for proxy',
      nothing,
      add('/dev/nvme0n1'),
      async () => '/dev/nvme0n1 is not signed for exclusive use (signature: proxy)',
    ],
    [
      'a device already added to the container',
      (n) => addWhole(n),
      add('/dev/nvme1n1'),
      async (n) => {
        const [drive] = await driveList(n.state, n.containerId);
        return `/dev/nvme1n1: Device is already in use as drive ${String(drive!['driveUUID'])} of container ${n.containerId}, cluster ${n.guid}`;
      },
    ],
    [
      "a device already added to another cluster's container",
      async (n) => {
        const other = await createCluster(n.state, 'tenant-b');
        await addWhole(n, await addContainer(n.state, other, 'drive-0'));
      },
      add('/dev/nvme1n1'),
      async (n) => {
        const [drive] = await driveList(n.state, n.containerId + 1);
        const other = (await showJson(n.state, '/dev/nvme1n1'))['clusterGUID'] as string;
        return `/dev/nvme1n1: Device is already in use as drive ${String(drive!['driveUUID'])} of container ${n.containerId + 1}, cluster ${other}`;
      },
    ],
    [
      'a device removed from the cluster but not signed again',
      async (n) => expectOk(driveRemove(n.state, await addWhole(n), '-f')),
      add('/dev/nvme1n1'),
      async (n) => `/dev/nvme1n1 carries the signature of cluster ${n.guid}; sign it again with ${ERASE_WEKA} first`,
    ],
    [
      'a device claimed by another cluster',
      (n) => expectOk(shape(n.state, '/dev/nvme1n1', '--cluster-guid', CLUSTER_B)),
      add('/dev/nvme1n1'),
      async () => `/dev/nvme1n1 carries the signature of cluster ${CLUSTER_B}; sign it again with ${ERASE_WEKA} first`,
    ],
  ];

  it.each(refusals)('refuses %s (exit 65, nothing changed)', async (_what, setup, argv, message) => {
    const n = await exclusiveNode();
    await setup(n);
    const devices = await deviceFiles(n.state);
    const clusters = await readFile(clustersFile(n), 'utf8');
    const args = argv(n);
    const result = await driveAdd(n.state, ...args, '--json');
    const logged = (await readLog(n.state)).at(-1);
    expect(await deviceFiles(n.state)).toEqual(devices);
    expect(await readFile(clustersFile(n), 'utf8')).toBe(clusters);
    expect(logged).toMatchObject({
      argv: ['weka', 'cluster', 'drive', 'add', ...args, '--json'],
      exitCode: 65,
      changes: [],
    });
    expect(result).toEqual({ exitCode: 65, stdout: '', stderr: `weka: ${await message(n)}\n` });
  });

  it.each([
    ['a path outside /dev', '/etc/passwd', 'invalid device path "/etc/passwd"'],
    ['a path climbing out of /dev', '/dev/../etc/passwd', 'invalid device path "/dev/../etc/passwd"'],
    ['a device name without /dev', 'nvme1n1', 'VIRTUAL_UUID must be a UUID, got "nvme1n1"'],
  ])('rejects %s as a usage error (exit 64)', async (_what, device, message) => {
    const n = await exclusiveNode();
    const result = await driveAdd(n.state, String(n.containerId), device);
    expect(result.exitCode).toBe(64);
    expect(result.stderr).toBe(`weka: ${message}\n`);
  });

  it('takes one device path, and names both forms in the usage text', async () => {
    const n = await exclusiveNode();
    const extra = await driveAdd(n.state, String(n.containerId), '/dev/nvme1n1', '/dev/nvme2n1');
    expect(extra.exitCode).toBe(64);
    expect(extra.stderr).toContain('expected CONTAINER_ID VIRTUAL_UUID|DEVICE_PATH');
    expect(WEKA_USAGE).toContain('weka cluster drive add CONTAINER_ID DEVICE_PATH [--json]');
    expect(WEKA_USAGE).toContain('weka cluster drive remove DRIVE_UUID [-f|--force]');
  });
});

describe('weka cluster drive list and remove, both kinds of drive', () => {
  async function bothKinds() {
    const n = await exclusiveNode();
    await expectOk(virtualAdd(n.state, '/dev/nvme0n1', uuid(1), n.guid, 300));
    const virtual = JSON.parse((await expectOk(driveAdd(n.state, String(n.containerId), uuid(1), '--json'))).stdout);
    const whole = JSON.parse(
      (await expectOk(driveAdd(n.state, String(n.containerId), '/dev/nvme1n1', '--json'))).stdout,
    );
    return { ...n, virtual: virtual as Record<string, unknown>, whole: whole as Record<string, unknown> };
  }

  it('lists every key for both kinds, null where it does not apply; the text form names each', async () => {
    const n = await bothKinds();
    expect(n.virtual).toEqual({
      driveUUID: expect.stringMatching(UUID),
      virtualUUID: uuid(1),
      devicePath: null,
      serial: null,
      containerId: n.containerId,
      sizeGiB: 300,
      status: 'ACTIVE',
    });
    const listed = await driveList(n.state, n.containerId);
    expect(listed).toEqual([n.virtual, n.whole]);
    for (const drive of listed) expect(Object.keys(drive)).toEqual(DRIVE_KEYS);
    const text = await expectOk(tool(n.state, 'weka', 'cluster', 'drive', 'list', String(n.containerId)));
    expect(text.stdout).toBe(
      `${String(n.virtual['driveUUID'])}\tvirtual ${uuid(1)}\t300 GiB\tACTIVE\n` +
        `${String(n.whole['driveUUID'])}\t/dev/nvme1n1 serial EXCL1\t2000 GiB\tACTIVE\n`,
    );
  });

  it("is read by the operator's parser, both kinds", async () => {
    const n = await bothKinds();
    expect(parseDriveList(JSON.stringify([n.virtual, n.whole]))).toEqual([
      {
        driveUUID: n.virtual['driveUUID'],
        virtualUUID: uuid(1),
        devicePath: null,
        serial: null,
        containerId: n.containerId,
        sizeGiB: 300,
        status: 'ACTIVE',
      },
      expect.objectContaining({ virtualUUID: null, devicePath: '/dev/nvme1n1', serial: 'EXCL1' }),
    ]);
    expect(parseDriveAdd(JSON.stringify(n.virtual))).toMatchObject({ virtualUUID: uuid(1) });
  });

  it.each<[string, string[]]>([
    ['-f', ['-f']],
    ['--force', ['--force']],
    ['no flag', []],
  ])(
    'removes a whole drive (%s), leaving the cluster claim on the device, and logs its device',
    async (_label, flags) => {
      const n = await bothKinds();
      const driveUUID = n.whole['driveUUID'] as string;
      const out = await expectOk(driveRemove(n.state, ...flags, driveUUID));
      expect(out.stdout).toBe(`Removed drive ${driveUUID}\n`);
      expect(await lastChanges(n.state)).toEqual([
        { kind: 'drive-remove', driveUUID, devicePath: '/dev/nvme1n1', serial: 'EXCL1', containerId: n.containerId },
      ]);
      expect(await driveList(n.state, n.containerId)).toEqual([n.virtual]);
      expect(await showJson(n.state, '/dev/nvme1n1')).toMatchObject({ signature: 'exclusive', clusterGUID: n.guid });
    },
  );

  it('removes a virtual drive with -f and logs it as before', async () => {
    const n = await bothKinds();
    const driveUUID = n.virtual['driveUUID'] as string;
    await expectOk(driveRemove(n.state, driveUUID, '-f'));
    expect(await lastChanges(n.state)).toEqual([
      { kind: 'drive-remove', driveUUID, virtualUUID: uuid(1), containerId: n.containerId },
    ]);
    expect(await driveList(n.state, n.containerId)).toEqual([n.whole]);
  });

  it('refuses an unknown drive UUID (exit 65) and an unknown short option (exit 64)', async () => {
    const n = await bothKinds();
    expect(await driveRemove(n.state, '-f', uuid(99))).toEqual({
      exitCode: 65,
      stdout: '',
      stderr: `weka: no drive with UUID ${uuid(99)}\n`,
    });
    const short = await driveRemove(n.state, '-x', n.whole['driveUUID'] as string);
    expect(short.exitCode).toBe(64);
    expect(short.stderr).toContain('expected DRIVE_UUID');
    expect(await driveList(n.state, n.containerId)).toHaveLength(2);
  });

  it('reads drives saved before whole drives existed as virtual drives', async () => {
    const n = await bothKinds();
    await expectOk(driveRemove(n.state, n.whole['driveUUID'] as string));
    const saved = JSON.parse(await readFile(clustersFile(n), 'utf8')) as { drives: Array<Record<string, unknown>> };
    for (const d of saved.drives) {
      delete d['devicePath'];
      delete d['serial'];
    }
    await writeFile(clustersFile(n), JSON.stringify(saved));
    expect(await driveList(n.state, n.containerId)).toEqual([n.virtual]);
    const driveUUID = n.virtual['driveUUID'] as string;
    await expectOk(driveRemove(n.state, driveUUID));
    expect(await lastChanges(n.state)).toEqual([
      { kind: 'drive-remove', driveUUID, virtualUUID: uuid(1), containerId: n.containerId },
    ]);
  });
});

describe('releasing a whole drive', () => {
  it('keeps the container and its cluster while a whole drive remains', async () => {
    const n = await exclusiveNode();
    const driveUUID = await addWhole(n);
    await expectOk(tool(n.state, 'weka', 'cluster', 'container', 'deactivate', String(n.containerId)));
    const remove = await tool(n.state, 'weka', 'cluster', 'container', 'remove', String(n.containerId));
    expect(remove.exitCode).toBe(65);
    expect(remove.stderr).toBe(
      `weka: container ${n.containerId} (drive-0) still has 1 drive(s) in the cluster (${driveUUID}); remove them first (weka cluster drive remove DRIVE_UUID)\n`,
    );
    const destroy = await tool(n.state, 'weka', 'cluster', 'destroy', n.guid);
    expect(destroy.exitCode).toBe(65);
    expect(destroy.stderr).toContain(`still has 1 container(s): ${n.containerId} (drive-0)`);

    await expectOk(driveRemove(n.state, '-f', driveUUID));
    await expectOk(tool(n.state, 'weka', 'cluster', 'container', 'remove', String(n.containerId)));
    await expectOk(tool(n.state, 'weka', 'cluster', 'destroy', n.guid));
  });

  it('signs the removed drive again only with the flag, which erases the claim, and it can be added again', async () => {
    const n = await exclusiveNode();
    const first = await addWhole(n);
    await expectOk(driveRemove(n.state, '-f', first));
    const claimed = await showJson(n.state, '/dev/nvme1n1');
    expect(claimed['clusterGUID']).toBe(n.guid);

    const refused = await signExclusive(n.state);
    expect(refused.exitCode).toBe(65);
    expect(refused.stderr).toBe(
      `weka-sign-drive: /dev/nvme1n1: /dev/nvme1n1p1 is already a Weka partition (exclusive, physical UUID ${String(claimed['physicalUUID'])}, cluster GUID ${n.guid}); pass ${ERASE_WEKA} to erase it\n`,
    );
    expect(await showJson(n.state, '/dev/nvme1n1')).toEqual(claimed);

    const signed = await expectOk(signExclusive(n.state, ERASE_WEKA));
    const released = await showJson(n.state, '/dev/nvme1n1');
    expect(released).toMatchObject({ signature: 'exclusive', clusterGUID: null, virtualDrives: [] });
    expect(released['physicalUUID']).toMatch(UUID);
    expect(released['physicalUUID']).not.toBe(claimed['physicalUUID']);
    expect(signed.stdout).toContain(
      `erased Weka partition /dev/nvme1n1p1 (exclusive, physical UUID ${String(claimed['physicalUUID'])}, cluster GUID ${n.guid})`,
    );

    const second = await addWhole(n);
    expect(second).not.toBe(first);
    expect(await showJson(n.state, '/dev/nvme1n1')).toMatchObject({ clusterGUID: n.guid });
  });
});
