import { describe, expect, it } from 'vitest';
import { allocateExclusiveDrives } from '../../../src/allocation/index.js';
import { claimOn, tlc } from './fixtures.js';

describe('allocateExclusiveDrives', () => {
  it('hands out signed drives that are neither blocked nor claimed, lowest serials first', () => {
    const result = allocateExclusiveDrives({
      signedSerials: ['S4', 'S1', 'S3', 'S2', 'S5'],
      blockedSerials: ['S2'],
      claimed: [{ container: 'ns/drive-0', exclusiveSerials: ['S1'] }],
      count: 2,
    });
    expect(result).toEqual({ ok: true, serials: ['S3', 'S4'] });
  });

  it('never hands out a physical drive that carries virtual drives, whoever claimed them', () => {
    const shared = tlc('p1', 7680);
    const result = allocateExclusiveDrives({
      signedSerials: [shared.serial, 'S9'],
      claimed: [claimOn('other-ns/c', shared, 1000)],
      count: 1,
    });
    expect(result).toEqual({ ok: true, serials: ['S9'] });
  });

  it('excludes a shared drive through the shared-drive list when a claim does not record its serial', () => {
    const shared = tlc('p1', 7680);
    const claimed = [
      { container: 'ns/c', virtualDrives: [{ virtualUUID: 'v', physicalUUID: 'p1', capacityGiB: 1000 }] },
    ];
    const result = allocateExclusiveDrives({
      signedSerials: [shared.serial, 'S9'],
      claimed,
      sharedDrives: [shared],
      count: 1,
    });
    expect(result).toEqual({ ok: true, serials: ['S9'] });
  });

  it('never hands out a drive signed for the proxy, even with no virtual drive on it yet', () => {
    const shared = tlc('p1', 7680);
    const result = allocateExclusiveDrives({
      signedSerials: [shared.serial, 'S9'],
      claimed: [],
      sharedDrives: [shared],
      count: 2,
    });
    expect(result).toMatchObject({ ok: false, error: { type: 'InsufficientDrives', needed: 2, have: 1 } });
  });

  it('counts a serial listed twice once', () => {
    const result = allocateExclusiveDrives({ signedSerials: ['S1', 'S1'], claimed: [], count: 2 });
    expect(result).toMatchObject({ ok: false, error: { type: 'InsufficientDrives', needed: 2, have: 1 } });
  });

  it('explains a shortage with what is needed and what is free', () => {
    const result = allocateExclusiveDrives({
      signedSerials: ['S1', 'S2'],
      blockedSerials: ['S1'],
      claimed: [],
      count: 3,
    });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.message).toContain('need 3, have 1');
  });

  it('allocates nothing when nothing is asked', () => {
    expect(allocateExclusiveDrives({ signedSerials: [], claimed: [], count: 0 })).toEqual({ ok: true, serials: [] });
  });

  it('refuses a negative count', () => {
    expect(allocateExclusiveDrives({ signedSerials: ['S1'], claimed: [], count: -1 })).toMatchObject({
      ok: false,
      error: { type: 'InvalidAllocationRequest', field: 'count' },
    });
  });
});
