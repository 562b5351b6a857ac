import type { AllocationSettings } from './settings.js';
import { belowMinimum, noPlacement, type ShortfallContext, typesDoNotFitTogether } from './capacity-errors.js';
import { MAX_VIRTUAL_DRIVES_PER_CONTAINER, MIN_CHUNK_GIB } from './constants.js';
import { type DriveSpace, spacesOfType, usableSpaces } from './drive-space.js';
import { type DriveSharingError, type InsufficientDriveCapacityError, invalidConfig } from './errors.js';
import { missingDriveType } from './missing-drive-type.js';
import { type PlanOutcome, type TypePlan, typePlan } from './plan-types.js';
import { choiceCount, createTypePlanner, placeChoice, type StrategyChoice, type TypePlanner } from './type-planner.js';
import type { DriveType, DriveTypesRatio } from './types.js';
import { maxVirtualDrives } from './validate-request.js';

/** TLC gets floor(capacity x tlc / (tlc + qlc)); QLC gets the rest, so nothing is lost to rounding. */
export function splitCapacityByRatio(
  containerCapacity: number,
  ratio: DriveTypesRatio,
): { tlcGiB: number; qlcGiB: number } {
  const tlcGiB = Math.floor((containerCapacity * ratio.tlc) / (ratio.tlc + ratio.qlc));
  return { tlcGiB, qlcGiB: containerCapacity - tlcGiB };
}

export interface Share {
  readonly driveType: DriveType;
  readonly gib: number;
  /** Every drive of the type, usable or not (errors report them all). */
  readonly spaces: readonly DriveSpace[];
}

interface ActiveType extends Share {
  readonly planner: TypePlanner;
}

function shortfallContext(type: ActiveType, minDrives: number, maxDrives: number): ShortfallContext {
  return { driveType: type.driveType, neededGiB: type.gib, spaces: type.spaces, minDrives, maxDrives };
}

/**
 * Mode 2: containerCapacity split by the ratio, each active type (share above 0) allocated from its
 * own drives. All or nothing: a failure of either type fails the whole request.
 */
export function planCapacity(
  spaces: readonly DriveSpace[],
  containerCapacity: number,
  ratio: DriveTypesRatio,
  driveCores: number,
  settings: AllocationSettings,
): PlanOutcome {
  const { tlcGiB, qlcGiB } = splitCapacityByRatio(containerCapacity, ratio);
  const describe = (driveType: DriveType, gib: number): string =>
    `containerCapacity ${containerCapacity} GiB with driveTypesRatio tlc ${ratio.tlc} : qlc ${ratio.qlc} gives ${gib} GiB ${driveType}`;
  const shares = activeShares(spaces, tlcGiB, qlcGiB, describe);
  if (!Array.isArray(shares)) return { ok: false, error: shares };

  const maxDrives = maxVirtualDrives(driveCores, settings);
  // With one active type both settings behave the same: that type needs driveCores drives.
  const perType = shares.length === 1 || settings.enforceMinDrivesPerTypePerCore;
  const minTotal = perType ? driveCores * shares.length : Math.max(driveCores, shares.length);
  if (minTotal > MAX_VIRTUAL_DRIVES_PER_CONTAINER) {
    // Only both types with a drive per core each can get here (driveCores itself is validated).
    return {
      ok: false,
      error: invalidConfig(
        'request.driveCores',
        `driveCores ${driveCores} with both TLC and QLC needs at least ${minTotal} virtual drives (${driveCores} of each type, one per drive core), ` +
          `but a container holds at most ${MAX_VIRTUAL_DRIVES_PER_CONTAINER}; lower driveCores or use one drive type (driveTypesRatio with tlc or qlc 0), ` +
          'or set enforceMinDrivesPerTypePerCore to false',
      ),
    };
  }
  if (minTotal > maxDrives) {
    return {
      ok: false,
      error: invalidConfig(
        'settings.maxVirtualDrivesPerCore',
        `driveCores ${driveCores} x maxVirtualDrivesPerCore ${settings.maxVirtualDrivesPerCore} allows ${maxDrives} virtual drives, ` +
          `but TLC and QLC together need at least ${minTotal}; raise maxVirtualDrivesPerCore` +
          (perType ? ' or set enforceMinDrivesPerTypePerCore to false' : ''),
      ),
    };
  }

  const tooSmall = perType
    ? perTypeMinimumError(shares, driveCores, maxDrives, describe, shares.length > 1)
    : combinedMinimumError(shares, containerCapacity, driveCores, maxDrives, describe);
  if (tooSmall !== undefined) return { ok: false, error: tooSmall };

  return planShares(shares, driveCores, maxDrives, settings.enforceMinDrivesPerTypePerCore);
}

/** The drive types with a share above 0, each with its drives; or the error for one the node has none of. */
export function activeShares(
  spaces: readonly DriveSpace[],
  tlcGiB: number,
  qlcGiB: number,
  describe: (driveType: DriveType, gib: number) => string,
): Share[] | DriveSharingError {
  const shares: Share[] = [
    { driveType: 'TLC' as const, gib: tlcGiB, spaces: spacesOfType(spaces, 'TLC') },
    { driveType: 'QLC' as const, gib: qlcGiB, spaces: spacesOfType(spaces, 'QLC') },
  ].filter((share) => share.gib > 0);
  const missing = shares.find((share) => share.spaces.length === 0);
  return missing ? missingDriveType(spaces, missing.driveType, describe(missing.driveType, missing.gib)) : shares;
}

/** Plans the active types, each with at least `minDrives` drives (one type) and all with at most `maxDrives`. */
export function planShares(
  shares: readonly Share[],
  minDrives: number,
  maxDrives: number,
  enforcePerType: boolean,
): PlanOutcome {
  const active: ActiveType[] = shares.map((share) => ({
    ...share,
    planner: createTypePlanner(share.driveType, usableSpaces(share.spaces, MIN_CHUNK_GIB), share.gib, MIN_CHUNK_GIB),
  }));
  const [tlcOrOnly, qlc] = active;
  if (tlcOrOnly === undefined) throw new Error('a valid ratio always activates a drive type');
  if (qlc === undefined) {
    const choice = tlcOrOnly.planner.choose(minDrives, maxDrives);
    if (choice === undefined)
      return { ok: false, error: noPlacement(shortfallContext(tlcOrOnly, minDrives, maxDrives)) };
    return { ok: true, plans: [planOf(tlcOrOnly.planner, choice)] };
  }
  return planBothTypes(tlcOrOnly, qlc, minDrives, maxDrives, enforcePerType);
}

function perTypeMinimumError(
  shares: readonly Share[],
  driveCores: number,
  maxDrives: number,
  describe: (driveType: DriveType, gib: number) => string,
  canRelax: boolean,
): InsufficientDriveCapacityError | undefined {
  const hint = canRelax
    ? 'raise containerCapacity, change driveTypesRatio, or set enforceMinDrivesPerTypePerCore to false'
    : 'raise containerCapacity or lower driveCores';
  for (const share of shares) {
    if (share.gib < driveCores * MIN_CHUNK_GIB) {
      const context = {
        driveType: share.driveType,
        neededGiB: share.gib,
        spaces: share.spaces,
        minDrives: driveCores,
        maxDrives,
      };
      return belowMinimum(context, describe(share.driveType, share.gib), hint);
    }
  }
  return undefined;
}

/** enforceMinDrivesPerTypePerCore false: the total must make driveCores drives, each type at least one. */
function combinedMinimumError(
  shares: readonly Share[],
  containerCapacity: number,
  driveCores: number,
  maxDrives: number,
  describe: (driveType: DriveType, gib: number) => string,
): InsufficientDriveCapacityError | undefined {
  const allSpaces = shares.flatMap((share) => share.spaces);
  const hint = 'raise containerCapacity or change driveTypesRatio';
  for (const share of shares) {
    if (share.gib < MIN_CHUNK_GIB) {
      const context = {
        driveType: share.driveType,
        neededGiB: share.gib,
        spaces: share.spaces,
        minDrives: 1,
        maxDrives,
      };
      return belowMinimum(context, describe(share.driveType, share.gib), hint);
    }
  }
  const mostDrives = shares.reduce((sum, share) => sum + Math.floor(share.gib / MIN_CHUNK_GIB), 0);
  if (mostDrives < driveCores) {
    const context = { neededGiB: containerCapacity, spaces: allSpaces, minDrives: driveCores, maxDrives };
    const split = shares.map((share) => `${share.gib} GiB ${share.driveType}`).join(' and ');
    return belowMinimum(
      context,
      `containerCapacity ${containerCapacity} GiB splits into ${split}, at most ${mostDrives} virtual drives`,
      hint,
    );
  }
  return undefined;
}

/**
 * Searches pairs of strategies: every feasible TLC strategy in order of preference, each with the
 * QLC strategy preferred within what is left of maxDrives. With the per-type rule each type needs
 * driveCores drives. Without it, TLC first tries its proportional part of driveCores (4 of 5 for a
 * 4:1 ratio) and QLC makes up the rest, then every other TLC count; the search is complete, so a
 * feasible pair is never missed.
 */
function planBothTypes(
  tlc: ActiveType,
  qlc: ActiveType,
  driveCores: number,
  maxDrives: number,
  enforcePerType: boolean,
): PlanOutcome {
  const typeMin = enforcePerType ? driveCores : 1;
  const proportional = Math.round((driveCores * tlc.gib) / (tlc.gib + qlc.gib));
  const target = Math.min(Math.max(proportional, 1), Math.max(driveCores - 1, 1));
  const tlcRanges: [number, number][] = enforcePerType
    ? [[driveCores, maxDrives - typeMin]]
    : [
        [target, maxDrives - 1],
        [1, target - 1],
      ];
  const qlcMin = (tlcCount: number): number => (enforcePerType ? driveCores : Math.max(1, driveCores - tlcCount));
  for (const [lo, hi] of tlcRanges) {
    for (const tlcChoice of tlc.planner.candidates(lo, hi)) {
      const tlcCount = choiceCount(tlcChoice);
      const qlcChoice = qlc.planner.choose(qlcMin(tlcCount), maxDrives - tlcCount);
      if (qlcChoice !== undefined)
        return { ok: true, plans: [planOf(tlc.planner, tlcChoice), planOf(qlc.planner, qlcChoice)] };
    }
  }

  // Diagnosis: does one type not fit at all, or do they only fail together?
  const counts = (type: ActiveType): number[] =>
    [...type.planner.candidates(typeMin, maxDrives - typeMin)].map(choiceCount);
  const tlcCounts = counts(tlc);
  if (tlcCounts.length === 0)
    return { ok: false, error: noPlacement(shortfallContext(tlc, typeMin, maxDrives - typeMin)) };
  const qlcCounts = counts(qlc);
  if (qlcCounts.length === 0)
    return { ok: false, error: noPlacement(shortfallContext(qlc, typeMin, maxDrives - typeMin)) };
  const range = (list: readonly number[]): [number, number] => [Math.min(...list), Math.max(...list)];
  const context = {
    neededGiB: tlc.gib + qlc.gib,
    spaces: [...tlc.spaces, ...qlc.spaces],
    minDrives: driveCores,
    maxDrives,
  };
  return { ok: false, error: typesDoNotFitTogether(context, range(tlcCounts), range(qlcCounts)) };
}

function planOf(planner: TypePlanner, choice: StrategyChoice): TypePlan {
  return typePlan(planner.driveType, choice.kind, planner.neededGiB, placeChoice(planner, choice));
}
