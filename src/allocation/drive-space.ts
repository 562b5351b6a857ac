import type { DriveSpaceReport } from './errors.js';
import type { ContainerDriveClaims, DriveType, PhysicalDrive } from './types.js';

/** A physical drive's claimed and free space on this node. */
export interface DriveSpace {
  readonly drive: PhysicalDrive;
  readonly claimedGiB: number;
  /** capacity - claimed, never below 0 (a drive over-committed by hand has nothing to give). */
  readonly availableGiB: number;
}

/** Sums every container's virtual drives per physical drive. Claims on unknown drives are ignored. */
export function claimedGiBByPhysicalUUID(claims: readonly ContainerDriveClaims[]): Map<string, number> {
  const claimed = new Map<string, number>();
  for (const claim of claims) {
    for (const vd of claim.virtualDrives ?? []) {
      claimed.set(vd.physicalUUID, (claimed.get(vd.physicalUUID) ?? 0) + vd.capacityGiB);
    }
  }
  return claimed;
}

/** Most free first, ties by physical UUID, so the allocator's choices never depend on input order. */
export function compareByAvailability(a: DriveSpace, b: DriveSpace): number {
  if (a.availableGiB !== b.availableGiB) return b.availableGiB - a.availableGiB;
  return compareStrings(a.drive.physicalUUID, b.drive.physicalUUID);
}

/** Code-unit order, independent of the runtime's locale. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function driveSpaces(drives: readonly PhysicalDrive[], claims: readonly ContainerDriveClaims[]): DriveSpace[] {
  const claimed = claimedGiBByPhysicalUUID(claims);
  return drives
    .map((drive) => {
      const claimedGiB = claimed.get(drive.physicalUUID) ?? 0;
      return { drive, claimedGiB, availableGiB: Math.max(0, drive.capacityGiB - claimedGiB) };
    })
    .sort(compareByAvailability);
}

export function spacesOfType(spaces: readonly DriveSpace[], type: DriveType): DriveSpace[] {
  return spaces.filter((space) => space.drive.type === type);
}

/** Drives with at least `minimumGiB` free; the rest cannot host even the smallest virtual drive. */
export function usableSpaces(spaces: readonly DriveSpace[], minimumGiB: number): DriveSpace[] {
  return spaces.filter((space) => space.availableGiB >= minimumGiB);
}

export function sumAvailable(spaces: readonly DriveSpace[]): number {
  return spaces.reduce((sum, space) => sum + space.availableGiB, 0);
}

export function reportSpaces(spaces: readonly DriveSpace[]): DriveSpaceReport[] {
  return spaces.map((space) => ({
    physicalUUID: space.drive.physicalUUID,
    capacityGiB: space.drive.capacityGiB,
    availableGiB: space.availableGiB,
  }));
}
