import { describe, expect, it } from 'vitest';
import { allocate, claimOn, expectError, expectOk, qlc, sizesOf, takenPerDrive, tlc } from './fixtures.js';

const tlcOnly = { tlc: 1, qlc: 0 };
const fourTlc = [tlc('d1', 3840), tlc('d2', 3840), tlc('d3', 3840), tlc('d4', 3840)];

describe('even distribution (seed examples)', () => {
  it.each([
    { capacity: 8000, cores: 4, expected: [2000, 2000, 2000, 2000] },
    { capacity: 9000, cores: 4, expected: [2250, 2250, 2250, 2250] },
    { capacity: 7001, cores: 3, expected: [2334, 2334, 2333] },
  ])('splits $capacity GiB over $cores cores as $expected', ({ capacity, cores, expected }) => {
    const result = allocate(fourTlc, { driveCores: cores, containerCapacity: capacity, driveTypesRatio: tlcOnly });
    expect(sizesOf(expectOk(result))).toEqual(expected);
    expect(result.ok && result.summary).toEqual([
      { driveType: 'TLC', strategy: 'even-distribution', neededGiB: capacity, virtualDriveCount: cores },
    ]);
  });

  it('puts each of a container’s virtual drives on a different physical drive when the drives can hold them', () => {
    const drives = expectOk(allocate(fourTlc, { driveCores: 4, containerCapacity: 8000, driveTypesRatio: tlcOnly }));
    expect(new Set(drives.map((vd) => vd.physicalUUID)).size).toBe(4);
  });

  it('uses more drives than cores when the shares are too big for the drives', () => {
    const small = [tlc('d1', 1000), tlc('d2', 1000), tlc('d3', 1000), tlc('d4', 1000)];
    const drives = expectOk(allocate(small, { driveCores: 2, containerCapacity: 3600, driveTypesRatio: tlcOnly }));
    expect(sizesOf(drives)).toEqual([900, 900, 900, 900]);
  });

  it('does not reject a feasible split because a greedy choice would have blocked it', () => {
    // [1001, 1000, 1000] fits only with the 1001 piece on the 1001 GiB drive; putting it on the
    // emptier drive first would leave no room for the two 1000s.
    const result = allocate([tlc('big', 2000), tlc('small', 1001)], {
      driveCores: 3,
      containerCapacity: 3001,
      driveTypesRatio: tlcOnly,
    });
    const drives = expectOk(result);
    expect(drives.map((vd) => [vd.physicalUUID, vd.capacityGiB])).toEqual([
      ['small', 1001],
      ['big', 1000],
      ['big', 1000],
    ]);
    expect(result.ok && result.summary[0]?.strategy).toBe('even-distribution');
  });
});

describe('fit-to-physical (seed examples)', () => {
  const uneven = [tlc('a', 20000), tlc('b', 500), tlc('c', 500)];

  it('follows the physical drives when no even split fits: [20000, 500, 500] for 21000 GiB on 3 cores', () => {
    const result = allocate(uneven, { driveCores: 3, containerCapacity: 21000, driveTypesRatio: tlcOnly });
    expect(expectOk(result).map((vd) => [vd.physicalUUID, vd.capacityGiB])).toEqual([
      ['a', 20000],
      ['b', 500],
      ['c', 500],
    ]);
    expect(result.ok && result.summary[0]?.strategy).toBe('fit-to-physical');
  });

  it('halves the largest piece while there are fewer pieces than cores: [10000, 10000, 500, 500] on 4 cores', () => {
    const drives = expectOk(allocate(uneven, { driveCores: 4, containerCapacity: 21000, driveTypesRatio: tlcOnly }));
    expect(drives.map((vd) => [vd.physicalUUID, vd.capacityGiB])).toEqual([
      ['a', 10000],
      ['a', 10000],
      ['b', 500],
      ['c', 500],
    ]);
  });

  it('raises a last piece under 384 GiB to 384 GiB by taking the difference from the largest piece', () => {
    const drives = expectOk(allocate(uneven, { driveCores: 3, containerCapacity: 20600, driveTypesRatio: tlcOnly }));
    expect(sizesOf(drives)).toEqual([19716, 500, 384]);
  });
});

describe('Mode 2: containerCapacity with driveTypesRatio', () => {
  const mixed = [tlc('t1', 7680), tlc('t2', 7680), qlc('q1', 15360), qlc('q2', 15360)];

  it('splits 12000 GiB at 4:1 into 9600 GiB TLC and 2400 GiB QLC, each from its own drives', () => {
    const drives = expectOk(
      allocate(mixed, { driveCores: 6, containerCapacity: 12000, driveTypesRatio: { tlc: 4, qlc: 1 } }),
    );
    expect(sizesOf(drives, 'TLC')).toEqual(Array(6).fill(1600));
    expect(sizesOf(drives, 'QLC')).toEqual(Array(6).fill(400));
    expect(drives.filter((vd) => vd.type === 'TLC').every((vd) => vd.physicalUUID.startsWith('t'))).toBe(true);
    expect(drives.filter((vd) => vd.type === 'QLC').every((vd) => vd.physicalUUID.startsWith('q'))).toBe(true);
  });

  it('applies the operator default ratio (tlc 1 : qlc 10) when the request sets none', () => {
    const drives = expectOk(allocate(mixed, { driveCores: 1, containerCapacity: 11000 }));
    expect(sizesOf(drives, 'TLC')).toEqual([1000]);
    expect(sizesOf(drives, 'QLC')).toEqual([10000]);
  });

  it('uses the settings ratio when the request sets none', () => {
    const drives = expectOk(
      allocate(
        mixed,
        { driveCores: 1, containerCapacity: 3000 },
        { settings: { driveTypesRatio: { tlc: 2, qlc: 1 } } },
      ),
    );
    expect(sizesOf(drives, 'TLC')).toEqual([2000]);
    expect(sizesOf(drives, 'QLC')).toEqual([1000]);
  });

  it('allocates TLC only when qlc is 0, even with QLC drives present', () => {
    const drives = expectOk(allocate(mixed, { driveCores: 2, containerCapacity: 4000, driveTypesRatio: tlcOnly }));
    expect(drives.every((vd) => vd.type === 'TLC')).toBe(true);
  });

  it('refuses 5 cores x 5000 GiB at 4:1 with the per-type minimum: QLC gets 1000 GiB but needs 5 x 384', () => {
    const error = expectError(
      allocate(mixed, { driveCores: 5, containerCapacity: 5000, driveTypesRatio: { tlc: 4, qlc: 1 } }),
    );
    expect(error).toMatchObject({
      type: 'InsufficientDriveCapacity',
      reason: 'below-minimum',
      driveType: 'QLC',
      neededGiB: 1000,
      minDrives: 5,
    });
    expect(error.message).toContain('insufficient QLC capacity');
    expect(error.message).toContain('enforceMinDrivesPerTypePerCore');
  });

  it('allocates the same request as 4 TLC + 1 QLC drives when the minimum is only for the total', () => {
    const result = allocate(
      mixed,
      { driveCores: 5, containerCapacity: 5000, driveTypesRatio: { tlc: 4, qlc: 1 } },
      { settings: { enforceMinDrivesPerTypePerCore: false } },
    );
    const drives = expectOk(result);
    expect(sizesOf(drives, 'TLC')).toEqual([1000, 1000, 1000, 1000]);
    expect(sizesOf(drives, 'QLC')).toEqual([1000]);
  });

  it('gives TLC fewer drives than its proportional part when that is the only way QLC fits', () => {
    // 4 cores at 1:1 would be 2 TLC + 2 QLC, but QLC's 2400 GiB only fits as 3 x 800 on 1000 GiB
    // drives, and maxDrives is 4: so 1 TLC + 3 QLC.
    const drives = [tlc('t1', 3000), qlc('q1', 1000), qlc('q2', 1000), qlc('q3', 1000)];
    const result = allocate(
      drives,
      { driveCores: 4, containerCapacity: 4800, driveTypesRatio: { tlc: 1, qlc: 1 } },
      { settings: { enforceMinDrivesPerTypePerCore: false, maxVirtualDrivesPerCore: 1 } },
    );
    const allocated = expectOk(result);
    expect(sizesOf(allocated, 'TLC')).toEqual([2400]);
    expect(sizesOf(allocated, 'QLC')).toEqual([800, 800, 800]);
  });

  it('falls back to a less preferred TLC split when the preferred one leaves QLC too few drives', () => {
    // TLC 3600 GiB: even distribution first fits as 4 x 900, leaving 1 of the 5 allowed drives for
    // QLC, whose 1600 GiB needs 2. Fit-to-physical TLC [3000, 600] leaves room.
    const drives = [tlc('t1', 3000), tlc('t2', 1000), qlc('q1', 1000), qlc('q2', 1000)];
    const result = allocate(
      drives,
      { driveCores: 1, containerCapacity: 5200, driveTypesRatio: { tlc: 9, qlc: 4 } },
      { settings: { maxVirtualDrivesPerCore: 5 } },
    );
    expect(sizesOf(expectOk(result), 'TLC')).toEqual([3000, 600]);
    expect(result.ok && result.summary.map((s) => s.strategy)).toEqual(['fit-to-physical', 'even-distribution']);
  });

  it('refuses with insufficient TLC capacity when the TLC share is under driveCores x 384', () => {
    const error = expectError(
      allocate(mixed, { driveCores: 4, containerCapacity: 3000, driveTypesRatio: { tlc: 1, qlc: 1 } }),
    );
    expect(error).toMatchObject({ reason: 'below-minimum', driveType: 'TLC' });
    expect(error.message).toContain('insufficient TLC capacity');
  });
});

describe('Mode 1: numDrives x driveCapacity', () => {
  it('gives every virtual drive exactly driveCapacity, on TLC drives only', () => {
    const drives = [tlc('t1', 3840), tlc('t2', 3840), tlc('t3', 3840), qlc('q1', 61440)];
    const result = expectOk(allocate(drives, { driveCores: 2, numDrives: 6, driveCapacity: 1000 }));
    expect(sizesOf(result)).toEqual(Array(6).fill(1000));
    expect(result.every((vd) => vd.type === 'TLC')).toBe(true);
    expect(result.map((vd) => vd.physicalUUID)).toEqual(['t1', 't2', 't3', 't1', 't2', 't3']);
  });

  it('spreads round robin over the drives that still fit, most free first', () => {
    const result = expectOk(
      allocate([tlc('small', 3000), tlc('large', 10000)], { driveCores: 1, numDrives: 4, driveCapacity: 1000 }),
    );
    expect(result.map((vd) => vd.physicalUUID)).toEqual(['large', 'small', 'large', 'small']);
  });
});

describe('claimed capacity and determinism', () => {
  it('only uses what other containers have not claimed', () => {
    const a = tlc('a', 3840);
    const b = tlc('b', 3840);
    const claimed = [claimOn('ns1/c1', a, 3000), claimOn('other-ns/c2', b, 1000)];
    const drives = expectOk(allocate([a, b], { driveCores: 1, numDrives: 2, driveCapacity: 800 }, { claimed }));
    expect(Object.fromEntries(takenPerDrive(drives))).toEqual({ a: 800, b: 800 });
  });

  it('treats a drive with less than 384 GiB free as unusable, even for a smaller virtual drive', () => {
    const a = tlc('a', 3840);
    const error = expectError(
      allocate([a], { driveCores: 1, numDrives: 1, driveCapacity: 100 }, { claimed: [claimOn('ns/c', a, 3500)] }),
    );
    expect(error).toMatchObject({ type: 'InsufficientDriveCapacity', usableGiB: 0, totalAvailableGiB: 340 });
  });

  it('breaks ties between equally free drives by physical UUID, whatever the input order', () => {
    const forward = expectOk(
      allocate([tlc('aaa', 2000), tlc('bbb', 2000)], { driveCores: 1, numDrives: 1, driveCapacity: 1000 }),
    );
    const backward = expectOk(
      allocate([tlc('bbb', 2000), tlc('aaa', 2000)], { driveCores: 1, numDrives: 1, driveCapacity: 1000 }),
    );
    expect(forward[0]?.physicalUUID).toBe('aaa');
    expect(backward).toEqual(forward);
  });

  it('records the physical drive’s serial and the type on every virtual drive', () => {
    const [vd] = expectOk(
      allocate([qlc('q', 5000)], { driveCores: 1, containerCapacity: 1000, driveTypesRatio: { tlc: 0, qlc: 1 } }),
    );
    expect(vd).toEqual({ virtualUUID: 'vd-1', physicalUUID: 'q', capacityGiB: 1000, serial: 'serial-q', type: 'QLC' });
  });

  it('draws a fresh UUID when the source repeats one already claimed on the node', () => {
    const a = tlc('a', 5000);
    const uuids = ['taken', 'taken', 'fresh'];
    const [vd] = expectOk(
      allocate(
        [a],
        { driveCores: 1, numDrives: 1, driveCapacity: 1000 },
        { claimed: [claimOn('ns/c', a, 1000, 'taken')], newUuid: () => uuids.shift() ?? 'none' },
      ),
    );
    expect(vd?.virtualUUID).toBe('fresh');
  });

  it('never gives two new virtual drives the same UUID', () => {
    const uuids = ['same', 'same', 'other'];
    const drives = expectOk(
      allocate(
        [tlc('a', 5000)],
        { driveCores: 1, numDrives: 2, driveCapacity: 1000 },
        { newUuid: () => uuids.shift() ?? 'none' },
      ),
    );
    expect(drives.map((vd) => vd.virtualUUID)).toEqual(['same', 'other']);
  });

  it('fails loudly, instead of looping, when the UUID source only repeats UUIDs in use', () => {
    const a = tlc('a', 5000);
    const request = { driveCores: 1, numDrives: 1, driveCapacity: 1000 };
    expect(() =>
      allocate([a], request, { claimed: [claimOn('ns/c', a, 1000, 'stuck')], newUuid: () => 'stuck' }),
    ).toThrow(/UUID source/);
  });
});
