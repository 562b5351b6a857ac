import type { AllocationSettings } from './settings.js';
import { planCapacity } from './capacity-mode.js';
import { driveSpaces } from './drive-space.js';
import type { DriveSharingError } from './errors.js';
import { planFixedSize } from './fixed-size-mode.js';
import type { TypeAllocationSummary, TypePlan } from './plan-types.js';
import type { ContainerDriveClaims, DriveSharingRequest, PhysicalDrive, UuidSource, VirtualDrive } from './types.js';
import { validateDriveSharingInput } from './validate-request.js';

export interface DriveSharingInput {
  /** The node's signed shared drives (weka.io/shared-drives). */
  readonly physicalDrives: readonly PhysicalDrive[];
  /** Every container on the node, any namespace, with the virtual drives its status holds. */
  readonly claimed: readonly ContainerDriveClaims[];
  readonly request: DriveSharingRequest;
  /** Already resolved through the override chain (see resolveSettings). */
  readonly settings: AllocationSettings;
}

export type DriveSharingResult =
  | { readonly ok: true; readonly virtualDrives: VirtualDrive[]; readonly summary: TypeAllocationSummary[] }
  | { readonly ok: false; readonly error: DriveSharingError };

/**
 * Decides the new virtual drives of one drive container. Pure and deterministic: the same input
 * gives the same drives; only the virtual UUIDs come from `newUuid`, and it is called only once the
 * whole request has succeeded, once per virtual drive, TLC drives first.
 */
export function allocateVirtualDrives(input: DriveSharingInput, newUuid: UuidSource): DriveSharingResult {
  const { physicalDrives, claimed, request, settings } = input;
  const mode = validateDriveSharingInput(physicalDrives, claimed, request, settings);
  if ('type' in mode) return { ok: false, error: mode };
  const spaces = driveSpaces(physicalDrives, claimed);
  const outcome =
    mode.kind === 'fixed-size'
      ? planFixedSize(spaces, mode.numDrives, mode.driveCapacity)
      : planCapacity(spaces, mode.containerCapacity, mode.ratio, request.driveCores, settings);
  if (!outcome.ok) return outcome;
  return {
    ok: true,
    virtualDrives: nameVirtualDrives(outcome.plans, newUuid, claimed),
    summary: outcome.plans.map((plan) => plan.summary),
  };
}

/** A UUID source that keeps returning UUIDs already in use is broken, not unlucky. */
const MAX_EXTRA_DRAWS = 32;

export function nameVirtualDrives(
  plans: readonly TypePlan[],
  newUuid: UuidSource,
  claimed: readonly ContainerDriveClaims[],
): VirtualDrive[] {
  const uuids = drawUnusedUuids(
    plans.reduce((sum, plan) => sum + plan.pieces.length, 0),
    newUuid,
    claimed,
  );
  let next = 0;
  return plans.flatMap((plan) =>
    plan.pieces.map((piece) => ({
      virtualUUID: uuids[next++] ?? '',
      physicalUUID: piece.space.drive.physicalUUID,
      capacityGiB: piece.sizeGiB,
      serial: piece.space.drive.serial,
      type: plan.summary.driveType,
    })),
  );
}

/**
 * `count` distinct UUIDs that no claim on the node uses. The new ones are checked against the claims
 * rather than the claims collected into a set: on a node with hundreds of claims that set would be
 * most of the garbage a call makes.
 */
export function drawUnusedUuids(
  count: number,
  newUuid: UuidSource,
  claimed: readonly ContainerDriveClaims[],
): string[] {
  const chosen = new Set<string>();
  const inUse = new Set<string>();
  let draws = 0;
  for (;;) {
    while (chosen.size < count) {
      if (draws++ >= count + MAX_EXTRA_DRAWS)
        throw new Error(`the UUID source returned ${draws - 1} UUIDs but not ${count} distinct unused ones`);
      const uuid = newUuid();
      if (!inUse.has(uuid)) chosen.add(uuid);
    }
    let clashed = false;
    for (const claim of claimed) {
      for (const vd of claim.virtualDrives ?? []) {
        if (chosen.delete(vd.virtualUUID)) {
          inUse.add(vd.virtualUUID);
          clashed = true;
        }
      }
    }
    if (!clashed) return [...chosen];
  }
}
