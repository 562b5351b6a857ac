// Blocked drives: what a block or unblock asks is checked against the node's drives, a blocked drive
// offers nothing, and each virtual drive on one is replaced on another drive of its type with the
// room, the old one kept counted until its container removes it. Nothing is ever over-committed.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ContainerAllocation, VirtualDrive } from '../../../src/allocation/types.js';
import {
  ledgerClaims,
  decodeLedger,
  encodeLedger,
  emptyLedger,
  withAllocation,
} from '../../../src/node/allocation-ledger.js';
import {
  blockedDrivesOf,
  blockedSharedUUIDs,
  planBlock,
  planUnblock,
  replaceBlockedVirtualDrives,
  withoutReplaced,
  withReplacedDrives,
} from '../../../src/node/blocked-drives.js';
import { nodeResources } from '../../../src/node/node-drives.js';
import { qlc, sequentialUuids, tlc } from '../allocation/fixtures.js';

const drives = [tlc('p1', 1000), tlc('p2', 1000), tlc('p3', 500), qlc('q1', 2000)];
const vd = (
  virtualUUID: string,
  physicalUUID: string,
  capacityGiB: number,
  type: 'TLC' | 'QLC' = 'TLC',
): VirtualDrive => ({
  virtualUUID,
  physicalUUID,
  capacityGiB,
  serial: `serial-${physicalUUID}`,
  type,
});
const none = { serials: [], physicalUUIDs: [] };

describe('planBlock and planUnblock', () => {
  const known = { shared: drives, exclusive: ['X1', 'X2'] };
  it.each([
    ['a shared drive by physical UUID', { physicalUUIDs: ['p1'] }, { serials: [], physicalUUIDs: ['p1'] }],
    ['a shared drive by serial', { serials: ['serial-p2'] }, { serials: ['serial-p2'], physicalUUIDs: [] }],
    ['an exclusive drive by serial', { serials: ['X1'] }, { serials: ['X1'], physicalUUIDs: [] }],
  ])('blocks %s', (_, ask, blocked) => {
    expect(planBlock('n', known, none, ask)).toEqual({ ok: true, blocked });
  });

  it('refuses, naming each, a serial or UUID the node did not sign, and blocks nothing', () => {
    const plan = planBlock('n', known, none, { serials: ['X1', 'nope'], physicalUUIDs: ['p9'] });
    expect(plan).toEqual({
      ok: false,
      type: 'UnknownDrive',
      message: 'node n has no signed drive with serial nope, physical UUID p9: nothing was blocked',
    });
  });

  it('blocks again what is blocked without repeating it', () => {
    const plan = planBlock('n', known, { serials: ['X1'], physicalUUIDs: [] }, { serials: ['X1', 'X2'] });
    expect(plan).toEqual({ ok: true, blocked: { serials: ['X1', 'X2'], physicalUUIDs: [] } });
  });

  it('unblocks only what is blocked under that id', () => {
    const current = { serials: ['serial-p1'], physicalUUIDs: ['p2'] };
    expect(planUnblock('n', current, { physicalUUIDs: ['p2'] })).toEqual({
      ok: true,
      blocked: { serials: ['serial-p1'], physicalUUIDs: [] },
    });
    expect(planUnblock('n', current, { physicalUUIDs: ['p1'] })).toMatchObject({ ok: false, type: 'NotBlocked' });
  });
});

describe('a blocked drive offers nothing', () => {
  it('counts a shared drive blocked by its serial or its UUID, and an exclusive one by its serial', () => {
    expect(blockedSharedUUIDs(drives, { serials: ['serial-p1'], physicalUUIDs: ['q1'] })).toEqual(
      new Set(['p1', 'q1']),
    );
    expect(nodeResources(drives, ['X1', 'X2'], { serials: ['serial-p1', 'X2'], physicalUUIDs: ['q1'] })).toEqual({
      'weka.io/shared-drives-capacity': '1500',
      'weka.io/shared-drives-capacity-qlc': '0',
      'weka.io/drives': '1',
    });
  });

  it('reads both annotations, and says which one is malformed', () => {
    expect(
      blockedDrivesOf({ 'weka.io/blocked-drives': '["a"]', 'weka.io/blocked-drives-physical-uuids': '["p"]' }),
    ).toEqual({ ok: true, blocked: { serials: ['a'], physicalUUIDs: ['p'] } });
    const bad = blockedDrivesOf({ 'weka.io/blocked-drives-physical-uuids': '{' });
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.error.message).toContain('weka.io/blocked-drives-physical-uuids');
  });
});

describe('replaceBlockedVirtualDrives', () => {
  const held: ContainerAllocation = {
    virtualDrives: [vd('a', 'p1', 300), vd('b', 'p2', 300), vd('c', 'q1', 400, 'QLC')],
  };
  const claims = (a: ContainerAllocation, others: VirtualDrive[] = []) => [
    { container: 'me', virtualDrives: a.virtualDrives },
    { container: 'other', virtualDrives: others },
  ];

  it('puts each drive on a blocked drive on the unblocked drive of its type with the most room, in its place', () => {
    const d = replaceBlockedVirtualDrives(
      { held, drives, blocked: new Set(['p1']), claimed: claims(held, [vd('o', 'p2', 600)]) },
      sequentialUuids('new'),
    );
    expect(d.unplaced).toEqual([]);
    expect(d.allocation.virtualDrives.map((v) => `${v.virtualUUID}@${v.physicalUUID}:${v.capacityGiB}`)).toEqual([
      'new-1@p3:300',
      'b@p2:300',
      'c@q1:400',
    ]);
    expect(d.allocation.replacedVirtualDrives).toEqual([vd('a', 'p1', 300)]);
  });

  it('keeps a drive no other drive of its type has the room for, and changes nothing then', () => {
    const d = replaceBlockedVirtualDrives(
      { held, drives, blocked: new Set(['q1']), claimed: claims(held) },
      sequentialUuids('new'),
    );
    expect(d).toEqual({ allocation: held, replaced: [], unplaced: [vd('c', 'q1', 400, 'QLC')] });
  });

  it('counts the replacements made before each one', () => {
    const two: ContainerAllocation = { virtualDrives: [vd('a', 'p1', 400), vd('b', 'p1', 400)] };
    const d = replaceBlockedVirtualDrives(
      { held: two, drives: [tlc('p1', 1000), tlc('p2', 500)], blocked: new Set(['p1']), claimed: claims(two) },
      sequentialUuids('new'),
    );
    expect(d.replaced.map((r) => r.replacement.physicalUUID)).toEqual(['p2']);
    expect(d.unplaced.map((v) => v.virtualUUID)).toEqual(['b']);
  });

  it('never over-commits a drive, and keeps every replaced drive counted until it is forgotten', () => {
    const arb = fc.record({
      sizes: fc.array(fc.integer({ min: 50, max: 600 }), { minLength: 1, maxLength: 6 }),
      blocked: fc.subarray(['p1', 'p2', 'p3']),
    });
    fc.assert(
      fc.property(arb, ({ sizes, blocked }) => {
        const physical = ['p1', 'p2', 'p3'];
        let ledger = emptyLedger();
        // Containers placed round-robin, each fitting where it lands (else left out).
        const used = new Map<string, number>();
        sizes.forEach((gib, i) => {
          const p = physical[i % 3]!;
          const cap = drives.find((d) => d.physicalUUID === p)!.capacityGiB;
          if ((used.get(p) ?? 0) + gib > cap) return;
          used.set(p, (used.get(p) ?? 0) + gib);
          ledger = withAllocation(ledger, `u${i}`, `ns/c${i}`, { virtualDrives: [vd(`v${i}`, p, gib)] });
        });
        const out = new Set(blocked);
        const newUuid = sequentialUuids('r');
        for (const uid of Object.keys(ledger.containers)) {
          const entry = ledger.containers[uid]!;
          const d = replaceBlockedVirtualDrives(
            { held: entry.allocation, drives, blocked: out, claimed: ledgerClaims(ledger) },
            newUuid,
          );
          ledger = withAllocation(ledger, uid, entry.container, d.allocation);
        }
        const claimed = new Map<string, number>();
        for (const c of ledgerClaims(ledger))
          for (const v of c.virtualDrives ?? [])
            claimed.set(v.physicalUUID, (claimed.get(v.physicalUUID) ?? 0) + v.capacityGiB);
        for (const d of drives) expect(claimed.get(d.physicalUUID) ?? 0).toBeLessThanOrEqual(d.capacityGiB);
        // Nothing replaced sits on a blocked drive; every old drive is still counted.
        for (const e of Object.values(ledger.containers)) {
          const moved = e.allocation.replacedVirtualDrives ?? [];
          for (const v of e.allocation.virtualDrives)
            if (out.has(v.physicalUUID)) expect(moved.some((m) => m.virtualUUID === v.virtualUUID)).toBe(false);
          expect(decodeLedger(encodeLedger(ledger))).toEqual({ ok: true, ledger });
        }
      }),
    );
  });

  it('forgets replaced drives once removed, and a teardown removes them with the rest', () => {
    const a: ContainerAllocation = { virtualDrives: [vd('n', 'p2', 10)], replacedVirtualDrives: [vd('o', 'p1', 10)] };
    expect(withReplacedDrives(a).virtualDrives.map((v) => v.virtualUUID)).toEqual(['n', 'o']);
    expect(withoutReplaced(a, ['o'])).toEqual({ virtualDrives: [vd('n', 'p2', 10)] });
    expect(withoutReplaced(a, ['x'])).toBe(a);
  });
});
