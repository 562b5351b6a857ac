// What a node offers for drive sharing: the drives listed in its shared-drives annotation, and the
// extended resources that advertise their capacity to the scheduler. The list follows what the
// node's devices report whenever they are read (a sign-drives operation reads them all).
import type { PhysicalDrive } from '../allocation/types.js';
import { blockedDrivesOf, blockedSharedUUIDs, type BlockedDrives } from './blocked-drives.js';
import {
  decodeSerialsAnnotation,
  exclusiveDrivesResource,
  EXCLUSIVE_DRIVES_ANNOTATION,
} from '../annotations/exclusive-drives.js';
import { decodeSharedDrivesAnnotation, SHARED_DRIVES_ANNOTATION } from '../annotations/shared-drives.js';
import { SHARED_DRIVES_CAPACITY_QLC, SHARED_DRIVES_CAPACITY_TLC } from '../api/names.js';
import { sameQuantity } from '../api/quantity.js';

/**
 * The node's drives as its devices report them now, keyed by physical UUID (serials may be empty
 * or repeat): every listed drive still present stays in its place, updated from what its device
 * reports (the device path may have changed); the present drives not listed yet are appended in
 * the order given. A listed drive whose physical UUID is on none of the devices read (the disk was
 * wiped or signed again, which also erased its virtual drives, or it was taken out) is dropped.
 */
export function reconcileSharedDrives(
  listed: readonly PhysicalDrive[],
  present: readonly PhysicalDrive[],
): { drives: PhysicalDrive[]; dropped: PhysicalDrive[] } {
  const now = new Map(present.map((d) => [d.physicalUUID, d]));
  const drives: PhysicalDrive[] = [];
  const dropped: PhysicalDrive[] = [];
  for (const drive of listed) {
    const current = now.get(drive.physicalUUID);
    if (!current) dropped.push(drive);
    else if (!drives.some((d) => d.physicalUUID === drive.physicalUUID)) drives.push(current);
  }
  for (const drive of now.values()) if (!drives.some((d) => d.physicalUUID === drive.physicalUUID)) drives.push(drive);
  return { drives, dropped };
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

/**
 * The extended resources a node's drive annotations promise: its shared GiB per drive type and
 * its exclusive drives that are not blocked. Undefined when an annotation cannot be read: nothing
 * is promised from it then (the allocator refuses such a node too, and says why).
 */
export function promisedResources(annotations: Readonly<Record<string, string>>): Record<string, string> | undefined {
  const shared = decodeSharedDrivesAnnotation(annotations[SHARED_DRIVES_ANNOTATION] ?? '[]');
  const signed = decodeSerialsAnnotation(EXCLUSIVE_DRIVES_ANNOTATION, annotations[EXCLUSIVE_DRIVES_ANNOTATION]);
  const blocked = blockedDrivesOf(annotations);
  if (!shared.ok || !signed.ok || !blocked.ok) return undefined;
  return nodeResources(shared.drives, signed.serials, blocked.blocked);
}

/** The extended resources of a node's drives: a blocked drive offers nothing. */
export function nodeResources(
  shared: readonly PhysicalDrive[],
  exclusive: readonly string[],
  blocked: BlockedDrives,
): Record<string, string> {
  const out = blockedSharedUUIDs(shared, blocked);
  return {
    ...sharedCapacityResources(sharedCapacityGiB(shared.filter((d) => !out.has(d.physicalUUID)))),
    ...exclusiveDrivesResource(exclusive, blocked.serials),
  };
}

/** The promised resources a node's allocatable does not show as promised (empty: it shows them all). */
export function unpublishedResources(
  promised: Readonly<Record<string, string>>,
  allocatable: Readonly<Record<string, string>> | undefined,
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(promised).filter(([name, value]) => !sameQuantity(allocatable?.[name], value)),
  );
}
