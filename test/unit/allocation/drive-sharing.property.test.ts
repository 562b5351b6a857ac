import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  allocateVirtualDrives,
  type AllocationSettings,
  type ContainerDriveClaims,
  DEFAULT_DRIVE_TYPES_RATIO,
  type DriveSharingInput,
  type DriveSharingRequest,
  type DriveType,
  MIN_CHUNK_GIB,
  type PhysicalDrive,
  splitCapacityByRatio,
} from '../../../src/allocation/index.js';
import { sequentialUuids } from './fixtures.js';

const driveTypeArb = fc.constantFrom<DriveType>('TLC', 'QLC');

/** Mostly ordinary drives, with small and huge ones mixed in so fit-to-physical gets exercised. */
const capacityArb = fc.oneof(
  { arbitrary: fc.integer({ min: 100, max: 20000 }), weight: 3 },
  { arbitrary: fc.integer({ min: 384, max: 1200 }), weight: 1 },
  { arbitrary: fc.integer({ min: 20000, max: 60000 }), weight: 1 },
);

/** A node: drives with random capacities and types, partly claimed by other containers. */
const nodeArb = fc
  .array(
    fc.record({
      type: driveTypeArb,
      capacityGiB: capacityArb,
      claimedParts: fc.array(fc.integer({ min: 1, max: 6000 }), { maxLength: 3 }),
    }),
    {
      minLength: 1,
      maxLength: 8,
    },
  )
  .map((specs) => {
    const physicalDrives: PhysicalDrive[] = specs.map((spec, i) => ({
      physicalUUID: `p${i}`,
      serial: `s${i}`,
      capacityGiB: spec.capacityGiB,
      type: spec.type,
      devicePath: `/dev/nvme${i}n1`,
    }));
    const claimed: ContainerDriveClaims[] = specs.map((spec, i) => {
      let left = spec.capacityGiB;
      const parts = spec.claimedParts.filter((part) => (left -= part) >= 0);
      return {
        container: `ns/c${i}`,
        virtualDrives: parts.map((capacityGiB, j) => ({
          virtualUUID: `claimed-${i}-${j}`,
          physicalUUID: `p${i}`,
          capacityGiB,
          serial: `s${i}`,
          type: spec.type,
        })),
      };
    });
    return { physicalDrives, claimed };
  });

const ratioArb = fc
  .record({ tlc: fc.integer({ min: 0, max: 4 }), qlc: fc.integer({ min: 0, max: 4 }) })
  .filter((r) => r.tlc + r.qlc > 0);

const requestArb: fc.Arbitrary<DriveSharingRequest> = fc.oneof(
  fc.record({
    driveCores: fc.integer({ min: 1, max: 4 }),
    numDrives: fc.integer({ min: 1, max: 10 }),
    driveCapacity: fc.integer({ min: 100, max: 5000 }),
  }),
  fc.record({
    driveCores: fc.integer({ min: 1, max: 4 }),
    containerCapacity: fc.integer({ min: 384, max: 60000 }),
    driveTypesRatio: ratioArb,
  }),
  fc.record({ driveCores: fc.integer({ min: 1, max: 4 }), containerCapacity: fc.integer({ min: 384, max: 60000 }) }),
);

const settingsArb: fc.Arbitrary<AllocationSettings> = fc.record({
  maxVirtualDrivesPerCore: fc.integer({ min: 1, max: 8 }),
  enforceMinDrivesPerTypePerCore: fc.boolean(),
  driveTypesRatio: fc.constant(DEFAULT_DRIVE_TYPES_RATIO),
});

const inputArb: fc.Arbitrary<DriveSharingInput> = fc
  .tuple(nodeArb, requestArb, settingsArb)
  .map(([node, request, settings]) => ({ ...node, request, settings }));

function availableBefore(input: DriveSharingInput): Map<string, number> {
  const free = new Map(input.physicalDrives.map((drive) => [drive.physicalUUID, drive.capacityGiB]));
  for (const vd of input.claimed.flatMap((claim) => claim.virtualDrives ?? []))
    free.set(vd.physicalUUID, (free.get(vd.physicalUUID) ?? 0) - vd.capacityGiB);
  return free;
}

/** TLC and QLC GiB the request asks for. */
function shares(request: DriveSharingRequest, settings: AllocationSettings): Record<DriveType, number> {
  if (request.containerCapacity === undefined)
    return { TLC: (request.numDrives ?? 0) * (request.driveCapacity ?? 0), QLC: 0 };
  const { tlcGiB, qlcGiB } = splitCapacityByRatio(
    request.containerCapacity,
    request.driveTypesRatio ?? settings.driveTypesRatio,
  );
  return { TLC: tlcGiB, QLC: qlcGiB };
}

const numRuns = 1500;

describe('allocateVirtualDrives properties', () => {
  it('never over-commits a physical drive and only uses usable drives of the right type', () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const result = allocateVirtualDrives(input, sequentialUuids());
        if (!result.ok) return;
        const free = availableBefore(input);
        const byUuid = new Map(input.physicalDrives.map((drive) => [drive.physicalUUID, drive]));
        for (const vd of result.virtualDrives) {
          const physical = byUuid.get(vd.physicalUUID);
          expect(physical?.type).toBe(vd.type);
          expect(physical?.serial).toBe(vd.serial);
          expect(free.get(vd.physicalUUID) ?? 0).toBeGreaterThanOrEqual(MIN_CHUNK_GIB);
        }
        for (const vd of result.virtualDrives)
          free.set(vd.physicalUUID, (free.get(vd.physicalUUID) ?? 0) - vd.capacityGiB);
        for (const vd of result.virtualDrives) expect(free.get(vd.physicalUUID)).toBeGreaterThanOrEqual(0);
      }),
      { numRuns },
    );
  });

  it('allocates exactly what was requested, per type, and every active type (all or nothing)', () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const result = allocateVirtualDrives(input, sequentialUuids());
        if (!result.ok) return;
        const wanted = shares(input.request, input.settings);
        for (const type of ['TLC', 'QLC'] as const) {
          const sizes = result.virtualDrives.filter((vd) => vd.type === type).map((vd) => vd.capacityGiB);
          expect(sizes.reduce((a, b) => a + b, 0)).toBe(wanted[type]);
          expect(sizes.length > 0).toBe(wanted[type] > 0);
        }
        if (input.request.driveCapacity !== undefined) {
          expect(result.virtualDrives.map((vd) => vd.capacityGiB)).toEqual(
            Array(input.request.numDrives).fill(input.request.driveCapacity),
          );
        }
      }),
      { numRuns },
    );
  });

  it('keeps Mode 2 pieces at least 384 GiB, even splits within 1 GiB, and counts within [minimum, maxDrives]', () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const { request, settings } = input;
        const result = allocateVirtualDrives(input, sequentialUuids());
        if (!result.ok || request.containerCapacity === undefined) return;
        const maxDrives = request.driveCores * settings.maxVirtualDrivesPerCore;
        expect(result.virtualDrives.length).toBeLessThanOrEqual(maxDrives);
        expect(result.virtualDrives.length).toBeGreaterThanOrEqual(request.driveCores);
        const perTypeMinimum =
          result.summary.length === 1 || settings.enforceMinDrivesPerTypePerCore ? request.driveCores : 1;
        for (const summary of result.summary) {
          const sizes = result.virtualDrives.filter((vd) => vd.type === summary.driveType).map((vd) => vd.capacityGiB);
          expect(sizes.length).toBeGreaterThanOrEqual(perTypeMinimum);
          expect(Math.min(...sizes)).toBeGreaterThanOrEqual(MIN_CHUNK_GIB);
          if (summary.strategy === 'even-distribution')
            expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
        }
      }),
      { numRuns },
    );
  });

  it('is deterministic: the same drives and claims in any order give the same result', () => {
    fc.assert(
      fc.property(inputArb, fc.func(fc.integer()), (input, shuffleKey) => {
        const shuffle = <T>(list: readonly T[]): T[] =>
          list
            .map((item, i) => ({ item, key: shuffleKey(i) }))
            .sort((a, b) => a.key - b.key)
            .map(({ item }) => item);
        const first = allocateVirtualDrives(input, sequentialUuids());
        const again = allocateVirtualDrives(input, sequentialUuids());
        const shuffled = allocateVirtualDrives(
          { ...input, physicalDrives: shuffle(input.physicalDrives), claimed: shuffle(input.claimed) },
          sequentialUuids(),
        );
        expect(again).toEqual(first);
        expect(shuffled).toEqual(first);
      }),
      { numRuns: 500 },
    );
  });

  it('draws one fresh, unique UUID per new virtual drive, and none when it refuses', () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        let drawn = 0;
        const result = allocateVirtualDrives(input, () => `uuid-${++drawn}`);
        if (!result.ok) {
          expect(drawn).toBe(0);
          return;
        }
        expect(drawn).toBe(result.virtualDrives.length);
        expect(new Set(result.virtualDrives.map((vd) => vd.virtualUUID)).size).toBe(drawn);
      }),
      { numRuns },
    );
  });
});
