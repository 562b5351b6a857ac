import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type EvenPieces,
  evenPiecesFit,
  pieceSizes,
  placeEvenPieces,
  splitEvenly,
} from '../../../src/allocation/even-pieces.js';
import { bruteForceFits } from './brute-force.js';

const smallCase = fc
  .record({
    available: fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 1, maxLength: 4 }),
    size: fc.integer({ min: 1, max: 12 }),
    count: fc.integer({ min: 0, max: 6 }),
  })
  .chain((c) =>
    fc.record({
      available: fc.constant(c.available),
      pieces: fc
        .integer({ min: 0, max: c.count })
        .map((bigCount): EvenPieces => ({ size: c.size, count: c.count, bigCount })),
    }),
  );

describe('splitEvenly', () => {
  it('gives the remainder to the first pieces: 7001 over 3 is 2334, 2334, 2333', () => {
    expect(pieceSizes(splitEvenly(7001, 3))).toEqual([2334, 2334, 2333]);
  });

  it('always sums to the total with sizes at most 1 GiB apart, largest first', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000_000 }), fc.integer({ min: 1, max: 200 }), (total, count) => {
        const sizes = pieceSizes(splitEvenly(total, count));
        expect(sizes).toHaveLength(count);
        expect(sizes.reduce((a, b) => a + b, 0)).toBe(total);
        expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
        expect([...sizes].sort((a, b) => b - a)).toEqual(sizes);
      }),
    );
  });
});

describe('evenPiecesFit', () => {
  it('counts equal pieces per drive: [1000, 1000] holds two 1000s but not three', () => {
    expect(evenPiecesFit([1000, 1000], { size: 1000, count: 2, bigCount: 0 })).toBe(true);
    expect(evenPiecesFit([1000, 1000], { size: 1000, count: 3, bigCount: 0 })).toBe(false);
  });

  it('knows that [1001, 1000, 1000] fits [2000, 1001] only one way, and still fits', () => {
    expect(evenPiecesFit([2000, 1001], { size: 1000, count: 3, bigCount: 1 })).toBe(true);
    expect(evenPiecesFit([2000, 1000], { size: 1000, count: 3, bigCount: 1 })).toBe(false);
  });

  it('agrees with trying every assignment on small inputs', () => {
    fc.assert(
      fc.property(smallCase, ({ available, pieces }) => {
        expect(evenPiecesFit(available, pieces)).toBe(bruteForceFits(available, pieceSizes(pieces)));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('placeEvenPieces', () => {
  it('places pieces exactly when some assignment exists, never over-committing a drive', () => {
    fc.assert(
      fc.property(smallCase, ({ available, pieces }) => {
        const keys = available.map((_, i) => `drive-${i}`);
        const placement = placeEvenPieces(available, keys, pieces);
        const feasible = bruteForceFits(available, pieceSizes(pieces));
        expect(placement !== undefined).toBe(feasible);
        if (placement === undefined) return;
        expect(placement).toHaveLength(pieces.count);
        const used = available.map(() => 0);
        pieceSizes(pieces).forEach((size, i) => {
          const driveIndex = placement[i] ?? -1;
          used[driveIndex] = (used[driveIndex] ?? 0) + size;
        });
        used.forEach((gib, i) => expect(gib).toBeLessThanOrEqual(available[i] ?? 0));
      }),
      { numRuns: 2000 },
    );
  });

  it('spreads equal pieces over as many drives as can hold one', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 5000 }), { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 384, max: 2000 }),
        fc.integer({ min: 1, max: 12 }),
        (available, size, count) => {
          const placement = placeEvenPieces(
            available,
            available.map((_, i) => `d${i}`),
            { size, count, bigCount: 0 },
          );
          if (placement === undefined) return;
          const canHoldOne = available.filter((free) => free >= size).length;
          expect(new Set(placement).size).toBe(Math.min(count, canHoldOne));
        },
      ),
    );
  });

  it('breaks ties between equally free drives by key', () => {
    expect(placeEvenPieces([1000, 1000], ['b', 'a'], { size: 500, count: 1, bigCount: 0 })).toEqual([1]);
  });
});
