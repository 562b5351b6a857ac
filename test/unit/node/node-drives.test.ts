// The node's shared drives after signing: merged by serial, never losing a drive, and the
// capacity the node advertises for them.
import { describe, expect, it } from 'vitest';
import type { PhysicalDrive } from '../../../src/allocation/types.js';
import { decodeSharedDrivesAnnotation, encodeSharedDrivesAnnotation } from '../../../src/annotations/index.js';
import {
  promisedResources,
  reconcileSharedDrives,
  sharedCapacityGiB,
  sharedCapacityResources,
  unpublishedResources,
} from '../../../src/node/node-drives.js';

const drive = (n: number, over: Partial<PhysicalDrive> = {}): PhysicalDrive => ({
  physicalUUID: `00000000-0000-4000-8000-00000000000${n}`,
  serial: `SERIAL${n}`,
  capacityGiB: 1000 * n,
  type: 'TLC',
  devicePath: `/dev/nvme${n}n1`,
  ...over,
});

describe('reconcileSharedDrives', () => {
  it('appends drives read for the first time after the ones already listed', () => {
    expect(reconcileSharedDrives([drive(1)], [drive(2), drive(1), drive(3)]).drives).toEqual([
      drive(1),
      drive(2),
      drive(3),
    ]);
  });

  it('gives the same list when the same devices are read again', () => {
    const once = reconcileSharedDrives([], [drive(1), drive(2)]).drives;
    expect(reconcileSharedDrives(once, [drive(2), drive(1)])).toEqual({ drives: once, dropped: [] });
  });

  it('updates a listed drive found at another device path, in its place', () => {
    const moved = drive(2, { devicePath: '/dev/nvme7n1' });
    expect(reconcileSharedDrives([drive(1), drive(2), drive(3)], [drive(3), moved, drive(1)]).drives).toEqual([
      drive(1),
      moved,
      drive(3),
    ]);
  });

  it('keeps drives whose serials are empty or repeat: they are told apart by physical UUID', () => {
    const a = drive(1, { serial: '' });
    const b = drive(2, { serial: '' });
    const c = drive(3, { serial: 'SAME' });
    const d = drive(4, { serial: 'SAME' });
    const { drives } = reconcileSharedDrives([a, c], [a, b, c, d]);
    expect(drives).toEqual([a, c, b, d]);
    expect(decodeSharedDrivesAnnotation(encodeSharedDrivesAnnotation(drives)).ok).toBe(true);
  });

  it('drops a drive that was signed again (a new physical UUID at its path: its virtual drives are gone)', () => {
    const resigned = drive(2, { physicalUUID: '00000000-0000-4000-8000-000000000099' });
    expect(reconcileSharedDrives([drive(1), drive(2)], [drive(1), resigned])).toEqual({
      drives: [drive(1), resigned],
      dropped: [drive(2)],
    });
  });

  it("updates a drive of the seed's compact form (no type) with the type its device reports", () => {
    expect(reconcileSharedDrives([drive(1, { type: undefined })], [drive(1)]).drives).toEqual([drive(1)]);
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

describe('the resources a node promises through its annotations', () => {
  it('promises its shared GiB per type and its exclusive drives that are not blocked', () => {
    const annotations = {
      'weka.io/shared-drives': encodeSharedDrivesAnnotation([drive(1), drive(2, { type: 'QLC' })]),
      'weka.io/weka-drives': JSON.stringify(['A', 'B', 'C']),
      'weka.io/blocked-drives': JSON.stringify(['B']),
    };
    expect(promisedResources(annotations)).toEqual({
      'weka.io/shared-drives-capacity': '1000',
      'weka.io/shared-drives-capacity-qlc': '2000',
      'weka.io/drives': '2',
    });
  });

  it('promises nothing from an annotation it cannot read', () => {
    expect(promisedResources({ 'weka.io/shared-drives': 'not json' })).toBeUndefined();
    expect(promisedResources({ 'weka.io/weka-drives': '{}' })).toBeUndefined();
  });

  it('names only what the node does not publish as promised', () => {
    const promised = { 'weka.io/shared-drives-capacity': '1000', 'weka.io/drives': '0' };
    expect(unpublishedResources(promised, { cpu: '64', 'weka.io/shared-drives-capacity': '1000' })).toEqual({
      'weka.io/drives': '0',
    });
    expect(unpublishedResources(promised, undefined)).toEqual(promised);
    expect(unpublishedResources(promised, { ...promised, cpu: '64' })).toEqual({});
  });
});

it('takes a published quantity the apiserver rewrote ("3k") for the promised one ("3000")', () => {
  expect(
    unpublishedResources({ 'weka.io/shared-drives-capacity': '3000' }, { 'weka.io/shared-drives-capacity': '3k' }),
  ).toEqual({});
});
