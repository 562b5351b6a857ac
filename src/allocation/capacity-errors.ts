import { MIN_CHUNK_GIB } from './constants.js';
import { type DriveSpace, reportSpaces, sumAvailable, usableSpaces } from './drive-space.js';
import type { CapacityShortfallReason, InsufficientDriveCapacityError, InsufficientDrivesError } from './errors.js';
import type { DriveType } from './types.js';

// Builders for the capacity errors. Each message says what was needed, what the node has, and
// what the user can change.

export interface ShortfallContext {
  readonly driveType?: DriveType;
  readonly neededGiB: number;
  /** All drives of the type (or of both types), usable or not. */
  readonly spaces: readonly DriveSpace[];
  readonly minDrives: number;
  readonly maxDrives: number;
}

const label = (driveType: DriveType | undefined): string => (driveType === undefined ? '' : `${driveType} `);

function shortfall(
  context: ShortfallContext,
  reason: CapacityShortfallReason,
  message: string,
): InsufficientDriveCapacityError {
  const { driveType, neededGiB, spaces, minDrives, maxDrives } = context;
  return {
    type: 'InsufficientDriveCapacity',
    message,
    reason,
    ...(driveType === undefined ? {} : { driveType }),
    neededGiB,
    usableGiB: sumAvailable(usableSpaces(spaces, MIN_CHUNK_GIB)),
    totalAvailableGiB: sumAvailable(spaces),
    physicalDrives: reportSpaces(spaces),
    minDrives,
    maxDrives,
  };
}

function freeList(spaces: readonly DriveSpace[]): string {
  return spaces.length === 0 ? 'none' : `${spaces.map((space) => space.availableGiB).join(', ')} GiB`;
}

/** The request asks for less than minDrives x 384 GiB, which no node could satisfy. */
export function belowMinimum(
  context: ShortfallContext,
  shareDescription: string,
  hint: string,
): InsufficientDriveCapacityError {
  const { driveType, minDrives } = context;
  const minimum = minDrives * MIN_CHUNK_GIB;
  return shortfall(
    context,
    'below-minimum',
    `insufficient ${label(driveType)}capacity: ${shareDescription}, but ${minDrives} ${label(driveType)}virtual drives ` +
      `of at least ${MIN_CHUNK_GIB} GiB need ${minimum} GiB; ${hint}`,
  );
}

/** Not enough usable free space, or enough GiB that no allowed split fits. */
export function noPlacement(context: ShortfallContext): InsufficientDriveCapacityError {
  const { driveType, neededGiB, spaces, minDrives, maxDrives } = context;
  const usable = sumAvailable(usableSpaces(spaces, MIN_CHUNK_GIB));
  const total = sumAvailable(spaces);
  const drivesPhrase = `the node's ${label(driveType)}drives`;
  if (usable < neededGiB) {
    return shortfall(
      context,
      'not-enough-capacity',
      `not enough ${label(driveType)}capacity: need ${neededGiB} GiB, but ${drivesPhrase} have ${usable} GiB usable ` +
        `(${total} GiB free in total; a drive with less than ${MIN_CHUNK_GIB} GiB free is unusable). ` +
        `Free per drive: ${freeList(spaces)}. Free capacity on this node or lower the requested capacity.`,
    );
  }
  return shortfall(
    context,
    'no-split-fits',
    `${label(driveType)}capacity exists but no split fits: need ${neededGiB} GiB and ${usable} GiB is usable, ` +
      `but neither ${minDrives} to ${maxDrives} equal virtual drives (each at least ${MIN_CHUNK_GIB} GiB) ` +
      `nor pieces following ${drivesPhrase}' free space fit. Free per drive: ${freeList(spaces)}. ` +
      `The free space is too fragmented; raise maxVirtualDrivesPerCore or driveCores, or free space on the larger drives.`,
  );
}

/** Each type fits on its own, but no pair of their splits has an allowed total of virtual drives. */
export function typesDoNotFitTogether(
  context: ShortfallContext,
  tlcCounts: readonly [number, number],
  qlcCounts: readonly [number, number],
): InsufficientDriveCapacityError {
  const { minDrives, maxDrives } = context;
  return shortfall(
    context,
    'no-split-fits',
    `TLC and QLC capacity each fit on their own, but not together: the splits that fit have ${tlcCounts[0]} to ${tlcCounts[1]} ` +
      `TLC and ${qlcCounts[0]} to ${qlcCounts[1]} QLC virtual drives, and the container needs between ${minDrives} (driveCores) ` +
      `and ${maxDrives} (driveCores x maxVirtualDrivesPerCore) in total. Raise maxVirtualDrivesPerCore or free space on the drives.`,
  );
}

/** Mode 1: enough GiB, but not that many driveCapacity-sized slots. */
export function tooFewSlots(
  needed: number,
  have: number,
  driveCapacityGiB: number,
  spaces: readonly DriveSpace[],
): InsufficientDrivesError {
  return {
    type: 'InsufficientDrives',
    message:
      `not enough TLC drives: need ${needed} virtual drives of ${driveCapacityGiB} GiB, but the node's TLC drives can hold ` +
      `only ${have} of that size (free per drive: ${freeList(spaces)}). Lower driveCapacity or numDrives, ` +
      `or use containerCapacity so the allocator can choose the split.`,
    needed,
    have,
    driveType: 'TLC',
    driveCapacityGiB,
  };
}
