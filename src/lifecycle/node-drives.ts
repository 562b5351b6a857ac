// What a node offers for drive sharing: the drives listed in its shared-drives annotation, and the
// extended resources that advertise their capacity to the scheduler. Signing only ever adds to a
// node: the allocator keeps virtual drives on these physical drives, so none may disappear.
import type { PhysicalDrive } from '../allocation/types.js';
import { SHARED_DRIVES_CAPACITY_QLC, SHARED_DRIVES_CAPACITY_TLC } from './names.js';

/**
 * The node's drives after signing `signed`: every drive already listed stays, in its place; a
 * signed drive with the serial of a listed one replaces it (the device path or header may have
 * changed); the others are appended in the order given.
 */
export function mergeSharedDrives(listed: readonly PhysicalDrive[], signed: readonly PhysicalDrive[]): PhysicalDrive[] {
  const latest = new Map<string, PhysicalDrive>();
  for (const drive of signed) latest.set(drive.serial, drive);
  const placed = new Set<string>();
  const merged = listed.map((drive) => {
    const update = latest.get(drive.serial);
    // Only the first entry of a serial is replaced, so a list that repeats one never ends up
    // repeating a physical UUID (which the annotation's reader refuses).
    if (!update || placed.has(drive.serial)) return drive;
    placed.add(drive.serial);
    return update;
  });
  for (const drive of latest.values()) if (!placed.has(drive.serial)) merged.push(drive);
  return merged;
}

export interface SharedCapacityGiB {
  readonly tlc: number;
  readonly qlc: number;
}

/**
 * Total GiB per drive type. A drive without a type (the compact annotation form of the drive-sharing design) counts
 * for neither: the allocator never uses it, so advertising it would over-promise.
 */
export function sharedCapacityGiB(drives: readonly PhysicalDrive[]): SharedCapacityGiB {
  let tlc = 0;
  let qlc = 0;
  for (const drive of drives) {
    if (drive.type === 'TLC') tlc += drive.capacityGiB;
    else if (drive.type === 'QLC') qlc += drive.capacityGiB;
  }
  return { tlc, qlc };
}

/**
 * The node's extended resources, as Kubernetes quantities. The unit is GiB, written as a plain
 * count ("15360", not "15360Gi"), so a pod requests GiB the same way.
 */
export function sharedCapacityResources(capacity: SharedCapacityGiB): Record<string, string> {
  return { [SHARED_DRIVES_CAPACITY_TLC]: String(capacity.tlc), [SHARED_DRIVES_CAPACITY_QLC]: String(capacity.qlc) };
}
