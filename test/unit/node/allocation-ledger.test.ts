// A node's allocation ledger: its annotation reads back what was written and refuses anything
// malformed without throwing; releasing keeps what may be left on the devices; reading the
// devices counts every virtual drive no container holds, and forgets only what is gone; an
// allocation shown elsewhere (an answer, a status) is compared with it exactly.
import { describe, expect, it } from 'vitest';
import {
  decodeLedger,
  emptyLedger,
  encodeLedger,
  ledgerClaims,
  reconcileLedger,
  sameAllocation,
  withAllocation,
  withoutContainer,
  type AllocationLedger,
} from '../../../src/node/allocation-ledger.js';

const vd = (n: number, physicalUUID = 'p1', capacityGiB = 100) => ({
  virtualUUID: `v${n}`,
  physicalUUID,
  capacityGiB,
  serial: 'S1',
  type: 'TLC' as const,
});

const withTwo: AllocationLedger = withAllocation(
  withAllocation(emptyLedger(), 'uid-a', 'ns/a', {
    virtualDrives: [vd(1), vd(2, 'p2')],
    wekaPort: 14000,
    agentPort: 14001,
  }),
  'uid-b',
  'ns/b',
  { virtualDrives: [vd(3)] },
);

describe('allocation ledger annotation', () => {
  it('reads back exactly what was written, ports included', () => {
    const decoded = decodeLedger(encodeLedger(withTwo));
    expect(decoded).toEqual({ ok: true, ledger: withTwo });
  });

  it("reads back whole drives, which the allocator counts as the container's exclusive serials", () => {
    const whole = withAllocation(emptyLedger(), 'u', 'ns/w', {
      virtualDrives: [],
      drives: ['s1', 's2'],
      wekaPort: 14000,
      agentPort: 14100,
    });
    expect(decodeLedger(encodeLedger(whole))).toEqual({ ok: true, ledger: whole });
    expect(ledgerClaims(whole)).toEqual([{ container: 'ns/w', virtualDrives: [], exclusiveSerials: ['s1', 's2'] }]);
  });

  it('reads a missing annotation as an empty ledger', () => {
    expect(decodeLedger(undefined)).toEqual({ ok: true, ledger: emptyLedger() });
  });

  it.each([
    ['not JSON', '{'],
    ['a list', '[]'],
    ['no found list', '{"containers":{}}'],
    ['an entry without drives', '{"containers":{"u":{"container":"ns/a"}},"found":[]}'],
    [
      'a drive of the wrong shape',
      '{"containers":{"u":{"container":"ns/a","virtualDrives":[["v","p",1]]}},"found":[]}',
    ],
    [
      'a drive of 0 GiB',
      '{"containers":{"u":{"container":"ns/a","virtualDrives":[["v","p",0,"s","TLC"]]}},"found":[]}',
    ],
    [
      'an unknown drive type',
      '{"containers":{"u":{"container":"ns/a","virtualDrives":[["v","p",1,"s","SLC"]]}},"found":[]}',
    ],
    ['bad ports', '{"containers":{"u":{"container":"ns/a","virtualDrives":[],"ports":[1]}},"found":[]}'],
    [
      'a whole drive without a serial',
      '{"containers":{"u":{"container":"ns/a","virtualDrives":[],"drives":[""]}},"found":[]}',
    ],
    ['a found drive of the wrong shape', '{"containers":{},"found":[["v","p"]]}'],
  ])('refuses %s with a message naming the annotation', (_, text) => {
    const decoded = decodeLedger(text);
    expect(decoded.ok).toBe(false);
    if (!decoded.ok) expect(decoded.message).toMatch(/^annotation weka\.weka\.io\/allocations /);
  });
});

describe('allocation ledger changes', () => {
  it('counts every container and every found drive, except the one asking', () => {
    const ledger = {
      ...withTwo,
      found: [{ virtualUUID: 'f', physicalUUID: 'p1', capacityGiB: 50, ownerClusterGUID: 'g' }],
    };
    expect(ledgerClaims(ledger).map((c) => c.container)).toEqual([
      'ns/a',
      'ns/b',
      'virtual drives found on the devices',
    ]);
    expect(ledgerClaims(ledger, 'uid-a').map((c) => c.container)).toEqual([
      'ns/b',
      'virtual drives found on the devices',
    ]);
  });

  it('forgets a released container whose drives were removed, and keeps counting those left on the devices', () => {
    expect(withoutContainer(withTwo, 'uid-a', false)).toEqual({
      containers: { 'uid-b': withTwo.containers['uid-b'] },
      found: [],
    });
    const left = withoutContainer(withTwo, 'uid-a', true, 'guid');
    expect(left.found).toEqual([
      { virtualUUID: 'v1', physicalUUID: 'p1', capacityGiB: 100, ownerClusterGUID: 'guid' },
      { virtualUUID: 'v2', physicalUUID: 'p2', capacityGiB: 100, ownerClusterGUID: 'guid' },
    ]);
    expect(withoutContainer(withTwo, 'no-such-uid', true)).toBe(withTwo);
  });
});

describe('reading the devices into the ledger', () => {
  const device = (physicalUUID: string, ...uuids: string[]) => ({
    physicalUUID,
    virtualDrives: uuids.map((virtualUUID) => ({ virtualUUID, ownerClusterGUID: 'g', sizeGiB: 100 })),
  });

  it('counts a virtual drive no container holds as found, and reports it once', () => {
    const first = reconcileLedger(
      withTwo,
      [device('p1', 'v1', 'v3', 'stray'), device('p2', 'v2')],
      new Set(['uid-a', 'uid-b']),
    );
    expect(first.found.map((f) => f.virtualUUID)).toEqual(['stray']);
    expect(first.ledger.found.map((f) => f.virtualUUID)).toEqual(['stray']);
    expect(first.ledger.containers).toEqual(withTwo.containers);
    const again = reconcileLedger(
      first.ledger,
      [device('p1', 'v1', 'v3', 'stray'), device('p2', 'v2')],
      new Set(['uid-a', 'uid-b']),
    );
    expect(again.found).toEqual([]);
    expect(again.ledger).toEqual(first.ledger);
  });

  it('drops a found drive no device holds any more', () => {
    const ledger = {
      ...withTwo,
      found: [{ virtualUUID: 'gone', physicalUUID: 'p1', capacityGiB: 50, ownerClusterGUID: 'g' }],
    };
    expect(reconcileLedger(ledger, [device('p1', 'v1', 'v3')], new Set(['uid-a', 'uid-b'])).ledger.found).toEqual([]);
  });

  it('keeps a live container whose drives are not signed yet, and turns a gone one into found drives or forgets it', () => {
    // uid-a is gone; its v1 is still on p1, so v1 is found; uid-b is live with nothing signed yet.
    const withDrive = reconcileLedger(withTwo, [device('p1', 'v1')], new Set(['uid-b']));
    expect(Object.keys(withDrive.ledger.containers)).toEqual(['uid-b']);
    expect(withDrive.ledger.found.map((f) => f.virtualUUID)).toEqual(['v1']);
    expect(withDrive.forgotten).toEqual([]);
    // Nothing of uid-a on the devices: it is forgotten, and its capacity is free.
    const without = reconcileLedger(withTwo, [device('p1')], new Set(['uid-b']));
    expect(without.forgotten).toEqual(['ns/a']);
    expect(without.ledger.found).toEqual([]);
  });
});

describe('a ledger lost with its Node, given back from the devices and the statuses', () => {
  const device = (physicalUUID: string, ...drives: [string, number][]) => ({
    physicalUUID,
    serial: `S-${physicalUUID}`,
    type: 'QLC' as const,
    virtualDrives: drives.map(([virtualUUID, sizeGiB]) => ({ virtualUUID, ownerClusterGUID: 'g', sizeGiB })),
  });
  const shows = (uid: string, drives: [string, string, number][], ports?: [number, number], serials?: string[]) => ({
    uid,
    container: `ns/${uid}`,
    allocation: {
      virtualDrives: drives.map(([virtualUUID, physicalUUID, capacityGiB]) => ({
        virtualUUID,
        physicalUUID,
        capacityGiB,
      })),
      ...(serials ? { drives: serials } : {}),
      ...(ports ? { wekaPort: ports[0], agentPort: ports[1] } : {}),
    },
  });
  const devices = [device('p1', ['v1', 100], ['v2', 200]), device('p2', ['v3', 300])];
  const live = new Set(['a', 'b', 'c']);

  it('gives a live container back the entry its devices prove, with the drive serial and type and its ports', () => {
    const r = reconcileLedger(emptyLedger(), devices, live, [
      shows(
        'a',
        [
          ['v1', 'p1', 100],
          ['v3', 'p2', 300],
        ],
        [14000, 14100],
      ),
    ]);
    expect(r.restored).toEqual(['ns/a']);
    expect(r.ledger.containers['a']).toEqual({
      container: 'ns/a',
      allocation: {
        virtualDrives: [
          { virtualUUID: 'v1', physicalUUID: 'p1', capacityGiB: 100, serial: 'S-p1', type: 'QLC' },
          { virtualUUID: 'v3', physicalUUID: 'p2', capacityGiB: 300, serial: 'S-p2', type: 'QLC' },
        ],
        wekaPort: 14000,
        agentPort: 14100,
      },
    });
    // What no status proves is found, as before.
    expect(r.ledger.found.map((f) => f.virtualUUID)).toEqual(['v2']);
  });

  it('gives back the replaced drives a status shows that are still on the devices as named, so they are removed and not found', () => {
    const replacing = shows('a', [['v3', 'p2', 300]]);
    const shown = {
      ...replacing,
      allocation: {
        ...replacing.allocation,
        replacedVirtualDrives: [{ virtualUUID: 'v1', physicalUUID: 'p1', capacityGiB: 100 }],
      },
    };
    const r = reconcileLedger(emptyLedger(), devices, live, [shown]);
    expect(r.restored).toEqual(['ns/a']);
    expect(r.ledger.containers['a']?.allocation.replacedVirtualDrives).toEqual([
      { virtualUUID: 'v1', physicalUUID: 'p1', capacityGiB: 100, serial: 'S-p1', type: 'QLC' },
    ]);
    expect(r.ledger.found.map((f) => f.virtualUUID)).toEqual(['v2']);
  });

  it.each([
    ['a drive no device holds', [shows('a', [['v9', 'p1', 100]])]],
    ['a drive on another device', [shows('a', [['v1', 'p2', 100]])]],
    ['a drive of another size', [shows('a', [['v1', 'p1', 150]])]],
    ['a drive two statuses name', [shows('a', [['v1', 'p1', 100]]), shows('b', [['v1', 'p1', 100]])]],
    ['a container that is gone', [shows('gone', [['v1', 'p1', 100]])]],
    ['whole drives not signed for exclusive use', [shows('a', [], undefined, ['S9'])]],
  ])('gives nothing back for %s', (_, shown) => {
    const r = reconcileLedger(emptyLedger(), devices, live, shown);
    expect(r.restored).toEqual([]);
    expect(r.ledger.containers).toEqual({});
  });

  it('gives back an entry caught between its allocation and its signing, within what the devices have room for', () => {
    const sized = [{ ...device('p1', ['v1', 100], ['v2', 200]), capacityGiB: 1000 }];
    const halfway = shows('a', [
      ['v1', 'p1', 100],
      ['v8', 'p1', 700],
    ]);
    const r = reconcileLedger(emptyLedger(), sized, live, [halfway]);
    expect(r.restored).toEqual(['ns/a']);
    expect(r.ledger.containers['a']?.allocation.virtualDrives[1]).toEqual({
      virtualUUID: 'v8',
      physicalUUID: 'p1',
      capacityGiB: 700,
      serial: 'S-p1',
      type: 'QLC',
    });
    // 300 GiB signed on the device, and 800 more not signed yet, on a device of 1000: not given back.
    const over = shows('a', [
      ['v1', 'p1', 100],
      ['v8', 'p1', 800],
    ]);
    expect(reconcileLedger(emptyLedger(), sized, live, [over]).restored).toEqual([]);
    // A drive not signed on a device the node does not report, or whose size is not known: not given back.
    expect(reconcileLedger(emptyLedger(), devices, live, [halfway]).restored).toEqual([]);
  });

  it('gives nothing back over what the ledger holds: its drives, whole drives or ports', () => {
    const ledger = withAllocation(emptyLedger(), 'c', 'ns/c', {
      virtualDrives: [{ virtualUUID: 'v2', physicalUUID: 'p1', capacityGiB: 200, serial: 'S-p1', type: 'QLC' }],
      drives: ['W1'],
      wekaPort: 14000,
      agentPort: 14100,
    });
    const r = reconcileLedger(
      ledger,
      devices,
      new Set([...live, 'a2']),
      [
        shows('a', [['v2', 'p1', 200]]),
        shows('b', [['v1', 'p1', 100]], [14050, 14200]),
        shows('a2', [], undefined, ['W1']),
      ],
      new Set(['W1']),
    );
    expect(r.restored).toEqual([]);
    expect(Object.keys(r.ledger.containers)).toEqual(['c']);
  });

  it('gives whole drives back when they are signed for exclusive use and nobody holds them', () => {
    const r = reconcileLedger(
      emptyLedger(),
      [],
      live,
      [shows('a', [], [14000, 14100], ['W1', 'W2'])],
      new Set(['W1', 'W2']),
    );
    expect(r.restored).toEqual(['ns/a']);
    expect(r.ledger.containers['a']?.allocation).toEqual({
      virtualDrives: [],
      drives: ['W1', 'W2'],
      wekaPort: 14000,
      agentPort: 14100,
    });
  });
});

describe('an allocation compared with the ledger', () => {
  const held = withTwo.containers['uid-a']!.allocation;
  it.each([
    ['the same allocation', held, true],
    ['the same, rebuilt field by field', { ...held, virtualDrives: held.virtualDrives.map((d) => ({ ...d })) }, true],
    ['a virtual drive more', { ...held, virtualDrives: [...held.virtualDrives, vd(9)] }, false],
    ['another virtual drive of the same size', { ...held, virtualDrives: [vd(8), vd(2, 'p2')] }, false],
    ['the drives in another order', { ...held, virtualDrives: [...held.virtualDrives].reverse() }, false],
    ['another port', { ...held, wekaPort: 15000 }, false],
    ['whole drives the ledger does not hold', { ...held, drives: ['S9'] }, false],
    ['nothing', undefined, false],
  ])('%s', (_, shown, same) => {
    expect(sameAllocation(shown, held)).toBe(same);
  });

  it('is never the same as an allocation the ledger does not hold', () => {
    expect(sameAllocation(held, null)).toBe(false);
  });
});
