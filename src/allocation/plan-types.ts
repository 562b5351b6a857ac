import type { DriveSharingError } from './errors.js';
import type { PlacedPiece } from './type-planner.js';
import type { DriveType } from './types.js';

export type StrategyName = 'fixed-size' | 'even-distribution' | 'fit-to-physical';

/** How one drive type was allocated; reported next to the virtual drives. */
export interface TypeAllocationSummary {
  readonly driveType: DriveType;
  readonly strategy: StrategyName;
  readonly neededGiB: number;
  readonly virtualDriveCount: number;
}

/** A placed but not yet named allocation of one type: UUIDs are drawn only once every type succeeded. */
export interface TypePlan {
  readonly summary: TypeAllocationSummary;
  readonly pieces: readonly PlacedPiece[];
}

export type PlanOutcome =
  | { readonly ok: true; readonly plans: readonly TypePlan[] }
  | { readonly ok: false; readonly error: DriveSharingError };

export function typePlan(
  driveType: DriveType,
  strategy: StrategyName,
  neededGiB: number,
  pieces: readonly PlacedPiece[],
): TypePlan {
  return { summary: { driveType, strategy, neededGiB, virtualDriveCount: pieces.length }, pieces };
}
