// The upper bounds of a request: what no node, no setting and no status could ever give is refused
// by the pure validation (as a refusal that waits for a spec change), and the allocator never
// gives more virtual drives than the status can list or the setting allows per drive core. The
// CRD's CEL rules refuse the same bounds where they can see them (src/api/schemas/capacity.ts).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  allocateVirtualDrives,
  DEFAULT_ALLOCATION_SETTINGS,
  MAX_DRIVE_CAPACITY_GIB,
  MAX_NODE_CAPACITY_GIB,
  MAX_VIRTUAL_DRIVES_PER_CONTAINER,
  MAX_VIRTUAL_DRIVES_PER_CORE_CEILING,
  maxVirtualDrives,
  type DriveSharingRequest,
} from '../../../src/allocation/index.js';
import { CAPACITY_RULES, MAX_VIRTUAL_DRIVES } from '../../../src/api/index.js';
import { allocate, expectError, expectOk, qlc, sequentialUuids, tlc } from './fixtures.js';

const PIB = 1024 * 1024;
/** Room for 130 virtual drives of 384 GiB of each type. */
const bigNode = [tlc('t1', 50_000), qlc('q1', 50_000)];

describe('bounds refused before any drive is looked at', () => {
  it.each<{ name: string; request: DriveSharingRequest; settings?: object; field: string; message: RegExp }>([
    {
      name: 'the issue: numDrives 300 x driveCapacity 1 on 2 drive cores',
      request: { driveCores: 2, numDrives: 300, driveCapacity: 1 },
      field: 'request.numDrives',
      message:
        /^numDrives 300 asks for 300 virtual drives; at most 8 per drive core \(driveCores 2\) = 16, and never more than 256; ask for numDrives at most 16, or more driveCores$/,
    },
    {
      name: 'more per drive core than the setting (40 on 1 core)',
      request: { driveCores: 1, numDrives: 40, driveCapacity: 400 },
      field: 'request.numDrives',
      message: /numDrives 40 asks for 40 virtual drives; at most 8 per drive core \(driveCores 1\) = 8,/,
    },
    {
      name: 'more than the status lists, with cores enough (257 on 40 cores)',
      request: { driveCores: 40, numDrives: 257, driveCapacity: 400 },
      field: 'request.numDrives',
      message: /= 320, and never more than 256; ask for numDrives at most 256$/,
    },
    {
      name: 'more per drive core than a lowered setting',
      request: { driveCores: 2, numDrives: 5, driveCapacity: 400 },
      settings: { maxVirtualDrivesPerCore: 2 },
      field: 'request.numDrives',
      message: /at most 2 per drive core \(driveCores 2\) = 4/,
    },
    {
      name: 'a virtual drive larger than any physical drive',
      request: { driveCores: 1, numDrives: 1, driveCapacity: 2 * PIB },
      field: 'request.driveCapacity',
      message: /driveCapacity 2097152 GiB is larger than any physical drive .*at most 1048576 GiB \(1 PiB\)/,
    },
    {
      name: 'numDrives x driveCapacity more than any node holds',
      request: { driveCores: 4, numDrives: 32, driveCapacity: PIB },
      field: 'request.driveCapacity',
      message: /numDrives 32 x driveCapacity 1048576 GiB = 33554432 GiB is more than any node holds/,
    },
    {
      name: 'containerCapacity more than any node holds',
      request: { driveCores: 1, containerCapacity: 32 * PIB, driveTypesRatio: { tlc: 1, qlc: 0 } },
      field: 'request.containerCapacity',
      message: /containerCapacity 33554432 GiB is more than any node holds \(at most 16777216 GiB \(16 PiB\)\)/,
    },
    {
      name: 'more drive cores than a container holds virtual drives',
      request: { driveCores: 300, containerCapacity: 300 * 384, driveTypesRatio: { tlc: 1, qlc: 0 } },
      field: 'request.driveCores',
      message: /driveCores 300 asks for at least 300 virtual drives .* at most 256/,
    },
    {
      name: 'a drive per core of each of two types, more than a container holds (258)',
      request: { driveCores: 129, containerCapacity: 2 * 129 * 384, driveTypesRatio: { tlc: 1, qlc: 1 } },
      field: 'request.driveCores',
      message:
        /driveCores 129 with both TLC and QLC needs at least 258 virtual drives .* at most 256; lower driveCores or use one drive type/,
    },
    {
      name: 'a maxVirtualDrivesPerCore above what any configuration allows',
      request: { driveCores: 1, containerCapacity: 1000 },
      settings: { maxVirtualDrivesPerCore: 65 },
      field: 'settings.maxVirtualDrivesPerCore',
      message: /maxVirtualDrivesPerCore must be at most 64, got 65/,
    },
  ])('$name', ({ request, settings, field, message }) => {
    const error = expectError(allocate(bigNode, request, settings ? { settings } : {}));
    expect(error).toMatchObject({ type: 'InvalidDriveSharingConfig', field });
    expect(error.message).toMatch(message);
  });

  it('allows exactly the bound: 8 per drive core, or what a raised setting allows', () => {
    expect(expectOk(allocate(bigNode, { driveCores: 1, numDrives: 8, driveCapacity: 400 }))).toHaveLength(8);
    const raised = allocate(
      bigNode,
      { driveCores: 1, numDrives: 16, driveCapacity: 400 },
      { settings: { maxVirtualDrivesPerCore: 16 } },
    );
    expect(expectOk(raised)).toHaveLength(16);
  });

  it('allows 258 drive cores worth of both types once only the total must cover the cores', () => {
    const drives = expectOk(
      allocate(
        bigNode,
        { driveCores: 129, containerCapacity: 2 * 129 * 384, driveTypesRatio: { tlc: 1, qlc: 1 } },
        { settings: { enforceMinDrivesPerTypePerCore: false } },
      ),
    );
    expect(drives.length).toBeGreaterThanOrEqual(129);
    expect(drives.length).toBeLessThanOrEqual(MAX_VIRTUAL_DRIVES_PER_CONTAINER);
  });
});

describe('the bounds are the API’s', () => {
  it('the most virtual drives a container holds is the status schema’s maxItems', () => {
    expect(MAX_VIRTUAL_DRIVES_PER_CONTAINER).toBe(MAX_VIRTUAL_DRIVES);
    expect(maxVirtualDrives(100, DEFAULT_ALLOCATION_SETTINGS)).toBe(MAX_VIRTUAL_DRIVES);
    expect(maxVirtualDrives(2, DEFAULT_ALLOCATION_SETTINGS)).toBe(16);
  });

  it('the CEL rules name the same numbers', () => {
    expect(CAPACITY_RULES.numDrivesAtMost.rule).toContain(`<= ${MAX_VIRTUAL_DRIVES_PER_CONTAINER}`);
    expect(CAPACITY_RULES.driveCoresAtMost.rule).toContain(`<= ${MAX_VIRTUAL_DRIVES_PER_CONTAINER}`);
    expect(CAPACITY_RULES.numDrivesPerDriveCore.rule).toContain(`* ${MAX_VIRTUAL_DRIVES_PER_CORE_CEILING}.0`);
    expect(CAPACITY_RULES.driveCapacityAtMost.rule).toContain(`<= ${MAX_DRIVE_CAPACITY_GIB}`);
    expect(CAPACITY_RULES.containerCapacityAtMost.rule).toContain(`<= ${MAX_NODE_CAPACITY_GIB}`);
    expect(CAPACITY_RULES.fixedSizeCapacityAtMost.rule).toContain(`<= ${MAX_NODE_CAPACITY_GIB}.0`);
  });
});

describe('what the allocator gives', () => {
  // Many cores and drives, so the bounds bind; few runs, since such nodes take the planner longer.
  const requestArb: fc.Arbitrary<DriveSharingRequest> = fc.oneof(
    fc
      .record({
        driveCores: fc.integer({ min: 1, max: 300 }),
        numDrives: fc.integer({ min: 1, max: 400 }),
        driveCapacity: fc.integer({ min: 1, max: 400 }),
      })
      .filter((r) => r.numDrives >= r.driveCores),
    fc.record({
      driveCores: fc.integer({ min: 1, max: 300 }),
      containerCapacity: fc.integer({ min: 384, max: 200_000 }),
      driveTypesRatio: fc.constantFrom({ tlc: 1, qlc: 0 }, { tlc: 1, qlc: 1 }, { tlc: 0, qlc: 1 }),
    }),
  );

  it('never gives more virtual drives than the status lists or the setting allows per drive core', () => {
    fc.assert(
      fc.property(
        requestArb,
        fc.integer({ min: 1, max: MAX_VIRTUAL_DRIVES_PER_CORE_CEILING }),
        fc.boolean(),
        (request, perCore, enforcePerType) => {
          const settings = {
            ...DEFAULT_ALLOCATION_SETTINGS,
            maxVirtualDrivesPerCore: perCore,
            enforceMinDrivesPerTypePerCore: enforcePerType,
          };
          const physicalDrives = [tlc('t1', 120_000), tlc('t2', 120_000), qlc('q1', 120_000), qlc('q2', 120_000)];
          const result = allocateVirtualDrives({ physicalDrives, claimed: [], request, settings }, sequentialUuids());
          if (!result.ok) return;
          expect(result.virtualDrives.length).toBeLessThanOrEqual(MAX_VIRTUAL_DRIVES_PER_CONTAINER);
          expect(result.virtualDrives.length).toBeLessThanOrEqual(request.driveCores * perCore);
        },
      ),
      { numRuns: 150 },
    );
  });
});
