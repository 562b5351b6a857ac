// Growing a container in place: only the difference is allocated, as new virtual drives, by the
// rules of a first allocation with the per-core minimum relaxed to one new drive per type.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  allocateGrowth,
  allocateVirtualDrives,
  DEFAULT_ALLOCATION_SETTINGS,
  growthShares,
  growthWanted,
  MIN_CHUNK_GIB,
  type AllocationSettings,
  type ContainerDriveClaims,
  type DriveSharingRequest,
  type PhysicalDrive,
  type VirtualDrive,
} from '../../../src/allocation/index.js';
import { qlc, sequentialUuids, tlc } from './fixtures.js';

const settings: AllocationSettings = { ...DEFAULT_ALLOCATION_SETTINGS };

/** A first allocation, then the growth to `grown`, on the same node. */
function firstThenGrow(
  drives: readonly PhysicalDrive[],
  first: DriveSharingRequest,
  grown: DriveSharingRequest,
  others: readonly ContainerDriveClaims[] = [],
  overrides: Partial<AllocationSettings> = {},
) {
  const s = { ...settings, ...overrides };
  const initial = allocateVirtualDrives(
    { physicalDrives: drives, claimed: others, request: first, settings: s },
    sequentialUuids('old'),
  );
  if (!initial.ok) throw new Error(`first allocation failed: ${initial.error.message}`);
  const held = initial.virtualDrives;
  const claimed = [...others, { container: 'self', virtualDrives: held }];
  const growth = allocateGrowth(
    { physicalDrives: drives, claimed, held, request: grown, settings: s },
    sequentialUuids('new'),
  );
  return { held, growth };
}

const gib = (drives: readonly VirtualDrive[]) => drives.reduce((sum, d) => sum + d.capacityGiB, 0);

describe('growthWanted', () => {
  const held = [{ virtualUUID: 'a', physicalUUID: 'p', capacityGiB: 1000, serial: 's', type: 'TLC' as const }];
  it.each([
    ['Mode 2 above what is held', { driveCores: 1, containerCapacity: 3000 }, 2000],
    ['Mode 2 equal', { driveCores: 1, containerCapacity: 1000 }, 0],
    ['Mode 2 below (never a shrink)', { driveCores: 1, containerCapacity: 500 }, 0],
    ['Mode 1 more drives', { driveCores: 1, numDrives: 3, driveCapacity: 1000 }, 2],
    ['Mode 1 as many', { driveCores: 1, numDrives: 1, driveCapacity: 1000 }, 0],
  ])('%s', (_, request, wanted) => {
    expect(growthWanted(held, request)).toBe(wanted);
  });
});

describe('growthShares', () => {
  const vd = (type: 'TLC' | 'QLC', capacityGiB: number): VirtualDrive => ({
    virtualUUID: `${type}-${capacityGiB}`,
    physicalUUID: 'p',
    capacityGiB,
    serial: 's',
    type,
  });
  it.each([
    [
      'each type its lacking share (1:1, 2000 -> 5000)',
      [vd('TLC', 1000), vd('QLC', 1000)],
      5000,
      { tlc: 1, qlc: 1 },
      { tlcGiB: 1500, qlcGiB: 1500 },
    ],
    ['TLC only', [vd('TLC', 1000)], 4000, { tlc: 1, qlc: 0 }, { tlcGiB: 3000, qlcGiB: 0 }],
    [
      'rounding as a first allocation of the target (1:10)',
      [vd('TLC', 181), vd('QLC', 1819)],
      7001,
      { tlc: 1, qlc: 10 },
      { tlcGiB: 455, qlcGiB: 4546 },
    ],
    [
      'a type over its share gets nothing',
      [vd('TLC', 3000), vd('QLC', 1000)],
      5000,
      { tlc: 1, qlc: 1 },
      { tlcGiB: 0, qlcGiB: 1000 },
    ],
    ['nothing when nothing is missing', [vd('TLC', 3000)], 2000, { tlc: 1, qlc: 0 }, { tlcGiB: 0, qlcGiB: 0 }],
  ])('%s', (_, held, capacity, ratio, expected) => {
    expect(growthShares(held, capacity, ratio)).toEqual(expected);
  });
});

describe('allocateGrowth', () => {
  it('Mode 2: adds only the difference, evenly, and never touches what is held', () => {
    const drives = [tlc('t1', 7680), tlc('t2', 7680), qlc('q1', 15360)];
    const { held, growth } = firstThenGrow(
      drives,
      { driveCores: 2, containerCapacity: 6000, driveTypesRatio: { tlc: 1, qlc: 1 } },
      { driveCores: 2, containerCapacity: 10000, driveTypesRatio: { tlc: 1, qlc: 1 } },
    );
    expect(gib(held)).toBe(6000);
    if (!growth.ok) throw new Error(growth.error.message);
    expect(gib(growth.virtualDrives)).toBe(4000);
    // Even distribution from one drive per type: each type's 2000 GiB as one virtual drive.
    expect(growth.virtualDrives.map((d) => [d.type, d.capacityGiB])).toEqual([
      ['TLC', 2000],
      ['QLC', 2000],
    ]);
    expect(growth.virtualDrives.every((d) => d.virtualUUID.startsWith('new-'))).toBe(true);
  });

  it('Mode 1: adds numDrives minus the drives held, each of driveCapacity', () => {
    const drives = [tlc('t1', 4000), tlc('t2', 4000)];
    const { growth } = firstThenGrow(
      drives,
      { driveCores: 2, numDrives: 2, driveCapacity: 1000 },
      { driveCores: 2, numDrives: 5, driveCapacity: 1000 },
    );
    if (!growth.ok) throw new Error(growth.error.message);
    expect(growth.virtualDrives.map((d) => d.capacityGiB)).toEqual([1000, 1000, 1000]);
  });

  it('nothing to add when the request is what is held, or less', () => {
    const drives = [tlc('t1', 4000)];
    const request = { driveCores: 1, containerCapacity: 2000, driveTypesRatio: { tlc: 1, qlc: 0 } };
    expect(firstThenGrow(drives, request, request).growth).toEqual({ ok: true, virtualDrives: [], summary: [] });
    expect(firstThenGrow(drives, request, { ...request, containerCapacity: 1000 }).growth.ok).toBe(true);
  });

  it('falls back to fit-to-physical when no even split of the increase fits', () => {
    // After the first 800 GiB, the drives have 3200 and 400 free: 3000 more fits only as 2616 + 384.
    const drives = [tlc('t1', 4000), tlc('t2', 400)];
    const { growth } = firstThenGrow(
      drives,
      { driveCores: 1, containerCapacity: 800, driveTypesRatio: { tlc: 1, qlc: 0 } },
      { driveCores: 1, containerCapacity: 4400, driveTypesRatio: { tlc: 1, qlc: 0 } },
    );
    if (!growth.ok) throw new Error(growth.error.message);
    expect(growth.summary[0]?.strategy).toBe('fit-to-physical');
    expect(gib(growth.virtualDrives)).toBe(3600);
  });

  const tlcOnly = (containerCapacity: number) => ({
    driveCores: 1,
    containerCapacity,
    driveTypesRatio: { tlc: 1, qlc: 0 },
  });
  const oneTo10 = (containerCapacity: number) => ({
    driveCores: 1,
    containerCapacity,
    driveTypesRatio: { tlc: 1, qlc: 10 },
  });
  it.each([
    [
      'not enough free space',
      [tlc('t1', 3000)],
      tlcOnly(2000),
      tlcOnly(5000),
      {},
      'InsufficientDriveCapacity',
      /not enough TLC capacity: need 3000 GiB/,
    ],
    [
      "a type's part of the increase below the minimum chunk",
      [tlc('t1', 8000), qlc('q1', 20000)],
      oneTo10(5500),
      oneTo10(5800),
      {},
      'InsufficientDriveCapacity',
      /adds 27 GiB TLC.*grow by more/,
    ],
    [
      'no room left under driveCores x maxVirtualDrivesPerCore',
      [tlc('t1', 800), tlc('t2', 800)],
      tlcOnly(1600),
      tlcOnly(3000),
      { maxVirtualDrivesPerCore: 2 },
      'InvalidDriveSharingConfig',
      /holds 2 virtual drives.*allows 2/,
    ],
  ])('refuses: %s', (_, drives, first, grown, overrides, type, message) => {
    const { held, growth } = firstThenGrow(drives, first, grown, [], overrides);
    expect(held.length).toBeGreaterThan(0);
    if (growth.ok) throw new Error('expected a refusal');
    expect(growth.error.type).toBe(type);
    expect(growth.error.message).toMatch(message);
  });
});

describe('allocateGrowth, properties', () => {
  const nodeArb = fc.array(fc.record({ capacityGiB: fc.integer({ min: 384, max: 12000 }), isQlc: fc.boolean() }), {
    minLength: 1,
    maxLength: 6,
  });
  it('never over-commits a drive, keeps the total at the request, and names only unused UUIDs', () => {
    fc.assert(
      fc.property(
        nodeArb,
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 384, max: 20000 }),
        fc.integer({ min: 0, max: 20000 }),
        fc.constantFrom({ tlc: 1, qlc: 0 }, { tlc: 1, qlc: 1 }, { tlc: 1, qlc: 4 }),
        (specs, driveCores, firstGiB, moreGiB, ratio) => {
          const drives = specs.map((s, i) => (s.isQlc ? qlc(`q${i}`, s.capacityGiB) : tlc(`t${i}`, s.capacityGiB)));
          const first = { driveCores, containerCapacity: firstGiB, driveTypesRatio: ratio };
          const initial = allocateVirtualDrives(
            { physicalDrives: drives, claimed: [], request: first, settings },
            sequentialUuids('old'),
          );
          fc.pre(initial.ok);
          if (!initial.ok) return;
          const held = initial.virtualDrives;
          const request = { ...first, containerCapacity: firstGiB + moreGiB };
          const growth = allocateGrowth(
            { physicalDrives: drives, claimed: [{ container: 'self', virtualDrives: held }], held, request, settings },
            sequentialUuids('old'),
          );
          if (!growth.ok) return;
          const all = [...held, ...growth.virtualDrives];
          expect(gib(all)).toBe(request.containerCapacity);
          expect(new Set(all.map((d) => d.virtualUUID)).size).toBe(all.length);
          expect(all.length).toBeLessThanOrEqual(driveCores * settings.maxVirtualDrivesPerCore);
          for (const d of growth.virtualDrives) expect(d.capacityGiB).toBeGreaterThanOrEqual(MIN_CHUNK_GIB);
          for (const p of drives) {
            const used = all.filter((d) => d.physicalUUID === p.physicalUUID).reduce((s, d) => s + d.capacityGiB, 0);
            expect(used).toBeLessThanOrEqual(p.capacityGiB);
            for (const d of all.filter((v) => v.physicalUUID === p.physicalUUID)) expect(d.type).toBe(p.type);
          }
          // After growing, each type holds what a first allocation of the new capacity would give it.
          if (moreGiB > 0 && ratio.qlc > 0) {
            const tlcHeld = all.filter((d) => d.type === 'TLC').reduce((s, d) => s + d.capacityGiB, 0);
            expect(tlcHeld).toBe(Math.floor((request.containerCapacity * ratio.tlc) / (ratio.tlc + ratio.qlc)));
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
