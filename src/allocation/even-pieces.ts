// Pieces that differ by at most 1 GiB: `count` pieces, the first `bigCount` of size + 1, the rest of
// `size`. Even distribution and Mode 1 (where bigCount is 0) both produce them. For this shape,
// whether the pieces fit is decided exactly, which is what lets the placement below never reject a
// feasible strategy because of a greedy choice.

export interface EvenPieces {
  readonly size: number;
  readonly count: number;
  readonly bigCount: number;
}

/** totalGiB over `count` pieces, the remainder going to the first ones: 7001 over 3 is 2334, 2334, 2333. */
export function splitEvenly(totalGiB: number, count: number): EvenPieces {
  return { size: Math.floor(totalGiB / count), count, bigCount: totalGiB % count };
}

export function pieceSizes(pieces: EvenPieces): number[] {
  return Array.from({ length: pieces.count }, (_, i) => (i < pieces.bigCount ? pieces.size + 1 : pieces.size));
}

/**
 * Exact test. A drive with `a` GiB free holding k pieces can take at most min(k, a - size*k) big ones
 * (each big piece costs one extra GiB). That bound is concave in k, so the best total number of big
 * slots over all drives, with exactly `count` pieces placed, is the sum of the `count` largest
 * marginal gains: first every "all pieces big" slot (+1 each, floor(a / (size+1)) per drive), then
 * per drive one slot worth (a mod (size+1)) - size <= 0, then further slots worth -size each. The
 * pieces fit exactly when that best total reaches `bigCount`.
 */
export function evenPiecesFit(available: readonly number[], pieces: EvenPieces): boolean {
  const { size, count, bigCount } = pieces;
  if (count === 0) return true;
  let slots = 0;
  let bigSlots = 0;
  const firstExtraGains: number[] = [];
  for (const free of available) {
    const asSmall = Math.floor(free / size);
    const asBig = Math.floor(free / (size + 1));
    slots += asSmall;
    bigSlots += asBig;
    if (asSmall > asBig) firstExtraGains.push(free - (size + 1) * asBig - size);
  }
  if (slots < count) return false;
  if (bigSlots >= count) return true;
  let extra = count - bigSlots;
  let best = bigSlots;
  firstExtraGains.sort((a, b) => b - a);
  for (const gain of firstExtraGains) {
    if (extra === 0) break;
    best += gain;
    extra -= 1;
  }
  // Whatever is still missing comes from later slots, each worth -size; `slots >= count` guarantees
  // there are enough of them.
  best -= extra * size;
  return best >= bigCount;
}

/**
 * Places the pieces (big ones first) round robin: each goes to the drive holding the fewest pieces of
 * this container so far, most free first, ties by `tieBreakKeys` (physical UUIDs), so a container is
 * spread over as many drives as can hold it. A drive is only taken when the remaining pieces still
 * fit exactly afterwards; since the start fits, some drive always qualifies, so this never fails on
 * feasible input. Returns the drive index of every piece, or undefined when the pieces do not fit.
 */
export function placeEvenPieces(
  available: readonly number[],
  tieBreakKeys: readonly string[],
  pieces: EvenPieces,
): number[] | undefined {
  if (!evenPiecesFit(available, pieces)) return undefined;
  const free = [...available];
  const held = available.map(() => 0);
  const placement: number[] = [];
  let bigLeft = pieces.bigCount;
  let smallLeft = pieces.count - pieces.bigCount;
  while (bigLeft + smallLeft > 0) {
    const isBig = bigLeft > 0;
    const pieceSize = isBig ? pieces.size + 1 : pieces.size;
    const rest: EvenPieces = isBig
      ? { size: pieces.size, count: bigLeft - 1 + smallLeft, bigCount: bigLeft - 1 }
      : { size: pieces.size, count: smallLeft - 1, bigCount: 0 };
    const drive = chooseDrive(free, held, tieBreakKeys, pieceSize, (index) => {
      const after = [...free];
      after[index] = (after[index] ?? 0) - pieceSize;
      return evenPiecesFit(after, rest);
    });
    // Unreachable while evenPiecesFit is exact; kept so a bug there cannot over-commit a drive.
    if (drive === undefined) return undefined;
    free[drive] = (free[drive] ?? 0) - pieceSize;
    held[drive] = (held[drive] ?? 0) + 1;
    placement.push(drive);
    if (isBig) bigLeft -= 1;
    else smallLeft -= 1;
  }
  return placement;
}

/** The best drive by (fewest held, most free, key) that fits the piece and passes `keepsRestFeasible`. */
function chooseDrive(
  free: readonly number[],
  held: readonly number[],
  keys: readonly string[],
  pieceSize: number,
  keepsRestFeasible: (index: number) => boolean,
): number | undefined {
  const rejected = new Set<number>();
  for (;;) {
    let best: number | undefined;
    for (let i = 0; i < free.length; i++) {
      if (rejected.has(i) || (free[i] ?? 0) < pieceSize) continue;
      if (best === undefined || isBetterDrive(i, best, free, held, keys)) best = i;
    }
    if (best === undefined || keepsRestFeasible(best)) return best;
    rejected.add(best);
  }
}

function isBetterDrive(
  i: number,
  j: number,
  free: readonly number[],
  held: readonly number[],
  keys: readonly string[],
): boolean {
  const heldI = held[i] ?? 0;
  const heldJ = held[j] ?? 0;
  if (heldI !== heldJ) return heldI < heldJ;
  const freeI = free[i] ?? 0;
  const freeJ = free[j] ?? 0;
  if (freeI !== freeJ) return freeI > freeJ;
  return (keys[i] ?? '') < (keys[j] ?? '');
}
