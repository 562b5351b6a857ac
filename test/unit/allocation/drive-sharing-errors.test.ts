import { describe, expect, it } from 'vitest';
import type { DriveSharingRequest } from '../../../src/allocation/index.js';
import { allocate, expectError, qlc, tlc, untyped } from './fixtures.js';

const node = [tlc('t1', 7680), tlc('t2', 7680), qlc('q1', 15360)];

describe('InvalidDriveSharingConfig', () => {
  it.each<{ name: string; request: DriveSharingRequest; field: string; mentions: string }>([
    {
      name: 'driveCores of 0',
      request: { driveCores: 0, containerCapacity: 5000 },
      field: 'request.driveCores',
      mentions: 'driveCores',
    },
    {
      name: 'fractional driveCores',
      request: { driveCores: 1.5, containerCapacity: 5000 },
      field: 'request.driveCores',
      mentions: 'driveCores',
    },
    {
      name: 'containerCapacity of 0',
      request: { driveCores: 1, containerCapacity: 0 },
      field: 'request.containerCapacity',
      mentions: 'containerCapacity',
    },
    {
      name: 'negative containerCapacity',
      request: { driveCores: 1, containerCapacity: -5 },
      field: 'request.containerCapacity',
      mentions: 'containerCapacity',
    },
    {
      name: 'driveCapacity of 0',
      request: { driveCores: 1, numDrives: 2, driveCapacity: 0 },
      field: 'request.driveCapacity',
      mentions: 'driveCapacity',
    },
    {
      name: 'numDrives of 0',
      request: { driveCores: 1, numDrives: 0, driveCapacity: 500 },
      field: 'request.numDrives',
      mentions: 'numDrives',
    },
    {
      name: 'a 0:0 ratio',
      request: { driveCores: 1, containerCapacity: 5000, driveTypesRatio: { tlc: 0, qlc: 0 } },
      field: 'request.driveTypesRatio',
      mentions: '0:0',
    },
    {
      name: 'a negative ratio part',
      request: { driveCores: 1, containerCapacity: 5000, driveTypesRatio: { tlc: -1, qlc: 2 } },
      field: 'request.driveTypesRatio.tlc',
      mentions: 'tlc',
    },
    {
      name: 'both modes at once',
      request: { driveCores: 1, containerCapacity: 5000, numDrives: 2, driveCapacity: 500 },
      field: 'request',
      mentions: 'both modes',
    },
    { name: 'no mode', request: { driveCores: 1 }, field: 'request.numDrives', mentions: 'no mode' },
    {
      name: 'fewer drives than cores in Mode 1',
      request: { driveCores: 4, numDrives: 3, driveCapacity: 500 },
      field: 'request.numDrives',
      mentions: 'each drive core',
    },
    {
      name: 'Mode 1 without driveCapacity',
      request: { driveCores: 1, numDrives: 2 },
      field: 'request.driveCapacity',
      mentions: 'both numDrives and driveCapacity',
    },
    {
      name: 'a ratio with Mode 1',
      request: { driveCores: 1, numDrives: 2, driveCapacity: 500, driveTypesRatio: { tlc: 1, qlc: 1 } },
      field: 'request.driveTypesRatio',
      mentions: 'TLC',
    },
  ])('refuses $name', ({ request, field, mentions }) => {
    const error = expectError(allocate(node, request));
    expect(error).toMatchObject({ type: 'InvalidDriveSharingConfig', field });
    expect(error.message).toContain(mentions);
  });

  it('refuses a settings ratio of 0:0 when the request relies on it', () => {
    const error = expectError(
      allocate(node, { driveCores: 1, containerCapacity: 5000 }, { settings: { driveTypesRatio: { tlc: 0, qlc: 0 } } }),
    );
    expect(error).toMatchObject({ type: 'InvalidDriveSharingConfig', field: 'settings.driveTypesRatio' });
  });

  it('ignores a broken settings ratio the request overrides', () => {
    const result = allocate(
      node,
      { driveCores: 1, containerCapacity: 5000, driveTypesRatio: { tlc: 1, qlc: 0 } },
      { settings: { driveTypesRatio: { tlc: 0, qlc: 0 } } },
    );
    expect(result.ok).toBe(true);
  });

  it('refuses maxVirtualDrivesPerCore of 0', () => {
    const error = expectError(
      allocate(node, { driveCores: 1, containerCapacity: 5000 }, { settings: { maxVirtualDrivesPerCore: 0 } }),
    );
    expect(error).toMatchObject({ type: 'InvalidDriveSharingConfig', field: 'settings.maxVirtualDrivesPerCore' });
  });

  it('refuses a limit of one virtual drive per core when TLC and QLC each need driveCores drives', () => {
    const error = expectError(
      allocate(
        node,
        { driveCores: 2, containerCapacity: 10000, driveTypesRatio: { tlc: 1, qlc: 1 } },
        { settings: { maxVirtualDrivesPerCore: 1 } },
      ),
    );
    expect(error).toMatchObject({ type: 'InvalidDriveSharingConfig', field: 'settings.maxVirtualDrivesPerCore' });
    expect(error.message).toContain('at least 4');
  });

  it('refuses a request for QLC capacity on a node without QLC drives', () => {
    const error = expectError(
      allocate([tlc('t1', 7680)], { driveCores: 1, containerCapacity: 2000, driveTypesRatio: { tlc: 1, qlc: 1 } }),
    );
    expect(error).toMatchObject({ type: 'InvalidDriveSharingConfig', field: 'physicalDrives' });
    expect(error.message).toContain('no physical drive on the node is QLC');
  });

  it('refuses Mode 1 on a node with only QLC drives', () => {
    const error = expectError(allocate([qlc('q1', 15360)], { driveCores: 1, numDrives: 1, driveCapacity: 1000 }));
    expect(error).toMatchObject({ type: 'InvalidDriveSharingConfig', field: 'physicalDrives' });
    expect(error.message).toContain('TLC drives only');
  });

  it('explains that drives without a type (compact annotation) must be re-signed', () => {
    const error = expectError(
      allocate([untyped('u1', 7680), tlc('t1', 7680)], {
        driveCores: 1,
        containerCapacity: 2000,
        driveTypesRatio: { tlc: 1, qlc: 1 },
      }),
    );
    expect(error.type).toBe('InvalidDriveSharingConfig');
    expect(error.message).toContain("1 of the node's 2 shared drives have no type");
    expect(error.message).toContain('compact');
  });

  it('refuses a physical drive listed twice', () => {
    const error = expectError(
      allocate([tlc('t1', 7680), tlc('t1', 7680)], { driveCores: 1, numDrives: 1, driveCapacity: 500 }),
    );
    expect(error).toMatchObject({ type: 'InvalidDriveSharingConfig', field: 'physicalDrives[1].physicalUUID' });
  });

  it('refuses a claim of negative capacity, which would make space out of nothing', () => {
    const t1 = tlc('t1', 7680);
    const claimed = [
      { container: 'ns/c', virtualDrives: [{ virtualUUID: 'v', physicalUUID: 't1', capacityGiB: -1000 }] },
    ];
    const error = expectError(allocate([t1], { driveCores: 1, numDrives: 1, driveCapacity: 500 }, { claimed }));
    expect(error).toMatchObject({
      type: 'InvalidDriveSharingConfig',
      field: 'claimed[0].virtualDrives[0].capacityGiB',
    });
  });

  it('accepts a claim of 0 GiB, which the status schema allows', () => {
    const claimed = [{ container: 'ns/c', virtualDrives: [{ virtualUUID: 'v', physicalUUID: 't1', capacityGiB: 0 }] }];
    expect(allocate([tlc('t1', 7680)], { driveCores: 1, numDrives: 1, driveCapacity: 500 }, { claimed }).ok).toBe(true);
  });

  it('refuses a physical drive with no capacity', () => {
    const error = expectError(allocate([tlc('t1', 0)], { driveCores: 1, numDrives: 1, driveCapacity: 500 }));
    expect(error).toMatchObject({ type: 'InvalidDriveSharingConfig', field: 'physicalDrives[0].capacityGiB' });
  });
});

describe('InsufficientDriveCapacity', () => {
  it('reports not enough capacity with the numbers behind it', () => {
    const drives = [tlc('a', 1000), tlc('b', 300)];
    const error = expectError(
      allocate(drives, { driveCores: 1, containerCapacity: 2000, driveTypesRatio: { tlc: 1, qlc: 0 } }),
    );
    expect(error).toEqual({
      type: 'InsufficientDriveCapacity',
      reason: 'not-enough-capacity',
      driveType: 'TLC',
      neededGiB: 2000,
      usableGiB: 1000,
      totalAvailableGiB: 1300,
      physicalDrives: [
        { physicalUUID: 'a', capacityGiB: 1000, availableGiB: 1000 },
        { physicalUUID: 'b', capacityGiB: 300, availableGiB: 300 },
      ],
      minDrives: 1,
      maxDrives: 8,
      message: expect.stringContaining('need 2000 GiB') as unknown,
    });
  });

  it('says the capacity exists but no split fits when the GiB are there but fragmented', () => {
    const error = expectError(
      allocate(
        [tlc('a', 500), tlc('b', 500)],
        { driveCores: 1, containerCapacity: 800, driveTypesRatio: { tlc: 1, qlc: 0 } },
        { settings: { maxVirtualDrivesPerCore: 1 } },
      ),
    );
    expect(error).toMatchObject({
      type: 'InsufficientDriveCapacity',
      reason: 'no-split-fits',
      neededGiB: 800,
      usableGiB: 1000,
      maxDrives: 1,
    });
    expect(error.message).toContain('no split fits');
    expect(error.message).not.toContain('not enough');
  });

  it('says TLC and QLC only fail together when each fits alone but not within maxDrives', () => {
    const drives = [
      ...['t1', 't2', 't3', 't4'].map((id) => tlc(id, 1000)),
      ...['q1', 'q2', 'q3'].map((id) => qlc(id, 1000)),
    ];
    const error = expectError(
      allocate(
        drives,
        { driveCores: 2, containerCapacity: 6300, driveTypesRatio: { tlc: 4, qlc: 3 } },
        { settings: { maxVirtualDrivesPerCore: 3 } },
      ),
    );
    expect(error).toMatchObject({ type: 'InsufficientDriveCapacity', reason: 'no-split-fits', maxDrives: 6 });
    expect(error).not.toHaveProperty('driveType');
    expect(error.message).toContain('4 to 4 TLC and 3 to 3 QLC');
  });

  it('refuses with the total minimum when only the total must reach driveCores drives', () => {
    const error = expectError(
      allocate(
        node,
        { driveCores: 3, containerCapacity: 1534, driveTypesRatio: { tlc: 1, qlc: 1 } },
        { settings: { enforceMinDrivesPerTypePerCore: false } },
      ),
    );
    expect(error).toMatchObject({ type: 'InsufficientDriveCapacity', reason: 'below-minimum', minDrives: 3 });
    expect(error.message).toContain('at most 2 virtual drives');
  });
});

describe('InsufficientDrives (Mode 1)', () => {
  it('reports too few driveCapacity-sized slots when the GiB would suffice', () => {
    const error = expectError(
      allocate([tlc('a', 1500), tlc('b', 1500)], { driveCores: 1, numDrives: 3, driveCapacity: 1000 }),
    );
    expect(error).toMatchObject({
      type: 'InsufficientDrives',
      needed: 3,
      have: 2,
      driveCapacityGiB: 1000,
      driveType: 'TLC',
    });
  });

  it('reports missing capacity when the GiB themselves are short', () => {
    const error = expectError(allocate([tlc('a', 1500)], { driveCores: 1, numDrives: 3, driveCapacity: 1000 }));
    expect(error).toMatchObject({ type: 'InsufficientDriveCapacity', reason: 'not-enough-capacity', neededGiB: 3000 });
  });
});

describe('all or nothing', () => {
  it('refuses the whole request, and draws no UUID, when TLC fits but QLC does not', () => {
    let uuidsDrawn = 0;
    const error = expectError(
      allocate(
        [tlc('t1', 7680), qlc('q1', 1000)],
        { driveCores: 1, containerCapacity: 4000, driveTypesRatio: { tlc: 1, qlc: 1 } },
        {
          newUuid: () => `vd-${++uuidsDrawn}`,
        },
      ),
    );
    expect(error).toMatchObject({ type: 'InsufficientDriveCapacity', driveType: 'QLC' });
    expect(uuidsDrawn).toBe(0);
  });
});
