import { describe, expect, it } from 'vitest';
import { formatPlanTable } from '../../../src/cli/plan-table.js';
import { allocate, claimOn, qlc, tlc } from '../allocation/fixtures.js';

describe('formatPlanTable', () => {
  it('shows, per physical drive, the free space before, what the plan takes and what is left', () => {
    const t1 = tlc('t1', 4000);
    const q1 = qlc('q1', 12000);
    const claimed = [claimOn('ns/other', t1, 1000)];
    const request = { driveCores: 1, containerCapacity: 11000 };
    const table = formatPlanTable([t1, q1], claimed, allocate([t1, q1], request, { claimed }));
    expect(table.split('\n')).toEqual([
      'PHYSICAL UUID  SERIAL     TYPE  CAPACITY  FREE BEFORE  TAKEN  FREE AFTER  NEW VDRIVES',
      't1             serial-t1  TLC       4000         3000   1000        2000            1',
      'q1             serial-q1  QLC      12000        12000  10000        2000            1',
      'TOTAL                              16000        15000  11000        4000            2',
      '',
      'TLC: 1000 GiB as 1 virtual drive by even-distribution (1000 GiB)',
      'QLC: 10000 GiB as 1 virtual drive by even-distribution (10000 GiB)',
      '',
    ]);
  });

  it('marks a drive without a type with ?', () => {
    const untyped = { physicalUUID: 'u1', serial: 's', capacityGiB: 1000, devicePath: '/dev/x' };
    const table = formatPlanTable(
      [untyped],
      [],
      allocate([untyped], { driveCores: 1, numDrives: 1, driveCapacity: 500 }),
    );
    expect(table).toMatch(/^u1\s+s\s+\?\s+1000/m);
  });
});
