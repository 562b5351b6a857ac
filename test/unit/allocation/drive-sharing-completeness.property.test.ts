import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MIN_CHUNK_GIB, type PhysicalDrive, splitCapacityByRatio } from '../../../src/allocation/index.js';
import { pieceSizes, splitEvenly } from '../../../src/allocation/even-pieces.js';
import { bruteForceFits } from './brute-force.js';
import { allocate, qlc, tlc } from './fixtures.js';

// The allocator must never refuse, or fall back to a less preferred strategy, because of a greedy
// placement choice. On small nodes every assignment can be tried, so its answers are checked
// against that exhaustive search.

const smallNode = fc
  .array(fc.integer({ min: 100, max: 3000 }), { minLength: 1, maxLength: 4 })
  .map((capacities) => capacities.map((gib, i) => tlc(`p${i}`, gib)));

const usableFree = (drives: readonly PhysicalDrive[]): number[] =>
  drives.map((drive) => drive.capacityGiB).filter((gib) => gib >= MIN_CHUNK_GIB);

describe('completeness against exhaustive search', () => {
  it('Mode 2 picks the smallest even split that any assignment could place', () => {
    fc.assert(
      fc.property(
        smallNode,
        fc.integer({ min: 384, max: 8000 }),
        fc.integer({ min: 1, max: 2 }),
        fc.integer({ min: 1, max: 3 }),
        (drives, capacity, cores, perCore) => {
          const maxDrives = cores * perCore;
          const free = usableFree(drives);
          let expected: number | undefined;
          for (let n = cores; n <= maxDrives && Math.floor(capacity / n) >= MIN_CHUNK_GIB; n++) {
            if (bruteForceFits(free, pieceSizes(splitEvenly(capacity, n)))) {
              expected = n;
              break;
            }
          }
          const result = allocate(
            drives,
            { driveCores: cores, containerCapacity: capacity, driveTypesRatio: { tlc: 1, qlc: 0 } },
            { settings: { maxVirtualDrivesPerCore: perCore } },
          );
          if (expected === undefined) {
            expect(result.ok && result.summary[0]?.strategy).not.toBe('even-distribution');
          } else {
            expect(result.ok && result.summary[0]).toMatchObject({
              strategy: 'even-distribution',
              virtualDriveCount: expected,
            });
          }
        },
      ),
      { numRuns: 1500 },
    );
  });

  it('Mode 1 succeeds exactly when some assignment places numDrives x driveCapacity', () => {
    fc.assert(
      fc.property(
        smallNode,
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 100, max: 2000 }),
        (drives, numDrives, driveCapacity) => {
          const result = allocate(drives, { driveCores: 1, numDrives, driveCapacity });
          expect(result.ok).toBe(bruteForceFits(usableFree(drives), Array<number>(numDrives).fill(driveCapacity)));
        },
      ),
      { numRuns: 1500 },
    );
  });

  it('Mode 2 with both types succeeds whenever some pair of even splits fits within the count rules', () => {
    const mixedNode = fc
      .tuple(
        fc.array(fc.integer({ min: 100, max: 3000 }), { minLength: 1, maxLength: 3 }),
        fc.array(fc.integer({ min: 100, max: 6000 }), { minLength: 1, maxLength: 3 }),
      )
      .map(([tlcs, qlcs]) => [...tlcs.map((gib, i) => tlc(`t${i}`, gib)), ...qlcs.map((gib, i) => qlc(`q${i}`, gib))]);
    fc.assert(
      fc.property(
        mixedNode,
        fc.integer({ min: 768, max: 16000 }),
        fc.record({ tlc: fc.integer({ min: 1, max: 3 }), qlc: fc.integer({ min: 1, max: 3 }) }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 3 }),
        fc.boolean(),
        (drives, capacity, ratio, cores, perCore, enforce) => {
          const maxDrives = cores * perCore;
          const { tlcGiB, qlcGiB } = splitCapacityByRatio(capacity, ratio);
          const fits = (type: 'TLC' | 'QLC', gib: number, n: number): boolean =>
            Math.floor(gib / n) >= MIN_CHUNK_GIB &&
            bruteForceFits(usableFree(drives.filter((d) => d.type === type)), pieceSizes(splitEvenly(gib, n)));
          let somePairFits = false;
          for (let nT = 1; nT <= maxDrives && !somePairFits; nT++) {
            for (let nQ = 1; nT + nQ <= maxDrives && !somePairFits; nQ++) {
              const countsAllowed = enforce ? nT >= cores && nQ >= cores : nT + nQ >= cores;
              somePairFits = countsAllowed && fits('TLC', tlcGiB, nT) && fits('QLC', qlcGiB, nQ);
            }
          }
          fc.pre(tlcGiB > 0 && qlcGiB > 0);
          const result = allocate(
            drives,
            { driveCores: cores, containerCapacity: capacity, driveTypesRatio: ratio },
            {
              settings: { maxVirtualDrivesPerCore: perCore, enforceMinDrivesPerTypePerCore: enforce },
            },
          );
          if (somePairFits) expect(result.ok).toBe(true);
        },
      ),
      { numRuns: 1500 },
    );
  });
});
