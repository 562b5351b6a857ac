// A node's books per drive type balance (allocated + found + free = signed) for whatever the
// allocator gives and the ledger releases (drives left on the devices become found ones), and stop balancing when a claim is on a drive the node no longer
// lists or over-commits one.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  allocateVirtualDrives,
  DEFAULT_ALLOCATION_SETTINGS,
  type PhysicalDrive,
  type VirtualDrive,
} from '../../../src/allocation/index.js';
import type { ContainerAllocation } from '../../../src/allocation/types.js';
import { encodeSharedDrivesAnnotation, SHARED_DRIVES_ANNOTATION } from '../../../src/annotations/index.js';
import {
  ALLOCATIONS_ANNOTATION,
  emptyLedger,
  encodeLedger,
  ledgerClaims,
  withAllocation,
  withoutContainer,
  type AllocationLedger,
} from '../../../src/node/allocation-ledger.js';
import { balanced, ledgerBooks, nodeBooks } from '../../../src/node/ledger-books.js';
import { qlc, sequentialUuids, tlc, untyped } from '../allocation/fixtures.js';

const vd = (virtualUUID: string, physical: PhysicalDrive, capacityGiB: number): VirtualDrive => ({
  virtualUUID,
  physicalUUID: physical.physicalUUID,
  capacityGiB,
  serial: physical.serial,
  type: physical.type ?? 'TLC',
});
const holding = (...virtualDrives: VirtualDrive[]): ContainerAllocation => ({ virtualDrives });

const t1 = tlc('t1', 1000);
const t2 = tlc('t2', 2000);
const q1 = qlc('q1', 4000);

describe('ledgerBooks', () => {
  it('counts a replaced virtual drive as allocated until its container removed it, so the books balance during a replacement', () => {
    const ledger = withAllocation(emptyLedger(), 'u1', 'ns/a', {
      virtualDrives: [vd('new', t2, 300)],
      replacedVirtualDrives: [vd('old', t1, 300)],
    });
    const books = ledgerBooks([t1, t2], ledger);
    expect(books.TLC).toEqual({ signedGiB: 3000, allocatedGiB: 600, foundGiB: 0, freeGiB: 2400 });
    expect(balanced(books.TLC!)).toBe(true);
  });

  it('counts each type: signed, given to containers, found on the devices, and free', () => {
    let ledger = withAllocation(emptyLedger(), 'uid-a', 'ns/a', holding(vd('a1', t1, 300), vd('a2', q1, 1000)));
    ledger = withAllocation(ledger, 'uid-b', 'ns/b', holding(vd('b1', t2, 500)));
    ledger = { ...ledger, found: [{ virtualUUID: 'f1', physicalUUID: 't2', capacityGiB: 200, ownerClusterGUID: 'g' }] };
    expect(ledgerBooks([t1, t2, q1], ledger)).toEqual({
      TLC: { signedGiB: 3000, allocatedGiB: 800, foundGiB: 200, freeGiB: 2000 },
      QLC: { signedGiB: 4000, allocatedGiB: 1000, foundGiB: 0, freeGiB: 3000 },
    });
  });

  it('shows both types for a node with nothing signed', () => {
    expect(ledgerBooks([], emptyLedger())).toEqual({
      TLC: { signedGiB: 0, allocatedGiB: 0, foundGiB: 0, freeGiB: 0 },
      QLC: { signedGiB: 0, allocatedGiB: 0, foundGiB: 0, freeGiB: 0 },
    });
  });

  it('keeps drives listed without a type apart, as unknown, all of them free', () => {
    expect(ledgerBooks([untyped('u1', 700)], emptyLedger()).unknown).toEqual({
      signedGiB: 700,
      allocatedGiB: 0,
      foundGiB: 0,
      freeGiB: 700,
    });
  });

  it('does not balance when a container holds a virtual drive on a drive the node no longer lists', () => {
    const ledger = withAllocation(emptyLedger(), 'uid-a', 'ns/a', holding(vd('a1', t1, 300), vd('a2', t2, 400)));
    const books = ledgerBooks([t1], ledger);
    expect(books.TLC).toEqual({ signedGiB: 1000, allocatedGiB: 300, foundGiB: 0, freeGiB: 700 });
    expect(books.unknown).toEqual({ signedGiB: 0, allocatedGiB: 400, foundGiB: 0, freeGiB: 0 });
    expect(balanced(books.unknown!)).toBe(false);
  });

  it('does not balance when a drive is given out beyond its capacity', () => {
    let ledger = withAllocation(emptyLedger(), 'uid-a', 'ns/a', holding(vd('a1', t1, 700)));
    ledger = withAllocation(ledger, 'uid-b', 'ns/b', holding(vd('b1', t1, 700)));
    const books = ledgerBooks([t1], ledger);
    expect(books.TLC).toEqual({ signedGiB: 1000, allocatedGiB: 1400, foundGiB: 0, freeGiB: 0 });
    expect(balanced(books.TLC!)).toBe(false);
  });

  it('balances through any sequence of allocations and releases the allocator makes', () => {
    const drives = fc
      .array(fc.record({ gib: fc.integer({ min: 400, max: 8000 }), qlc: fc.boolean() }), { minLength: 1, maxLength: 6 })
      .map((specs) => specs.map((s, i) => (s.qlc ? qlc(`p${i}`, s.gib) : tlc(`p${i}`, s.gib))));
    const steps = fc.array(
      fc.oneof(
        fc.record({ give: fc.integer({ min: 1, max: 3 }), gib: fc.integer({ min: 384, max: 3000 }) }),
        fc.record({ release: fc.nat(), leftOnDevices: fc.boolean() }),
      ),
      { maxLength: 12 },
    );
    fc.assert(
      fc.property(drives, steps, (physicalDrives, plan) => {
        let ledger: AllocationLedger = emptyLedger();
        const uuids = sequentialUuids();
        plan.forEach((step, i) => {
          if ('release' in step) {
            const uids = Object.keys(ledger.containers);
            if (uids.length > 0)
              ledger = withoutContainer(ledger, uids[step.release % uids.length]!, step.leftOnDevices, 'guid');
            return;
          }
          const result = allocateVirtualDrives(
            {
              physicalDrives,
              claimed: ledgerClaims(ledger),
              request: { driveCores: step.give, numDrives: step.give, driveCapacity: step.gib },
              settings: DEFAULT_ALLOCATION_SETTINGS,
            },
            uuids,
          );
          if (result.ok) ledger = withAllocation(ledger, `uid-${i}`, `ns/c${i}`, holding(...result.virtualDrives));
        });
        for (const books of Object.values(ledgerBooks(physicalDrives, ledger))) expect(balanced(books)).toBe(true);
      }),
    );
  });
});

describe('nodeBooks', () => {
  it("reads a Node's shared drives and ledger annotations", () => {
    const ledger = withAllocation(emptyLedger(), 'uid-a', 'ns/a', holding(vd('a1', t1, 300)));
    const result = nodeBooks({
      [SHARED_DRIVES_ANNOTATION]: encodeSharedDrivesAnnotation([t1]),
      [ALLOCATIONS_ANNOTATION]: encodeLedger(ledger),
    });
    expect(result).toEqual({
      ok: true,
      books: {
        TLC: { signedGiB: 1000, allocatedGiB: 300, foundGiB: 0, freeGiB: 700 },
        QLC: { signedGiB: 0, allocatedGiB: 0, foundGiB: 0, freeGiB: 0 },
      },
    });
  });

  it('says which annotation it cannot read', () => {
    expect(nodeBooks({ [ALLOCATIONS_ANNOTATION]: '{' })).toMatchObject({
      ok: false,
      message: expect.stringContaining(ALLOCATIONS_ANNOTATION),
    });
    expect(nodeBooks({ [SHARED_DRIVES_ANNOTATION]: 'nope' })).toMatchObject({
      ok: false,
      message: expect.stringContaining(SHARED_DRIVES_ANNOTATION),
    });
  });
});
