import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fitToPhysical } from '../../../src/allocation/fit-to-physical.js';

const sizes = (pieces: ReturnType<typeof fitToPhysical>) => pieces?.map((piece) => piece.sizeGiB);

describe('fitToPhysical', () => {
  it('follows the drives, largest first: [20000, 500, 500] for 21000 GiB', () => {
    expect(fitToPhysical([20000, 500, 500], 21000, 3, 384)).toEqual([
      { driveIndex: 0, sizeGiB: 20000 },
      { driveIndex: 1, sizeGiB: 500 },
      { driveIndex: 2, sizeGiB: 500 },
    ]);
  });

  it('stops taking drives once the need is met', () => {
    expect(sizes(fitToPhysical([5000, 3000, 2000], 6000, 1, 384))).toEqual([5000, 1000]);
  });

  it('splits the largest piece in halves, both on its drive, until there are minCount pieces', () => {
    expect(fitToPhysical([20000, 500, 500], 21000, 4, 384)).toEqual([
      { driveIndex: 0, sizeGiB: 10000 },
      { driveIndex: 0, sizeGiB: 10000 },
      { driveIndex: 1, sizeGiB: 500 },
      { driveIndex: 2, sizeGiB: 500 },
    ]);
  });

  it('raises a last piece under the minimum chunk and takes the difference from the largest piece', () => {
    expect(sizes(fitToPhysical([20000, 500, 500], 20600, 3, 384))).toEqual([19716, 500, 384]);
  });

  it('gives up when no earlier piece can spare the difference', () => {
    expect(fitToPhysical([400, 400], 500, 1, 384)).toBeUndefined();
  });

  it('gives up when the drives hold less than needed', () => {
    expect(fitToPhysical([1000, 500], 2000, 1, 384)).toBeUndefined();
  });

  it('gives up when a piece too small to halve would have to be split', () => {
    expect(fitToPhysical([700], 700, 2, 384)).toBeUndefined();
  });

  it('always sums to the need, with every piece at least the minimum and within its drive', () => {
    fc.assert(
      fc.property(
        fc
          .array(fc.integer({ min: 384, max: 30000 }), { minLength: 1, maxLength: 10 })
          .map((list) => list.sort((a, b) => b - a)),
        fc.integer({ min: 384, max: 100000 }),
        fc.integer({ min: 1, max: 16 }),
        (available, needed, minCount) => {
          const pieces = fitToPhysical(available, needed, minCount, 384);
          if (pieces === undefined) return;
          expect(pieces.reduce((sum, piece) => sum + piece.sizeGiB, 0)).toBe(needed);
          expect(pieces.length).toBeGreaterThanOrEqual(minCount);
          const used = available.map(() => 0);
          for (const piece of pieces) {
            expect(piece.sizeGiB).toBeGreaterThanOrEqual(384);
            used[piece.driveIndex] = (used[piece.driveIndex] ?? 0) + piece.sizeGiB;
          }
          used.forEach((gib, i) => expect(gib).toBeLessThanOrEqual(available[i] ?? 0));
        },
      ),
    );
  });
});
