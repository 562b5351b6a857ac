// Growing a drive container in place. The virtual drives it holds are in its Weka cluster and
// carry data: they stay exactly as they are. Only what the request asks beyond them is allocated,
// as new virtual drives, by the rules of a first allocation (even distribution first, then
// fit-to-physical, the minimum chunk per virtual drive), with the per-core minimum relaxed: the
// first allocation already gave every drive core its drives, so each drive type the increase
// touches needs one new virtual drive, and the container as a whole stays within
// driveCores x maxVirtualDrivesPerCore.
import type { AllocationSettings } from './settings.js';
import { belowMinimum } from './capacity-errors.js';
import { activeShares, planShares, splitCapacityByRatio } from './capacity-mode.js';
import { MIN_CHUNK_GIB } from './constants.js';
import { driveSpaces, type DriveSpace } from './drive-space.js';
import { nameVirtualDrives, type DriveSharingResult } from './drive-sharing.js';
import { invalidConfig } from './errors.js';
import { planFixedSize } from './fixed-size-mode.js';
import type { PlanOutcome } from './plan-types.js';
import type {
  ContainerDriveClaims,
  DriveSharingRequest,
  DriveType,
  DriveTypesRatio,
  PhysicalDrive,
  UuidSource,
  VirtualDrive,
} from './types.js';
import { maxVirtualDrives, validateDriveSharingInput } from './validate-request.js';

export interface GrowthInput {
  readonly physicalDrives: readonly PhysicalDrive[];
  /** Every claim on the node, the growing container's own virtual drives included. */
  readonly claimed: readonly ContainerDriveClaims[];
  /** The virtual drives the container holds now. */
  readonly held: readonly VirtualDrive[];
  /** The whole request (what the container should have in the end), not the difference. */
  readonly request: DriveSharingRequest;
  readonly settings: AllocationSettings;
}

/** What the container asks beyond what it holds: GiB in Mode 2, virtual drives in Mode 1; 0 when nothing. */
export function growthWanted(held: readonly VirtualDrive[], request: DriveSharingRequest): number {
  if (request.containerCapacity !== undefined)
    return Math.max(0, request.containerCapacity - held.reduce((sum, d) => sum + d.capacityGiB, 0));
  if (request.numDrives !== undefined) return Math.max(0, request.numDrives - held.length);
  return 0;
}

/**
 * The new virtual drives that bring `held` up to the request: none when it already has that much
 * (a request below what is held changes nothing: the CRD refuses shrinking). All or nothing, and
 * pure: only the UUIDs come from `newUuid`, once the whole increase succeeded.
 */
export function allocateGrowth(input: GrowthInput, newUuid: UuidSource): DriveSharingResult {
  const { physicalDrives, claimed, held, request, settings } = input;
  const mode = validateDriveSharingInput(physicalDrives, claimed, request, settings);
  if ('type' in mode) return { ok: false, error: mode };
  if (growthWanted(held, request) === 0) return { ok: true, virtualDrives: [], summary: [] };
  const spaces = driveSpaces(physicalDrives, claimed);
  const room = maxVirtualDrives(request.driveCores, settings) - held.length;
  const outcome =
    mode.kind === 'fixed-size'
      ? planFixedSize(spaces, mode.numDrives - held.length, mode.driveCapacity)
      : planCapacityGrowth(spaces, held, mode.containerCapacity, mode.ratio, room, request.driveCores, settings);
  if (!outcome.ok) return outcome;
  return {
    ok: true,
    virtualDrives: nameVirtualDrives(outcome.plans, newUuid, claimed),
    summary: outcome.plans.map((plan) => plan.summary),
  };
}

/**
 * Each type gets what it lacks of its share of the new containerCapacity (by the ratio, as a first
 * allocation of that capacity would split it), so after growing the container holds its ratio
 * exactly. A type already over its share (a ratio inherited from settings that changed) gets
 * nothing, and the other type the whole increase.
 */
export function growthShares(
  held: readonly VirtualDrive[],
  containerCapacity: number,
  ratio: DriveTypesRatio,
): { tlcGiB: number; qlcGiB: number } {
  const heldOf = (type: DriveType) => held.filter((d) => d.type === type).reduce((sum, d) => sum + d.capacityGiB, 0);
  const missing = containerCapacity - heldOf('TLC') - heldOf('QLC');
  if (missing <= 0) return { tlcGiB: 0, qlcGiB: 0 };
  const target = splitCapacityByRatio(containerCapacity, ratio);
  const tlcGiB = Math.min(Math.max(target.tlcGiB - heldOf('TLC'), 0), missing);
  return { tlcGiB, qlcGiB: missing - tlcGiB };
}

function planCapacityGrowth(
  spaces: readonly DriveSpace[],
  held: readonly VirtualDrive[],
  containerCapacity: number,
  ratio: DriveTypesRatio,
  room: number,
  driveCores: number,
  settings: AllocationSettings,
): PlanOutcome {
  const heldGiB = held.reduce((sum, d) => sum + d.capacityGiB, 0);
  const { tlcGiB, qlcGiB } = growthShares(held, containerCapacity, ratio);
  const describe = (driveType: DriveType, gib: number): string =>
    `growing containerCapacity from ${heldGiB} to ${containerCapacity} GiB (driveTypesRatio tlc ${ratio.tlc} : qlc ${ratio.qlc}) adds ${gib} GiB ${driveType}`;
  const shares = activeShares(spaces, tlcGiB, qlcGiB, describe);
  if (!Array.isArray(shares)) return { ok: false, error: shares };
  if (room < shares.length) {
    const limit = held.length + room;
    return {
      ok: false,
      error: invalidConfig(
        'request.containerCapacity',
        `the container holds ${held.length} virtual drives, and driveCores ${driveCores} x maxVirtualDrivesPerCore ${settings.maxVirtualDrivesPerCore} allows ${limit}: ` +
          `growing it needs ${shares.length} more; raise maxVirtualDrivesPerCore, or create another container for the extra capacity`,
      ),
    };
  }
  for (const share of shares) {
    if (share.gib < MIN_CHUNK_GIB) {
      const context = {
        driveType: share.driveType,
        neededGiB: share.gib,
        spaces: share.spaces,
        minDrives: 1,
        maxDrives: room,
      };
      const hint = `grow by more, so that each drive type's part of the increase is at least ${MIN_CHUNK_GIB} GiB`;
      return { ok: false, error: belowMinimum(context, describe(share.driveType, share.gib), hint) };
    }
  }
  // One new drive per type, as enforceMinDrivesPerTypePerCore false with one drive core searches pairs.
  return planShares(shares, 1, room, false);
}
