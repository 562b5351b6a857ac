import type { DriveSpace } from './drive-space.js';
import { type EvenPieces, evenPiecesFit, pieceSizes, placeEvenPieces, splitEvenly } from './even-pieces.js';
import { type FitPiece, fitToPhysical } from './fit-to-physical.js';
import type { DriveType } from './types.js';

// Chooses how one drive type's share of containerCapacity is cut into virtual drives. Strategies in
// order of preference: even distribution over n = lo..hi drives, then fit-to-physical. Choosing is
// cheap (feasibility only, memoised); placing is done once, for the choice that wins.

export type StrategyChoice =
  | { readonly kind: 'even-distribution'; readonly pieces: EvenPieces }
  | { readonly kind: 'fit-to-physical'; readonly pieces: readonly FitPiece[] };

export interface PlacedPiece {
  readonly space: DriveSpace;
  readonly sizeGiB: number;
}

export interface TypePlanner {
  readonly driveType: DriveType;
  readonly neededGiB: number;
  /** Usable drives of the type, most free first. */
  readonly pool: readonly DriveSpace[];
  /** Every feasible strategy with a piece count in [lo, hi], most preferred first. */
  candidates(lo: number, hi: number): Generator<StrategyChoice, void, undefined>;
  /** The most preferred feasible strategy with a piece count in [lo, hi]. */
  choose(lo: number, hi: number): StrategyChoice | undefined;
}

export function choiceCount(choice: StrategyChoice): number {
  return choice.kind === 'even-distribution' ? choice.pieces.count : choice.pieces.length;
}

export function createTypePlanner(
  driveType: DriveType,
  pool: readonly DriveSpace[],
  neededGiB: number,
  minChunkGiB: number,
): TypePlanner {
  const available = pool.map((space) => space.availableGiB);
  const evenFits = new Map<number, boolean>();
  const fitByMinCount = new Map<number, FitPiece[] | undefined>();
  // n beyond this would make a share smaller than the minimum chunk; so would every larger n.
  const largestEvenCount = Math.floor(neededGiB / minChunkGiB);

  const evenFeasible = (count: number): boolean => {
    let fits = evenFits.get(count);
    if (fits === undefined) {
      fits = evenPiecesFit(available, splitEvenly(neededGiB, count));
      evenFits.set(count, fits);
    }
    return fits;
  };
  const fitPieces = (minCount: number): FitPiece[] | undefined => {
    if (!fitByMinCount.has(minCount))
      fitByMinCount.set(minCount, fitToPhysical(available, neededGiB, minCount, minChunkGiB));
    return fitByMinCount.get(minCount);
  };

  function* candidates(lo: number, hi: number): Generator<StrategyChoice, void, undefined> {
    const from = Math.max(lo, 1);
    for (let count = from; count <= Math.min(hi, largestEvenCount); count++) {
      if (evenFeasible(count)) yield { kind: 'even-distribution', pieces: splitEvenly(neededGiB, count) };
    }
    const fit = fitPieces(from);
    if (fit !== undefined && fit.length >= from && fit.length <= hi) yield { kind: 'fit-to-physical', pieces: fit };
  }

  return {
    driveType,
    neededGiB,
    pool,
    candidates,
    choose: (lo, hi) => {
      for (const choice of candidates(lo, hi)) return choice;
      return undefined;
    },
  };
}

/** Turns a chosen strategy into pieces on drives. */
export function placeChoice(planner: TypePlanner, choice: StrategyChoice): PlacedPiece[] {
  const { pool } = planner;
  if (choice.kind === 'fit-to-physical') {
    return choice.pieces.map((piece) => ({ space: spaceAt(pool, piece.driveIndex), sizeGiB: piece.sizeGiB }));
  }
  const placement = placeEvenPieces(
    pool.map((space) => space.availableGiB),
    pool.map((space) => space.drive.physicalUUID),
    choice.pieces,
  );
  if (placement === undefined) throw new Error('even distribution was judged feasible but could not be placed');
  const sizes = pieceSizes(choice.pieces);
  return placement.map((driveIndex, i) => ({ space: spaceAt(pool, driveIndex), sizeGiB: sizes[i] ?? 0 }));
}

function spaceAt(pool: readonly DriveSpace[], index: number): DriveSpace {
  const space = pool[index];
  if (space === undefined) throw new Error(`no drive at index ${index}`);
  return space;
}
