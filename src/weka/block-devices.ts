// The node's block devices as the host sees them: `lsblk` run in the host's mount namespace
// (through nsenter, from a privileged pod with the host's PID namespace), so that the mounts it
// reports are the host's and not the pod's. Signing chooses and checks devices from this list.
import type { WekaCall } from './call.js';
import { commandText } from './call.js';
import {
  expectArray,
  expectObject,
  fail,
  parseJsonOutput,
  type JsonObject,
  type OutputContext,
} from './json-output.js';

/** The partition type GUID of a Weka partition (what signing writes). */
export const WEKA_PARTITION_TYPE = '993ec906-b4e2-11e7-a205-a0a8cd3ea1de';

const COLUMNS = ['NAME', 'TYPE', 'SIZE', 'SERIAL', 'MODEL', 'VENDOR', 'FSTYPE', 'PARTTYPE', 'MOUNTPOINT'] as const;

export interface BlockDevice {
  /** Full path, such as /dev/nvme0n1 or /dev/nvme0n1p1. */
  readonly path: string;
  /** lsblk's TYPE: disk, part, lvm, rom, loop, … */
  readonly type: string;
  readonly sizeBytes: number;
  readonly serial: string | null;
  readonly model: string | null;
  readonly vendor: string | null;
  readonly fstype: string | null;
  readonly parttype: string | null;
  readonly mountpoint: string | null;
  readonly children: readonly BlockDevice[];
}

export function listBlockDevicesCall(): WekaCall<BlockDevice[]> {
  const argv = [
    'nsenter',
    '--mount',
    '--pid',
    '--target',
    '1',
    '--',
    'lsblk',
    '--json',
    '--bytes',
    '--paths',
    '--output',
    COLUMNS.join(','),
  ];
  return { argv, parse: (stdout) => parseBlockDevices(stdout, commandText(argv)) };
}

export function parseBlockDevices(stdout: string, command = 'lsblk --json'): BlockDevice[] {
  const ctx: OutputContext = { command, stdout };
  const root = expectObject(ctx, parseJsonOutput(ctx), 'output');
  return expectArray(ctx, root['blockdevices'], 'output.blockdevices').map((entry, i) =>
    parseDevice(ctx, entry, `output.blockdevices[${i}]`),
  );
}

function parseDevice(ctx: OutputContext, entry: unknown, where: string): BlockDevice {
  const obj = expectObject(ctx, entry, where);
  const path = text(ctx, obj, 'name', where);
  if (path === null || !path.startsWith('/dev/')) fail(ctx, `${where}.name is not a path under /dev`);
  const type = text(ctx, obj, 'type', where);
  if (type === null) fail(ctx, `${where}.type is missing`);
  const size = obj['size'];
  const sizeBytes = typeof size === 'string' && /^\d+$/.test(size) ? Number(size) : size;
  if (typeof sizeBytes !== 'number' || !Number.isSafeInteger(sizeBytes) || sizeBytes < 0)
    fail(ctx, `${where}.size is not a whole number of bytes`);
  const children = obj['children'] === undefined ? [] : expectArray(ctx, obj['children'], `${where}.children`);
  return {
    path,
    type,
    sizeBytes,
    serial: text(ctx, obj, 'serial', where),
    model: text(ctx, obj, 'model', where),
    vendor: text(ctx, obj, 'vendor', where),
    fstype: text(ctx, obj, 'fstype', where),
    parttype: text(ctx, obj, 'parttype', where),
    mountpoint: text(ctx, obj, 'mountpoint', where),
    children: children.map((child, i) => parseDevice(ctx, child, `${where}.children[${i}]`)),
  };
}

/** lsblk pads some values (MODEL, VENDOR) with spaces and writes null for empty ones. */
function text(ctx: OutputContext, obj: JsonObject, key: string, where: string): string | null {
  const value = obj[key];
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string') fail(ctx, `${where}.${key} is not a string`);
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed;
}

/** Every mountpoint on the device or anything under it (partitions, LVM volumes). */
export function mountsOf(device: BlockDevice): string[] {
  return [
    ...(device.mountpoint === null ? [] : [device.mountpoint]),
    ...device.children.flatMap((child) => mountsOf(child)),
  ];
}

/**
 * The block devices built on the device or on one of its partitions: device-mapper devices (LVM
 * volumes, dm-crypt, multipath: the volume behind a block-mode PersistentVolume, for one) and md
 * arrays. They are the device's holders: the kernel lists them in /sys/block/<dev>/holders (and a
 * partition's in /sys/block/<dev>/<part>/holders), and util-linux's lsblk reads those directories
 * into its tree after the partitions (process_dependencies() in lsblk-cmd/lsblk.c), so in the JSON
 * they are `children` like the partitions, told apart by their TYPE: "part" for a partition, the DM
 * UUID's prefix lower-cased ("lvm", "crypt", "mpath"; "dm" without one) or the md level ("raid1",
 * "linear", ...) for a holder (get_type() there). A device-mapper partition (kpartx's, TYPE "part")
 * is named /dev/mapper/<name> with --paths (mk_dm_name()), so it counts as a holder too. Nothing
 * on a held device shows a mountpoint while the holder is used raw, yet signing it would destroy
 * the holder's data.
 */
export function holdersOf(device: BlockDevice): BlockDevice[] {
  return device.children.flatMap((child) => (isPartition(child) ? holdersOf(child) : [child]));
}

function isPartition(child: BlockDevice): boolean {
  return child.type === 'part' && !child.path.startsWith('/dev/mapper/');
}

/** What the device holds that is not Weka's: its own partitions and filesystems. */
export function foreignContentOf(device: BlockDevice): string[] {
  const own = device.fstype === null ? [] : [`a ${device.fstype} filesystem`];
  const parts = device.children
    .filter((child) => isPartition(child) && child.parttype !== WEKA_PARTITION_TYPE)
    .map((child) => (child.fstype === null ? child.path : `${child.path} (${child.fstype})`));
  return parts.length === 0 ? own : [...own, `partitions ${parts.join(', ')}`];
}

export function hasWekaPartition(device: BlockDevice): boolean {
  return device.children.some((child) => child.parttype === WEKA_PARTITION_TYPE);
}
