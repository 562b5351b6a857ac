import { noPlacement, tooFewSlots } from './capacity-errors.js';
import { MIN_CHUNK_GIB } from './constants.js';
import { type DriveSpace, spacesOfType, usableSpaces } from './drive-space.js';
import { placeEvenPieces } from './even-pieces.js';
import { missingDriveType } from './missing-drive-type.js';
import { type PlanOutcome, typePlan } from './plan-types.js';

/**
 * Mode 1: numDrives virtual drives of exactly driveCapacity GiB, on TLC drives only (QLC drives are
 * ignored). Equal pieces fit exactly when the drives' driveCapacity-sized slots add up to numDrives.
 */
export function planFixedSize(spaces: readonly DriveSpace[], numDrives: number, driveCapacity: number): PlanOutcome {
  const tlcSpaces = spacesOfType(spaces, 'TLC');
  if (tlcSpaces.length === 0) {
    return {
      ok: false,
      error: missingDriveType(spaces, 'TLC', `numDrives x driveCapacity (Mode 1) uses TLC drives only`),
    };
  }
  const pool = usableSpaces(tlcSpaces, MIN_CHUNK_GIB);
  const placement = placeEvenPieces(
    pool.map((space) => space.availableGiB),
    pool.map((space) => space.drive.physicalUUID),
    { size: driveCapacity, count: numDrives, bigCount: 0 },
  );
  if (placement === undefined) {
    const neededGiB = numDrives * driveCapacity;
    const error = noPlacement({
      driveType: 'TLC',
      neededGiB,
      spaces: tlcSpaces,
      minDrives: numDrives,
      maxDrives: numDrives,
    });
    if (error.reason === 'not-enough-capacity') return { ok: false, error };
    const slots = pool.reduce((sum, space) => sum + Math.floor(space.availableGiB / driveCapacity), 0);
    return { ok: false, error: tooFewSlots(numDrives, slots, driveCapacity, tlcSpaces) };
  }
  const pieces = placement.map((index) => {
    const space = pool[index];
    if (space === undefined) throw new Error(`no drive at index ${index}`);
    return { space, sizeGiB: driveCapacity };
  });
  return { ok: true, plans: [typePlan('TLC', 'fixed-size', numDrives * driveCapacity, pieces)] };
}
