// The fallback strategy for heterogeneous drives: instead of equal shares, pieces that follow the
// drives' free space, largest first. Physical [20000, 500, 500] free with 21000 GiB needed gives
// [20000, 500, 500], which no equal split can fit.

/** A piece and the drive (index into the availability list) it was cut from. */
export interface FitPiece {
  readonly driveIndex: number;
  readonly sizeGiB: number;
}

/**
 * `available` must be sorted most free first and hold only usable drives (>= minChunkGiB free).
 * Returns undefined when the drives cannot hold `neededGiB` in pieces of at least minChunkGiB, or
 * cannot be split into `minCount` pieces. Every piece fits its own drive by construction, so the
 * result is always a valid placement.
 */
export function fitToPhysical(
  available: readonly number[],
  neededGiB: number,
  minCount: number,
  minChunkGiB: number,
): FitPiece[] | undefined {
  const sizes: number[] = [];
  let remaining = neededGiB;
  for (const free of available) {
    if (remaining === 0) break;
    const take = Math.min(free, remaining);
    sizes.push(take);
    remaining -= take;
  }
  if (remaining > 0) return undefined;
  if (!raiseLastPieceToMinimum(sizes, minChunkGiB)) return undefined;
  const pieces = sizes.map((sizeGiB, driveIndex) => ({ driveIndex, sizeGiB }));
  return splitLargestUntil(pieces, minCount, minChunkGiB);
}

/**
 * The last drive may only be needed for a sliver under the minimum chunk. It then takes exactly the
 * minimum, and the largest earlier pieces give back the difference (staying at or above the
 * minimum themselves): [20000, 500, 100] becomes [19716, 500, 384]. Mutates `sizes`.
 */
function raiseLastPieceToMinimum(sizes: number[], minChunkGiB: number): boolean {
  const last = sizes.length - 1;
  const lastSize = sizes[last];
  if (lastSize === undefined || lastSize >= minChunkGiB) return true;
  let deficit = minChunkGiB - lastSize;
  sizes[last] = minChunkGiB;
  const donors = sizes
    .slice(0, last)
    .map((size, index) => ({ size, index }))
    .sort((a, b) => b.size - a.size || a.index - b.index);
  for (const donor of donors) {
    if (deficit === 0) break;
    const give = Math.min(donor.size - minChunkGiB, deficit);
    if (give <= 0) continue;
    sizes[donor.index] = donor.size - give;
    deficit -= give;
  }
  return deficit === 0;
}

/** Halves the largest piece (first one on ties) until there are `minCount`; both halves stay on its drive. */
function splitLargestUntil(pieces: FitPiece[], minCount: number, minChunkGiB: number): FitPiece[] | undefined {
  const result = [...pieces];
  while (result.length < minCount) {
    let largest = -1;
    for (let i = 0; i < result.length; i++) {
      const size = result[i]?.sizeGiB ?? 0;
      if (largest === -1 || size > (result[largest]?.sizeGiB ?? 0)) largest = i;
    }
    const piece = result[largest];
    if (piece === undefined || piece.sizeGiB < 2 * minChunkGiB) return undefined;
    const half = Math.floor(piece.sizeGiB / 2);
    result.splice(
      largest,
      1,
      { driveIndex: piece.driveIndex, sizeGiB: piece.sizeGiB - half },
      { driveIndex: piece.driveIndex, sizeGiB: half },
    );
  }
  return result;
}
