// Reading a device header back strictly, with defaults for the fields older headers lack, and the
// facts about a device's layout that several commands share (partition names, mountpoints).
import { isRecord } from './files.js';
import type { DeviceHeader, DriveType, HolderRecord, PartitionRecord } from './node-records.js';

/** The GPT partition type GUID of a Weka partition (what `blkid -s PART_ENTRY_TYPE` reports). */
export const WEKA_PARTITION_TYPE = '993ec906-b4e2-11e7-a205-a0a8cd3ea1de';

export const DEFAULT_VENDOR = 'SIM';

export function defaultModel(type: DriveType): string {
  return `SIM NVMe ${type}`;
}

/** A new device as init-node creates it: unsigned, empty, no partitions. */
export function blankDevice(devicePath: string, capacityGiB: number, type: DriveType, serial: string): DeviceHeader {
  return {
    devicePath,
    serial,
    capacityGiB,
    type,
    model: defaultModel(type),
    vendor: DEFAULT_VENDOR,
    partitions: [],
    fstype: null,
    mountpoint: null,
    holders: [],
    dataPresent: false,
    signature: 'none',
    physicalUUID: null,
    clusterGUID: null,
    virtualDrives: [],
  };
}

/** The header in `value`, or undefined if the file vanished; fields added since it was written get defaults. */
export function checkHeader(value: unknown, file: string): DeviceHeader | undefined {
  if (value === undefined) return undefined; // removed between readdir and read: a temp file
  const ok =
    isRecord(value) &&
    typeof value['devicePath'] === 'string' &&
    typeof value['serial'] === 'string' &&
    typeof value['capacityGiB'] === 'number' &&
    (value['type'] === 'TLC' || value['type'] === 'QLC') &&
    ['none', 'proxy', 'exclusive'].includes(value['signature'] as string) &&
    nullOrString(value['physicalUUID']) &&
    Array.isArray(value['virtualDrives']) &&
    optional(value['model'], (v) => typeof v === 'string') &&
    optional(value['vendor'], (v) => typeof v === 'string') &&
    optional(value['partitions'], (v) => Array.isArray(v) && v.every(isPartition)) &&
    optional(value['fstype'], nullOrString) &&
    optional(value['mountpoint'], nullOrString) &&
    optional(value['holders'], (v) => Array.isArray(v) && v.every(isHolder)) &&
    optional(value['dataPresent'], (v) => typeof v === 'boolean') &&
    optional(value['clusterGUID'], nullOrString);
  if (!ok) throw new Error(`corrupt device header ${file}`);
  const header = value as unknown as DeviceHeader;
  return {
    ...header,
    model: header.model ?? defaultModel(header.type),
    vendor: header.vendor ?? DEFAULT_VENDOR,
    partitions: header.partitions ?? [],
    fstype: header.fstype ?? null,
    mountpoint: header.mountpoint ?? null,
    holders: header.holders ?? [],
    dataPresent: header.dataPresent ?? false,
    clusterGUID: header.clusterGUID ?? null,
  };
}

function optional(value: unknown, check: (v: unknown) => boolean): boolean {
  return value === undefined || check(value);
}

function nullOrString(value: unknown): boolean {
  return value === null || typeof value === 'string';
}

function isPartition(value: unknown): value is PartitionRecord {
  return (
    isRecord(value) &&
    typeof value['name'] === 'string' &&
    nullOrString(value['fstype']) &&
    nullOrString(value['mountpoint'])
  );
}

function isHolder(value: unknown): value is HolderRecord {
  return isRecord(value) && typeof value['name'] === 'string' && typeof value['type'] === 'string';
}

/**
 * Partition n of a disk, named as the kernel names it (nvme0n1 → nvme0n1p1, sda → sda1), or as
 * udev names a /dev/disk/ link's partitions (by-id/nvme-x → by-id/nvme-x-part1).
 */
export function partitionPath(disk: string, n: number): string {
  return `${disk}${partitionSeparator(disk)}${n}`;
}

/** The partition number of `name` on `disk` (see partitionPath), or undefined if it is not one of its names. */
export function partitionNumber(disk: string, name: string): number | undefined {
  const prefix = `${disk}${partitionSeparator(disk)}`;
  if (!name.startsWith(prefix)) return undefined;
  const number = name.slice(prefix.length);
  return /^[1-9]\d{0,2}$/.test(number) ? Number(number) : undefined;
}

function partitionSeparator(disk: string): string {
  if (disk.startsWith('/dev/disk/')) return '-part';
  return /\d$/.test(disk) ? 'p' : '';
}

/** Every mountpoint on the device: its own filesystem's and its partitions'. */
export function mountpointsOf(device: DeviceHeader): string[] {
  return [device.mountpoint, ...device.partitions.map((p) => p.mountpoint)].filter((m): m is string => m !== null);
}

/** One line: "model "M", vendor V; partitions /dev/sda1 ext4 on /; empty[; held by /dev/mapper/vg-lv (lvm)]". */
export function describeShape(d: DeviceHeader): string {
  const mounted = (m: string | null) => (m ? ` on ${m}` : '');
  const layout =
    d.signature !== 'none'
      ? `Weka partition (${d.signature})`
      : d.partitions.length
        ? `partitions ${d.partitions.map((p) => `${p.name}${p.fstype ? ` ${p.fstype}` : ''}${mounted(p.mountpoint)}`).join(', ')}`
        : d.fstype
          ? `filesystem ${d.fstype}${mounted(d.mountpoint)}`
          : 'no partitions';
  const held = d.holders.length > 0 ? `; held by ${describeHolders(d.holders)}` : '';
  return `model ${JSON.stringify(d.model)}, vendor ${JSON.stringify(d.vendor)}; ${layout}; ${d.dataPresent ? 'holds data' : 'empty'}${held}`;
}

/** "/dev/mapper/vg0-lv (lvm), /dev/md0 (raid1)". */
export function describeHolders(holders: readonly HolderRecord[]): string {
  return holders.map((h) => `${h.name} (${h.type})`).join(', ');
}
