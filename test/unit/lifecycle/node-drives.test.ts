// The node's shared drives after signing: merged by serial, never losing a drive, and the
// capacity the node advertises for them.
import { describe, expect, it } from 'vitest';
import type { PhysicalDrive } from '../../../src/allocation/types.js';
import { decodeSharedDrivesAnnotation, encodeSharedDrivesAnnotation } from '../../../src/annotations/index.js';
import { mergeSharedDrives, sharedCapacityGiB, sharedCapacityResources } from '../../../src/lifecycle/node-drives.js';

const drive = (n: number, over: Partial<PhysicalDrive> = {}): PhysicalDrive => ({
  physicalUUID: `00000000-0000-4000-8000-00000000000${n}`,
  serial: `SERIAL${n}`,
  capacityGiB: 1000 * n,
  type: 'TLC',
  devicePath: `/dev/nvme${n}n1`,
  ...over,
});

describe('mergeSharedDrives', () => {
  it('adds newly signed drives after the ones already listed', () => {
    expect(mergeSharedDrives([drive(1)], [drive(2), drive(3)])).toEqual([drive(1), drive(2), drive(3)]);
  });

  it('keeps every listed drive that was not signed again', () => {
    const listed = [drive(1), drive(2), drive(3)];
    expect(mergeSharedDrives(listed, [drive(4)])).toEqual([...listed, drive(4)]);
    expect(mergeSharedDrives(listed, [])).toEqual(listed);
  });

  it('updates a listed drive with the same serial in its place', () => {
    const moved = drive(2, { devicePath: '/dev/nvme7n1', physicalUUID: '00000000-0000-4000-8000-000000000099' });
    expect(mergeSharedDrives([drive(1), drive(2), drive(3)], [moved])).toEqual([drive(1), moved, drive(3)]);
  });

  it('gives the same list when the same drives are signed again', () => {
    const once = mergeSharedDrives([], [drive(1), drive(2)]);
    expect(mergeSharedDrives(once, [drive(1), drive(2)])).toEqual(once);
  });

  it("keeps a drive of the seed's compact form (no type) when other drives are added", () => {
    const untyped = drive(1, { type: undefined });
    expect(mergeSharedDrives([untyped], [drive(2)])).toEqual([untyped, drive(2)]);
  });

  it('never writes a list the annotation reader refuses, even when the listed drives repeat a serial', () => {
    const listed = [drive(1), drive(2, { serial: 'SERIAL1' })];
    const merged = mergeSharedDrives(listed, [drive(1, { devicePath: '/dev/nvme9n1' })]);
    expect(merged).toHaveLength(2);
    expect(decodeSharedDrivesAnnotation(encodeSharedDrivesAnnotation(merged)).ok).toBe(true);
  });
});

describe('shared capacity', () => {
  it('sums TLC and QLC separately', () => {
    const drives = [drive(1), drive(2, { type: 'QLC' }), drive(3), drive(4, { type: 'QLC' })];
    expect(sharedCapacityGiB(drives)).toEqual({ tlc: 4000, qlc: 6000 });
  });

  it('counts a drive without a type for neither type', () => {
    expect(sharedCapacityGiB([drive(1, { type: undefined }), drive(2)])).toEqual({ tlc: 2000, qlc: 0 });
  });

  it('writes both extended resources as whole GiB counts, zero included', () => {
    expect(sharedCapacityResources({ tlc: 15360, qlc: 0 })).toEqual({
      'weka.io/shared-drives-capacity': '15360',
      'weka.io/shared-drives-capacity-qlc': '0',
    });
  });
});
