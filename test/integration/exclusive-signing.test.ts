// Signing for exclusive use, by every signing type, on nodes whose disks hold a root filesystem,
// mounts, partitions, filesystems, data, volumes built on them (device-mapper holders, as behind a
// block-mode PersistentVolume), and drives already signed for the proxy: what signing
// would destroy unasked is skipped, with the reason in the node's result and an Event, and the
// other devices are still signed and published as the Weka operator publishes exclusive drives.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  decodeSerialsAnnotation,
  decodeSharedDrivesAnnotation,
  EXCLUSIVE_DRIVES_ANNOTATION,
  SHARED_DRIVES_ANNOTATION,
} from '../../src/annotations/index.js';
import type { SimulatedDevice } from '../../deploy/local/fake-nodes.js';
import { addNode, uniqueName, uniqueNamespace } from '../support/harness.js';
import {
  eventReasons,
  readNode,
  startSignDrivesOperation,
  waitFinished,
  type SignDrivesPayloadInput,
} from '../support/manual-operation.js';
import { startTestOperator, type TestOperator } from '../support/operator.js';
import { changeCounts, showDevice, sim, simulatorLog } from '../support/simulator.js';

const ROOT: SimulatedDevice = {
  path: '/dev/sda',
  capacityGiB: 480,
  type: 'TLC',
  model: 'SIM SATA SSD',
  partitions: [
    { name: '/dev/sda1', fstype: 'vfat', mountpoint: '/boot/efi' },
    { name: '/dev/sda2', fstype: 'ext4', mountpoint: '/' },
  ],
};
const MOUNTED: SimulatedDevice = {
  path: '/dev/nvme5n1',
  capacityGiB: 1920,
  type: 'TLC',
  partitions: [{ name: '/dev/nvme5n1p1', fstype: 'xfs', mountpoint: '/var/lib/containers' }],
};
const PARTITIONED: SimulatedDevice = {
  path: '/dev/nvme2n1',
  capacityGiB: 3840,
  type: 'TLC',
  partitions: [{ name: '/dev/nvme2n1p1', fstype: 'ext4', mountpoint: null }],
};
const FILESYSTEM: SimulatedDevice = { path: '/dev/nvme3n1', capacityGiB: 3840, type: 'TLC', fstype: 'xfs' };
const NOT_EMPTY: SimulatedDevice = { path: '/dev/nvme4n1', capacityGiB: 3840, type: 'TLC', dataPresent: true };
const CLEAN: SimulatedDevice[] = [
  { path: '/dev/nvme0n1', capacityGiB: 3840, type: 'TLC' },
  { path: '/dev/nvme1n1', capacityGiB: 7680, type: 'QLC' },
];
const SHARED: SimulatedDevice = { path: '/dev/nvme6n1', capacityGiB: 7680, type: 'TLC' };
/**
 * A whole-disk LVM physical volume whose logical volume backs a block-mode PersistentVolume a pod
 * uses: nothing on it is mounted, and lsblk shows the volume as the disk's child of type lvm.
 */
const HELD: SimulatedDevice = {
  path: '/dev/nvme1n1',
  capacityGiB: 3840,
  type: 'TLC',
  fstype: 'LVM2_member',
  holders: [{ name: '/dev/mapper/vg0-pvc--7f3a', type: 'lvm' }],
};

let op: TestOperator;
let ns: string;

beforeAll(async () => {
  op = await startTestOperator();
  ns = await uniqueNamespace('exclusive-signing');
});
afterAll(async () => {
  await op?.stop();
});

async function nodeWith(
  prefix: string,
  devices: SimulatedDevice[],
): Promise<{ node: string; selector: Record<string, string> }> {
  const node = uniqueName(prefix);
  const selector = { 'weka.io/drive-sharing': uniqueName(prefix) };
  await addNode({ name: node, labels: selector, devices });
  return { node, selector };
}

async function sign(
  name: string,
  payload: Omit<SignDrivesPayloadInput, 'nodeSelector'>,
  selector: Record<string, string>,
) {
  const ref = { namespace: ns, name };
  await startSignDrivesOperation(op, ref, { ...payload, nodeSelector: selector });
  return { ref, done: await waitFinished(ref) };
}

async function exclusiveSerials(node: string): Promise<string[]> {
  const decoded = decodeSerialsAnnotation(
    EXCLUSIVE_DRIVES_ANNOTATION,
    (await readNode(node)).metadata?.annotations?.[EXCLUSIVE_DRIVES_ANNOTATION],
  );
  if (!decoded.ok) throw new Error(decoded.error.message);
  return decoded.serials;
}

async function signatures(node: string, devices: SimulatedDevice[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const d of devices) out[d.path] = (await showDevice(node, d.path)).signature;
  return out;
}

describe('exclusive signing', () => {
  it('all-not-root signs every disk nothing would be lost on, and skips the rest with the reason', async () => {
    const devices = [ROOT, MOUNTED, PARTITIONED, FILESYSTEM, NOT_EMPTY, ...CLEAN];
    const { node, selector } = await nodeWith('excl-all', devices);
    const { ref, done } = await sign('all-not-root', { type: 'all-not-root' }, selector);

    expect(done.status?.phase).toBe('Succeeded');
    expect(done.status?.conditions?.find((c) => c.type === 'Succeeded')).toMatchObject({
      status: 'True',
      reason: 'SignedSomeSkipped',
    });
    const result = done.status?.results?.find((r) => r.node === node);
    expect(result?.error).toBeUndefined();
    expect(result?.drives?.map((d) => d.devicePath).sort()).toEqual(CLEAN.map((d) => d.path).sort());
    // The root disk is not the method's to choose; every other disk not signed says why.
    expect(Object.fromEntries((result?.skipped ?? []).map((s) => [s.devicePath, s.reason]))).toEqual({
      [MOUNTED.path]: 'Mounted',
      [PARTITIONED.path]: 'HasPartitions',
      [FILESYSTEM.path]: 'HasPartitions',
      [NOT_EMPTY.path]: 'NotEmpty',
    });
    const messages = Object.fromEntries((result?.skipped ?? []).map((s) => [s.devicePath, s.message]));
    expect(messages[MOUNTED.path]).toMatch(
      /mounted at \/var\/lib\/containers; a mounted device is never signed: unmount it first/,
    );
    expect(messages[PARTITIONED.path]).toMatch(/set options.allowEraseNonWekaPartitions/);
    expect(messages[NOT_EMPTY.path]).toMatch(/set options.allowNonEmptyDevice/);
    expect(await eventReasons(ns, ref.name)).toEqual(
      expect.arrayContaining(['Normal/NodeSigned', 'Warning/DevicesSkipped']),
    );

    // Nothing that held data was touched; the clean disks are signed for exclusive use, once.
    expect(await signatures(node, devices)).toEqual({
      [ROOT.path]: 'none',
      [MOUNTED.path]: 'none',
      [PARTITIONED.path]: 'none',
      [FILESYSTEM.path]: 'none',
      [NOT_EMPTY.path]: 'none',
      [CLEAN[0]!.path]: 'exclusive',
      [CLEAN[1]!.path]: 'exclusive',
    });
    expect(changeCounts(await simulatorLog(node), 'sign-exclusive', 'device')).toEqual(
      new Map(CLEAN.map((d) => [d.path, 1])),
    );
    // Published as the Weka operator publishes exclusive drives: serials, and the weka.io/drives count.
    const serials = await Promise.all(CLEAN.map(async (d) => (await showDevice(node, d.path)).serial));
    expect(await exclusiveSerials(node)).toEqual(serials.sort());
    expect((await readNode(node)).status?.allocatable?.['weka.io/drives']).toBe('2');

    // Said again with the options that give the data up: those disks are signed now, the mounted one still never.
    const again = await sign(
      'all-not-root-erase',
      { type: 'all-not-root', options: { allowEraseNonWekaPartitions: true, allowNonEmptyDevice: true } },
      selector,
    );
    const second = again.done.status?.results?.find((r) => r.node === node);
    expect(second?.skipped?.map((s) => [s.devicePath, s.reason])).toEqual([[MOUNTED.path, 'Mounted']]);
    expect(await signatures(node, [PARTITIONED, FILESYSTEM, NOT_EMPTY, MOUNTED, ROOT])).toEqual({
      [PARTITIONED.path]: 'exclusive',
      [FILESYSTEM.path]: 'exclusive',
      [NOT_EMPTY.path]: 'exclusive',
      [MOUNTED.path]: 'none',
      [ROOT.path]: 'none',
    });
    expect(await eventReasons(ns, again.ref.name)).toContain('Warning/DataErased');
    expect((await readNode(node)).status?.allocatable?.['weka.io/drives']).toBe('5');
  });

  it('never signs a disk another block device is built on, whatever the options, and signs it once that is gone', async () => {
    const FREE = CLEAN[0]!;
    const { node, selector } = await nodeWith('excl-held', [FREE, HELD]);
    /** The sign commands that reached a device (the reads, weka-sign-drive list, name none). */
    const signCommands = async (path: string) =>
      (await simulatorLog(node)).filter((e) => e.argv[0] === 'weka-sign-drive' && e.argv.includes(path));

    const { ref, done } = await sign('held', { type: 'all-not-root' }, selector);
    expect(done.status?.phase).toBe('Succeeded');
    expect(done.status?.conditions?.find((c) => c.type === 'Succeeded')?.reason).toBe('SignedSomeSkipped');
    const result = done.status?.results?.find((r) => r.node === node);
    expect(result?.drives?.map((d) => d.devicePath)).toEqual([FREE.path]);
    expect(result?.skipped).toEqual([
      {
        devicePath: HELD.path,
        reason: 'Held',
        message: expect.stringMatching(/\/dev\/nvme1n1 is held by \/dev\/mapper\/vg0-pvc--7f3a \(lvm\)/),
      },
    ]);
    expect(await eventReasons(ns, ref.name)).toEqual(
      expect.arrayContaining(['Normal/NodeSigned', 'Warning/DevicesSkipped']),
    );

    // Options that give up partitions, filesystems and data do not give up a volume in use.
    const erase = { allowEraseNonWekaPartitions: true, allowNonEmptyDevice: true, allowEraseWekaPartitions: true };
    const again = await sign('held-erase', { type: 'all-not-root', options: erase }, selector);
    expect(again.done.status?.results?.[0]?.skipped?.map((s) => [s.devicePath, s.reason])).toEqual([
      [HELD.path, 'Held'],
    ]);
    // Decided from lsblk: the sign tool was never run on the held disk, which is as it was.
    expect(await signCommands(HELD.path)).toEqual([]);
    expect(await signatures(node, [FREE, HELD])).toEqual({ [FREE.path]: 'exclusive', [HELD.path]: 'none' });

    // The node's administrator removes the volume (vgchange -an, dmsetup remove): then it is signed.
    await sim(node, 'device', HELD.path, '--clear-holders');
    const freed = await sign(
      'held-freed',
      { type: 'device-paths', devicePaths: [HELD.path], options: erase },
      selector,
    );
    expect(freed.done.status?.results?.[0]?.drives?.map((d) => d.devicePath)).toEqual([HELD.path]);
    expect((await showDevice(node, HELD.path)).signature).toBe('exclusive');
  });

  it('device-paths refuses the root disk even when it is named, and reports a path that is no disk', async () => {
    const { node, selector } = await nodeWith('excl-paths', [ROOT, ...CLEAN]);
    const { done } = await sign(
      'paths',
      {
        type: 'device-paths',
        devicePaths: [ROOT.path, '/dev/sda2', '/dev/nvme9n1', CLEAN[0]!.path],
        options: { allowEraseNonWekaPartitions: true, allowEraseWekaPartitions: true, allowNonEmptyDevice: true },
      },
      selector,
    );
    const result = done.status?.results?.find((r) => r.node === node);
    expect(result?.drives?.map((d) => d.devicePath)).toEqual([CLEAN[0]!.path]);
    expect(result?.skipped?.map((s) => [s.devicePath, s.reason])).toEqual([
      ['/dev/sda2', 'NotADisk'],
      ['/dev/nvme9n1', 'NotFound'],
      [ROOT.path, 'RootDisk'],
    ]);
    expect((await showDevice(node, ROOT.path)).signature).toBe('none');
  });

  it('aws-all and gcp-all sign the local NVMe drives of their cloud only, and fail a node that has none', async () => {
    const local = { capacityGiB: 3840, type: 'TLC' as const };
    const { node, selector } = await nodeWith('excl-cloud', [
      ROOT,
      { path: '/dev/nvme0n1', ...local, model: 'Amazon Elastic Block Store' },
      { path: '/dev/nvme1n1', ...local, model: 'Amazon EC2 NVMe Instance Storage' },
      { path: '/dev/nvme2n1', ...local, model: 'Amazon EC2 NVMe Instance Storage' },
    ]);
    const aws = await sign('aws', { type: 'aws-all' }, selector);
    expect(aws.done.status?.phase).toBe('Succeeded');
    expect(aws.done.status?.results?.[0]?.drives?.map((d) => d.devicePath)).toEqual(['/dev/nvme1n1', '/dev/nvme2n1']);
    expect((await showDevice(node, '/dev/nvme0n1')).signature).toBe('none');

    const gcp = await sign('gcp', { type: 'gcp-all' }, selector);
    expect(gcp.done.status?.phase).toBe('Failed');
    expect(gcp.done.status?.results?.[0]?.error).toMatch(/gcp-all found no disk of model "nvme_card" on the node/);
  });

  it('never gives one drive to both uses: a proxy drive is skipped, and erased only when allowed and empty of virtual drives', async () => {
    const { node, selector } = await nodeWith('excl-both', [SHARED, ...CLEAN]);
    await sign('proxy', { type: 'device-paths', devicePaths: [SHARED.path], shared: true }, selector);
    const { done } = await sign('exclusive', { type: 'all-not-root' }, selector);
    const result = done.status?.results?.find((r) => r.node === node);
    expect(result?.skipped).toEqual([
      {
        devicePath: SHARED.path,
        reason: 'SignedForOtherUse',
        message: expect.stringMatching(/signed for proxy use, not exclusive use.*set options.allowEraseWekaPartitions/),
      },
    ]);
    // Side by side on one node: the shared drive in the shared annotation, the others exclusive.
    const shared = decodeSharedDrivesAnnotation(
      (await readNode(node)).metadata!.annotations![SHARED_DRIVES_ANNOTATION]!,
    );
    expect(shared.ok && shared.drives.map((d) => d.devicePath)).toEqual([SHARED.path]);
    expect(await exclusiveSerials(node)).toHaveLength(CLEAN.length);

    const converted = await sign(
      'convert',
      { type: 'device-paths', devicePaths: [SHARED.path], options: { allowEraseWekaPartitions: true } },
      selector,
    );
    expect(converted.done.status?.results?.[0]?.drives?.map((d) => d.devicePath)).toEqual([SHARED.path]);
    expect((await showDevice(node, SHARED.path)).signature).toBe('exclusive');
    // The drive left the shared list and its capacity, and joined the exclusive ones.
    const after = decodeSharedDrivesAnnotation(
      (await readNode(node)).metadata!.annotations![SHARED_DRIVES_ANNOTATION]!,
    );
    expect(after.ok && after.drives).toEqual([]);
    expect((await readNode(node)).status?.allocatable?.['weka.io/shared-drives-capacity']).toBe('0');
    expect(await exclusiveSerials(node)).toHaveLength(CLEAN.length + 1);
  });
});
