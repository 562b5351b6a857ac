// Whole exclusive drives in a cluster, as the reference operator handles them: `weka cluster drive
// add CONTAINER_ID DEVICE_PATH`, `drive deactivate` and `drive remove -f DRIVE_UUID`, then
// `weka-sign-drive --allow-erase-weka-partitions -- DEVICE` to erase the cluster's claim. What each
// refuses, what it prints and logs, and the drive JSON both kinds of drive share
// (docs/weka-interface.md, "weka cluster drive").
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WEKA_USAGE } from '../../../deploy/local/weka-sim/weka-tool.js';
import { parseDriveList } from '../../../src/weka/index.js';
import {
  CLUSTER_B,
  addContainer,
  createCluster,
  deviceFiles,
  expectOk,
  nodeDir,
  readLog,
  shape,
  listedDrive,
  sim,
  simRoot,
  tool,
  uuid,
  virtualAdd,
} from './helpers.js';

const ERASE_WEKA = '--allow-erase-weka-partitions';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const GIB = 2 ** 30;
/** The keys of a drive in `weka cluster drive --json`, in order, for both kinds of drive (docs/weka-interface.md). */
const DRIVE_KEYS = ['uuid', 'added_time', 'device_path', 'serial_number', 'size_bytes', 'status'];

interface Node {
  readonly root: string;
  readonly state: string;
  readonly guid: string;
  readonly containerId: number;
}

/**
 * node-1 with /dev/nvme0n1 (serial of its own) signed for proxy, /dev/nvme1n1 (serial EXCL1, 2000
 * GiB) signed for exclusive use and unclaimed, /dev/nvme2n1 unsigned; cluster tenant-a with
 * container drive-0 on node-1.
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
const driveDeactivate = (state: string, ...args: string[]) =>
  tool(state, 'weka', 'cluster', 'drive', 'deactivate', ...args);
const signExclusive = (state: string, ...flags: string[]) =>
  tool(state, 'weka-sign-drive', ...flags, '--', '/dev/nvme1n1');

async function driveList(state: string, containerId: number): Promise<Array<Record<string, unknown>>> {
  const out = await expectOk(tool(state, 'weka', 'cluster', 'drive', '--container', String(containerId), '--json'));
  return JSON.parse(out.stdout) as Array<Record<string, unknown>>;
}

/** Adds /dev/nvme1n1 to the container (or `containerId`) and returns Weka's UUID for it, from the list. */
async function addWhole(n: Node, containerId = n.containerId): Promise<string> {
  await expectOk(driveAdd(n.state, String(containerId), '/dev/nvme1n1'));
  const drive = (await driveList(n.state, containerId)).find((d) => d['device_path'] === '/dev/nvme1n1');
  return drive!['uuid'] as string;
}

/** Deactivates, then removes a drive, as Weka asks. */
async function takeOut(state: string, uuid: string): Promise<void> {
  await expectOk(driveDeactivate(state, uuid, '-f'));
  await expectOk(driveRemove(state, uuid, '-f'));
}

function clustersFile(n: Node): string {
  return join(n.root, 'clusters', 'clusters.json');
}

async function lastChanges(state: string): Promise<unknown[]> {
  return [...(await readLog(state)).at(-1)!.changes];
}

describe('weka cluster drive add of a whole exclusive drive', () => {
  it('adds the device to the container, claims it for the cluster, prints nothing and logs it', async () => {
    const n = await exclusiveNode();
    const before = await listedDrive(n.state, '/dev/nvme1n1');
    const out = await expectOk(driveAdd(n.state, String(n.containerId), '/dev/nvme1n1'));
    expect(out.stdout).toBe('');
    const logged = await lastChanges(n.state);
    const [drive] = await driveList(n.state, n.containerId);
    expect(Object.keys(drive!)).toEqual(DRIVE_KEYS);
    expect(drive).toEqual({
      uuid: expect.stringMatching(UUID),
      added_time: expect.any(String),
      device_path: '/dev/nvme1n1',
      serial_number: 'EXCL1',
      size_bytes: 2000 * GIB,
      status: 'ACTIVE',
    });
    expect(Number.isNaN(Date.parse(drive!['added_time'] as string))).toBe(false);
    const driveUUID = drive!['uuid'] as string;
    expect(logged).toEqual([
      {
        kind: 'drive-add',
        driveUUID,
        devicePath: '/dev/nvme1n1',
        serial: 'EXCL1',
        containerId: n.containerId,
        pool: null,
      },
    ]);
    // The header on disk (read back by another command) carries the cluster's claim; nothing else changed.
    expect(await listedDrive(n.state, '/dev/nvme1n1')).toEqual({ ...before, clusterGUID: n.guid });
    const saved = JSON.parse(await readFile(clustersFile(n), 'utf8')) as { drives: unknown[] };
    expect(saved.drives).toEqual([expect.objectContaining({ driveUUID, node: 'node-1', status: 'ACTIVE' })]);
  });

  type Refusal = [string, (n: Node) => Promise<unknown>, (n: Node) => string[], (n: Node) => Promise<string>];
  const nothing = async () => undefined;
  /** The container a row's setup made. */
  let other = -1;
  const add = (device: string) => (n: Node) => [String(n.containerId), device];
  const refusals: Refusal[] = [
    ['an unknown container', nothing, () => ['42', '/dev/nvme1n1'], async () => 'no container with ID 42'],
    [
      'a container on another host',
      async (n) => (other = await addContainer(nodeDir(n.root, 'node-2'), n.guid, 'drive-1')),
      () => [String(other), '/dev/nvme1n1'],
      async () =>
        `container ${other} (drive-1) runs on node-2, not on node node-1; add a drive on the container's host`,
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
        return `/dev/nvme1n1: Device is already in use by container ${n.containerId}, cluster ${n.guid}`;
      },
    ],
    [
      "a device already added to another cluster's container",
      async (n) => {
        other = await addContainer(n.state, await createCluster(n.state, 'tenant-b'), 'drive-9');
        await addWhole(n, other);
      },
      add('/dev/nvme1n1'),
      async (n) => {
        const cluster = (await listedDrive(n.state, '/dev/nvme1n1')).clusterGUID!;
        return `/dev/nvme1n1: Device is already in use by container ${other}, cluster ${cluster}`;
      },
    ],
    [
      'a device removed from the cluster but not signed again',
      async (n) => takeOut(n.state, await addWhole(n)),
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
    const result = await driveAdd(n.state, ...args);
    const logged = (await readLog(n.state)).at(-1);
    expect(await deviceFiles(n.state)).toEqual(devices);
    expect(await readFile(clustersFile(n), 'utf8')).toBe(clusters);
    expect(logged).toMatchObject({ argv: ['weka', 'cluster', 'drive', 'add', ...args], exitCode: 65, changes: [] });
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

  it('takes one device path, and names every form in the usage text', async () => {
    const n = await exclusiveNode();
    const extra = await driveAdd(n.state, String(n.containerId), '/dev/nvme1n1', '/dev/nvme2n1');
    expect(extra.exitCode).toBe(64);
    expect(extra.stderr).toContain('expected CONTAINER_ID VIRTUAL_UUID|DEVICE_PATH');
    expect(WEKA_USAGE).toContain('weka cluster drive add CONTAINER_ID VIRTUAL_UUID --pool POOL');
    expect(WEKA_USAGE).toContain('weka cluster drive add CONTAINER_ID DEVICE_PATH');
    expect(WEKA_USAGE).toContain('weka cluster drive [DRIVE_UUID...] [--container CONTAINER_ID...] [--json]');
    expect(WEKA_USAGE).toContain('weka cluster drive deactivate DRIVE_UUID... [-f|--force]');
    expect(WEKA_USAGE).toContain('weka cluster drive remove DRIVE_UUID... [-f|--force]');
  });
});

describe('weka cluster drive: listing, deactivating and removing both kinds of drive', () => {
  async function bothKinds() {
    const n = await exclusiveNode();
    await expectOk(virtualAdd(n.state, '/dev/nvme0n1', uuid(1), n.guid, 300));
    await expectOk(driveAdd(n.state, String(n.containerId), uuid(1), '--pool', 'iu4k'));
    const whole = await addWhole(n);
    const listed = await driveList(n.state, n.containerId);
    return { ...n, virtual: listed[0]!, whole: listed.find((d) => d['uuid'] === whole)! };
  }

  it('names a virtual drive by its virtual UUID, on the device it is signed on; the text form lists each', async () => {
    const n = await bothKinds();
    const proxy = await listedDrive(n.state, '/dev/nvme0n1');
    expect(n.virtual).toEqual({
      uuid: uuid(1),
      added_time: expect.any(String),
      device_path: '/dev/nvme0n1',
      serial_number: proxy.serial,
      size_bytes: 300 * GIB,
      status: 'ACTIVE',
    });
    expect(await driveList(n.state, n.containerId)).toEqual([n.virtual, n.whole]);
    const one = await expectOk(tool(n.state, 'weka', 'cluster', 'drive', uuid(1), '--json'));
    expect(JSON.parse(one.stdout)).toEqual([n.virtual]);
    const none = await expectOk(tool(n.state, 'weka', 'cluster', 'drive', uuid(99), '--json'));
    expect(JSON.parse(none.stdout)).toEqual([]);
    const text = await expectOk(tool(n.state, 'weka', 'cluster', 'drive', '--container', String(n.containerId)));
    expect(text.stdout.split('\n')[1]).toContain(`${uuid(1)}  /dev/nvme0n1`);
    expect(text.stdout.split('\n')[2]).toContain(`${String(n.whole['uuid'])}  /dev/nvme1n1  EXCL1`);
  });

  it("is read by the operator's parser, both kinds", async () => {
    const n = await bothKinds();
    expect(parseDriveList(JSON.stringify([n.virtual, n.whole]))).toEqual([
      {
        uuid: uuid(1),
        devicePath: '/dev/nvme0n1',
        serial: n.virtual['serial_number'],
        sizeBytes: 300 * GIB,
        status: 'ACTIVE',
      },
      { uuid: n.whole['uuid'], devicePath: '/dev/nvme1n1', serial: 'EXCL1', sizeBytes: 2000 * GIB, status: 'ACTIVE' },
    ]);
  });

  it('logs the pool a virtual drive was added to', async () => {
    const n = await exclusiveNode();
    await expectOk(virtualAdd(n.state, '/dev/nvme0n1', uuid(1), n.guid, 300));
    await expectOk(driveAdd(n.state, String(n.containerId), uuid(1), '--pool', 'iu4k'));
    expect(await lastChanges(n.state)).toEqual([
      { kind: 'drive-add', driveUUID: uuid(1), virtualUUID: uuid(1), containerId: n.containerId, pool: 'iu4k' },
    ]);
  });

  it('refuses to remove an active drive: it must be deactivated first (exit 65, nothing changed)', async () => {
    const n = await bothKinds();
    const refused = await driveRemove(n.state, '-f', uuid(1));
    expect(refused).toEqual({
      exitCode: 65,
      stdout: '',
      stderr: `weka: drive ${uuid(1)} is ACTIVE: deactivate it first (weka cluster drive deactivate)\n`,
    });
    expect(await driveList(n.state, n.containerId)).toHaveLength(2);
  });

  it.each<[string, string[]]>([
    ['-f', ['-f']],
    ['--force', ['--force']],
    ['no flag', []],
  ])(
    'deactivates, then removes a whole drive (%s), leaving the cluster claim on the device, and logs its device',
    async (_label, flags) => {
      const n = await bothKinds();
      const driveUUID = n.whole['uuid'] as string;
      const change = { driveUUID, devicePath: '/dev/nvme1n1', serial: 'EXCL1', containerId: n.containerId, pool: null };
      expect((await expectOk(driveDeactivate(n.state, ...flags, driveUUID))).stdout).toBe('');
      expect(await lastChanges(n.state)).toEqual([{ kind: 'drive-deactivate', ...change }]);
      expect(await driveList(n.state, n.containerId)).toEqual([n.virtual, { ...n.whole, status: 'INACTIVE' }]);
      expect((await expectOk(driveRemove(n.state, ...flags, driveUUID))).stdout).toBe('');
      expect(await lastChanges(n.state)).toEqual([{ kind: 'drive-remove', ...change }]);
      expect(await driveList(n.state, n.containerId)).toEqual([n.virtual]);
      expect(await listedDrive(n.state, '/dev/nvme1n1')).toMatchObject({ signature: 'exclusive', clusterGUID: n.guid });
    },
  );

  it('deactivates an inactive drive again without a change, and removes a virtual drive', async () => {
    const n = await bothKinds();
    await expectOk(driveDeactivate(n.state, uuid(1)));
    await expectOk(driveDeactivate(n.state, uuid(1)));
    expect(await lastChanges(n.state)).toEqual([]);
    await expectOk(driveRemove(n.state, uuid(1), '-f'));
    expect(await lastChanges(n.state)).toEqual([
      { kind: 'drive-remove', driveUUID: uuid(1), virtualUUID: uuid(1), containerId: n.containerId, pool: 'iu4k' },
    ]);
    expect(await driveList(n.state, n.containerId)).toEqual([n.whole]);
  });

  it("says an unknown drive UUID does not exist, in Weka's words (exit 65), and refuses an unknown short option (exit 64)", async () => {
    const n = await bothKinds();
    for (const command of [driveRemove, driveDeactivate])
      expect(await command(n.state, '-f', uuid(99))).toEqual({
        exitCode: 65,
        stdout: '',
        stderr: `weka: The given drive "${uuid(99)}" does not exist\n`,
      });
    const short = await driveRemove(n.state, '-x', n.whole['uuid'] as string);
    expect(short.exitCode).toBe(64);
    expect(short.stderr).toContain('must be a UUID');
    expect(await driveList(n.state, n.containerId)).toHaveLength(2);
  });
});

describe('releasing a whole drive', () => {
  it('keeps the container in its cluster while a whole drive remains', async () => {
    const n = await exclusiveNode();
    const driveUUID = await addWhole(n);
    await expectOk(tool(n.state, 'weka', 'cluster', 'container', 'deactivate', String(n.containerId)));
    const remove = await tool(n.state, 'weka', 'cluster', 'container', 'remove', String(n.containerId));
    expect(remove.exitCode).toBe(65);
    expect(remove.stderr).toBe(
      `weka: container ${n.containerId} (drive-0) still has 1 drive(s) in the cluster (${driveUUID}); remove them first (weka cluster drive deactivate, then remove)\n`,
    );

    await takeOut(n.state, driveUUID);
    await expectOk(tool(n.state, 'weka', 'cluster', 'container', 'remove', String(n.containerId)));
  });

  it('signs the removed drive again only with the flag, which erases the claim, and it can be added again', async () => {
    const n = await exclusiveNode();
    const first = await addWhole(n);
    await takeOut(n.state, first);
    const claimed = await listedDrive(n.state, '/dev/nvme1n1');
    expect(claimed.clusterGUID).toBe(n.guid);

    const refused = await signExclusive(n.state);
    expect(refused.exitCode).toBe(65);
    expect(refused.stderr).toBe(
      `weka-sign-drive: /dev/nvme1n1: /dev/nvme1n1p1 is already a Weka partition (exclusive, physical UUID ${claimed.physicalUUID!}, cluster GUID ${n.guid}); pass ${ERASE_WEKA} to erase it\n`,
    );
    expect(await listedDrive(n.state, '/dev/nvme1n1')).toEqual(claimed);

    const signed = await expectOk(signExclusive(n.state, ERASE_WEKA));
    const released = await listedDrive(n.state, '/dev/nvme1n1');
    expect(released).toMatchObject({ signature: 'exclusive', clusterGUID: null, virtualDrives: [] });
    expect(released.physicalUUID).toMatch(UUID);
    expect(released.physicalUUID).not.toBe(claimed.physicalUUID);
    expect(signed.stdout).toContain(
      `erased Weka partition /dev/nvme1n1p1 (exclusive, physical UUID ${claimed.physicalUUID!}, cluster GUID ${n.guid})`,
    );

    const second = await addWhole(n);
    expect(second).not.toBe(first);
    expect(await listedDrive(n.state, '/dev/nvme1n1')).toMatchObject({ clusterGUID: n.guid });
  });
});
