// A node's allocation decisions over one read: several queued asks decided together give what
// deciding them one after the other would, never over-commit a drive, and refuse clearly.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { PhysicalDrive } from '../../../src/allocation/index.js';
import type { WekaCluster, WekaContainer } from '../../../src/api/index.js';
import {
  decideNodeAllocations,
  type AllocationAsk,
  type NodeAllocationInput,
  type NodeDrives,
} from '../../../src/node/node-allocations.js';
import { emptyLedger, type AllocationLedger } from '../../../src/node/allocation-ledger.js';
import { DEFAULT_ALLOCATION_SETTINGS } from '../../../src/allocation/settings.js';
import { sequentialUuids, tlc } from '../allocation/fixtures.js';

const NODE = 'node-a';
const TWO_DRIVES: NodeDrives = { ok: true, drives: [tlc('p1', 3840), tlc('p2', 3840)] };

type Status = NonNullable<WekaContainer['status']>;

/** A drive container on the node; spec fields given as undefined are left out. */
function container(name: string, spec: Record<string, unknown> = {}, status?: Status, namespace = 'ns'): WekaContainer {
  const merged = {
    mode: 'drive',
    image: 'img',
    nodeName: NODE,
    driveCores: 1,
    containerCapacity: 700,
    driveTypesRatio: { tlc: 1, qlc: 0 },
    ...spec,
  };
  return {
    apiVersion: 'weka.weka.io/v1alpha1',
    kind: 'WekaContainer',
    metadata: { name, namespace, uid: `uid-${namespace}-${name}`, resourceVersion: `rv-${name}` },
    spec: Object.fromEntries(Object.entries(merged).filter(([, v]) => v !== undefined)),
    ...(status ? { status } : {}),
  } as unknown as WekaContainer;
}

const ask = (name: string, node = NODE, namespace = 'ns'): AllocationAsk => ({ namespace, name, node });

function input(
  o: Partial<NodeAllocationInput> & { onNode: WekaContainer[]; asks: AllocationAsk[] },
): NodeAllocationInput {
  return {
    node: NODE,
    drives: TWO_DRIVES,
    notListed: new Map(),
    clusters: new Map(),
    settings: DEFAULT_ALLOCATION_SETTINGS,
    ledger: emptyLedger(),
    ...o,
  };
}

/** GiB taken on each physical drive by every claim in the containers' statuses plus the decided allocations. */
function usedPerDrive(
  decided: { virtualDrives: { physicalUUID: string; capacityGiB: number }[] }[],
): Map<string, number> {
  const used = new Map<string, number>();
  for (const a of decided)
    for (const vd of a.virtualDrives) used.set(vd.physicalUUID, (used.get(vd.physicalUUID) ?? 0) + vd.capacityGiB);
  return used;
}

describe('node allocation decisions', () => {
  it('decides queued asks in arrival order, each counting the ones before it, and refuses the ones that no longer fit', () => {
    // 700 GiB each: five fit per 3840 GiB drive, so ten of twelve fit.
    const names = Array.from({ length: 12 }, (_, i) => `c${i}`);
    const decisions = decideNodeAllocations(
      input({ onNode: names.map((n) => container(n)), asks: names.map((n) => ask(n)) }),
      sequentialUuids(),
    ).decisions;
    expect(
      decisions
        .slice(0, 10)
        .every((d) => d.outcome.ok && d.write?.resourceVersion === `rv-${names[decisions.indexOf(d)]}`),
    ).toBe(true);
    for (const d of decisions.slice(10)) {
      expect(d.outcome).toMatchObject({
        ok: false,
        waitForCapacity: true,
        error: { type: 'InsufficientDriveCapacity' },
      });
      expect(d.write).toBeUndefined();
    }
    const used = usedPerDrive(decisions.flatMap((d) => (d.outcome.ok ? [d.outcome.result] : [])));
    for (const [, gib] of used) expect(gib).toBeLessThanOrEqual(3840);
  });

  it('counts what the ledger holds, and answers a container it holds with the same allocation, writing it only where the status lost it', () => {
    const first = decideNodeAllocations(
      input({ onNode: [container('old')], asks: [ask('old')] }),
      sequentialUuids('old'),
    );
    const held = first.decisions[0]!;
    if (!held.outcome.ok) throw new Error('expected an allocation');
    const shown = { allocations: { ...held.outcome.result } } as Status;
    const old = container('old', {}, shown);
    const round = decideNodeAllocations(
      input({ ledger: first.ledger, onNode: [old, container('new')], asks: [ask('old'), ask('new')] }),
      sequentialUuids('new'),
    );
    expect(round.decisions[0]).toEqual({ outcome: { ok: true, result: held.outcome.result } });
    expect(round.decisions[1]!.write).toBeDefined();
    expect(Object.keys(round.ledger.containers).sort()).toEqual(['uid-ns-new', 'uid-ns-old']);
    const used = usedPerDrive(Object.values(round.ledger.containers).map((e) => e.allocation));
    for (const [, gib] of used) expect(gib).toBeLessThanOrEqual(3840);

    // Its status cleared by hand: the same allocation again, written back; nothing new is drawn.
    const cleared = decideNodeAllocations(
      input({ ledger: round.ledger, onNode: [container('old'), container('new')], asks: [ask('old')] }),
      sequentialUuids('again'),
    );
    expect(cleared.decisions[0]).toMatchObject({ outcome: { ok: true, result: held.outcome.result }, write: {} });
    expect(cleared.ledger).toBe(round.ledger);
  });

  it('grows a container it holds when its spec asks for more: the old virtual drives first and unchanged, recorded in the ledger', () => {
    const first = decideNodeAllocations(input({ onNode: [container('c')], asks: [ask('c')] }), sequentialUuids('old'));
    const held = first.decisions[0]!;
    if (!held.outcome.ok) throw new Error('expected an allocation');
    const shown = { allocations: { ...held.outcome.result } } as Status;
    const grown = container('c', { containerCapacity: 2000 }, shown);
    const round = decideNodeAllocations(
      input({ ledger: first.ledger, onNode: [grown], asks: [ask('c')] }),
      sequentialUuids('new'),
    );
    const d = round.decisions[0]!;
    if (!d.outcome.ok) throw new Error('expected the growth');
    expect(d.outcome.error).toBeUndefined();
    const drives = d.outcome.result.virtualDrives;
    expect(drives.slice(0, 1)).toEqual(held.outcome.result.virtualDrives);
    expect(drives.reduce((s, v) => s + v.capacityGiB, 0)).toBe(2000);
    expect(d.write).toBeDefined();
    expect(d.previous).toEqual(held.outcome.result);
    expect(round.ledger.containers['uid-ns-c']?.allocation).toEqual(d.outcome.result);

    // Asked again (a retry, a new run), the ledger answers the same: nothing is allocated twice.
    const again = decideNodeAllocations(
      input({
        ledger: round.ledger,
        onNode: [container('c', { containerCapacity: 2000 }, { allocations: { ...d.outcome.result } } as Status)],
        asks: [ask('c')],
      }),
      sequentialUuids('again'),
    );
    expect(again.decisions[0]).toEqual({ outcome: { ok: true, result: d.outcome.result } });
    expect(again.ledger).toBe(round.ledger);
  });

  it('keeps what a container holds when its growth does not fit, and says why as pending', () => {
    const first = decideNodeAllocations(
      input({
        onNode: [container('c'), container('other', { containerCapacity: 6000 })],
        asks: [ask('c'), ask('other')],
      }),
      sequentialUuids('old'),
    );
    const held = first.decisions[0]!;
    if (!held.outcome.ok) throw new Error('expected an allocation');
    const shown = { allocations: { ...held.outcome.result } } as Status;
    const round = decideNodeAllocations(
      input({ ledger: first.ledger, onNode: [container('c', { containerCapacity: 3000 }, shown)], asks: [ask('c')] }),
      sequentialUuids('new'),
    );
    expect(round.decisions[0]).toMatchObject({
      outcome: {
        ok: true,
        result: held.outcome.result,
        waitForCapacity: true,
        error: { type: 'InsufficientDriveCapacity' },
      },
    });
    expect(round.decisions[0]!.write).toBeUndefined();
    expect(round.ledger).toBe(first.ledger);
  });

  it('never counts a status: capacity a status drops or invents by hand is neither freed nor taken', () => {
    // The ledger gives 3000 GiB of each 3840 GiB drive to "big"; its status claims nothing.
    const big = decideNodeAllocations(
      input({ onNode: [container('big', { containerCapacity: 6000 })], asks: [ask('big')] }),
      sequentialUuids('big'),
    );
    const forged = { allocations: { virtualDrives: [] } } as unknown as Status;
    const next = decideNodeAllocations(
      input({
        ledger: big.ledger,
        onNode: [container('big', { containerCapacity: 6000 }, forged), container('more', { containerCapacity: 2000 })],
        asks: [ask('more')],
      }),
      sequentialUuids('more'),
    );
    expect(next.decisions[0]!.outcome).toMatchObject({ ok: false, error: { type: 'InsufficientDriveCapacity' } });
    // ...and "big", which did not ask, gets its status back.
    expect(next.restores.map((r) => r.ref.name)).toEqual(['big']);

    // A status that claims drives the ledger never gave takes nothing from anyone.
    const invented = { allocations: { virtualDrives: [{ virtualUUID: 'x', physicalUUID: 'p1', capacityGiB: 3840 }] } };
    const free = decideNodeAllocations(
      input({ onNode: [container('liar', {}, invented as unknown as Status), container('c')], asks: [ask('c')] }),
      sequentialUuids('c'),
    );
    expect(free.decisions[0]!.outcome.ok).toBe(true);
  });

  it('counts virtual drives found on the devices as taken', () => {
    const ledger: AllocationLedger = {
      containers: {},
      found: [
        { virtualUUID: 'f1', physicalUUID: 'p1', capacityGiB: 3500, ownerClusterGUID: 'g' },
        { virtualUUID: 'f2', physicalUUID: 'p2', capacityGiB: 3500, ownerClusterGUID: 'g' },
      ],
    };
    const round = decideNodeAllocations(
      input({ ledger, onNode: [container('c', { containerCapacity: 1000 })], asks: [ask('c')] }),
      sequentialUuids(),
    );
    expect(round.decisions[0]!.outcome).toMatchObject({ ok: false, error: { type: 'InsufficientDriveCapacity' } });
  });

  it('gives a container asked for twice one decision, shared by both asks', () => {
    const decisions = decideNodeAllocations(
      input({ onNode: [container('a')], asks: [ask('a'), ask('a')] }),
      sequentialUuids(),
    ).decisions;
    expect(decisions[1]).toEqual({ outcome: decisions[0]!.outcome, sameAs: 0 });
    expect(decisions[1]!.write).toBeUndefined();
  });

  it.each([
    {
      why: 'the container is gone',
      onNode: [],
      notListed: [['ns/a', null]],
      asks: [ask('a')],
      type: 'ContainerGone',
      waits: false,
    },
    {
      why: 'the container is being deleted',
      onNode: [
        { ...container('a'), metadata: { ...container('a').metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } },
      ],
      asks: [ask('a')],
      type: 'ContainerGone',
      waits: false,
    },
    {
      why: 'the container moved to another node',
      onNode: [],
      notListed: [['ns/a', container('a', { nodeName: 'node-b' })]],
      asks: [ask('a')],
      type: 'InvalidObject',
      waits: false,
    },
    {
      why: 'the ask was sent to another node’s mutex',
      onNode: [container('a')],
      asks: [ask('a', 'node-b')],
      type: 'InvalidObject',
      waits: false,
    },
    {
      why: 'its cluster does not exist',
      onNode: [container('a', { cluster: 'gone' })],
      asks: [ask('a')],
      type: 'ClusterNotFound',
      waits: true,
    },
    {
      why: 'it asks for whole drives on a node that has none signed for exclusive use',
      onNode: [container('a', { containerCapacity: undefined, numDrives: 2 })],
      asks: [ask('a')],
      type: 'NoExclusiveDrives',
      waits: true,
    },
    {
      why: 'it asks for neither shared capacity nor a number of whole drives',
      onNode: [container('a', { containerCapacity: undefined, driveTypesRatio: undefined })],
      asks: [ask('a')],
      type: 'InvalidDriveSharingConfig',
      waits: false,
    },
    {
      why: 'the request is larger than the node',
      onNode: [container('a', { containerCapacity: 9000 })],
      asks: [ask('a')],
      type: 'InsufficientDriveCapacity',
      waits: true,
    },
  ])('refuses when $why', ({ onNode, notListed, asks, type, waits }) => {
    const [d] = decideNodeAllocations(
      input({
        onNode: onNode as WekaContainer[],
        asks,
        notListed: new Map((notListed ?? []) as [string, WekaContainer | null][]),
      }),
      sequentialUuids(),
    ).decisions;
    expect(d!.outcome).toMatchObject({ ok: false, waitForCapacity: waits, error: { type } });
    expect(d!.write).toBeUndefined();
  });

  it('gives whole drives that are signed for exclusive use, not blocked, not shared and not held, in serial order', () => {
    const whole = (name: string, numDrives: number) =>
      container(name, { containerCapacity: undefined, driveTypesRatio: undefined, numDrives });
    const ledger = {
      ...emptyLedger(),
      containers: { 'uid-ns-old': { container: 'ns/old', allocation: { virtualDrives: [], drives: ['s4'] } } },
    };
    const round = decideNodeAllocations(
      input({
        exclusive: {
          ok: true,
          signed: ['s5', 's4', 's3', 's2', 's1', TWO_DRIVES.ok ? TWO_DRIVES.drives[0]!.serial : ''],
          blocked: ['s2'],
        },
        ledger,
        onNode: [whole('a', 1), whole('b', 2), whole('c', 1)],
        asks: [ask('a'), ask('b'), ask('c')],
      }),
      sequentialUuids(),
    );
    const [a, b, c] = round.decisions.map((d) => d.outcome);
    expect(a).toMatchObject({ ok: true, result: { virtualDrives: [], drives: ['s1'] } });
    expect(b).toMatchObject({ ok: true, result: { drives: ['s3', 's5'] } });
    // s4 is held, s2 blocked, the shared drive's serial never given whole: nothing is left.
    expect(c).toMatchObject({ ok: false, waitForCapacity: true, error: { type: 'InsufficientDrives' } });
    expect(round.ledger.containers['uid-ns-b']?.allocation.drives).toEqual(['s3', 's5']);
    expect(round.decisions[1]!.write).toBeDefined();
  });

  it('grows a container on whole drives by the difference, next to what it holds, or keeps it and says why not', () => {
    const whole = (numDrives: number) =>
      container('a', { containerCapacity: undefined, driveTypesRatio: undefined, numDrives });
    const ledger = {
      ...emptyLedger(),
      containers: {
        'uid-ns-a': {
          container: 'ns/a',
          allocation: { virtualDrives: [], drives: ['s1'], wekaPort: 14000, agentPort: 14100 },
        },
        'uid-ns-b': { container: 'ns/b', allocation: { virtualDrives: [], drives: ['s3'] } },
      },
    };
    const exclusive = { ok: true as const, signed: ['s1', 's2', 's3', 's4'], blocked: [] };
    const decide = (numDrives: number) =>
      decideNodeAllocations(
        input({ exclusive, ledger, onNode: [whole(numDrives)], asks: [ask('a')] }),
        sequentialUuids(),
      ).decisions[0]!;
    expect(decide(3).outcome).toMatchObject({ ok: true, result: { drives: ['s1', 's2', 's4'], wekaPort: 14000 } });
    expect(decide(3).previous).toMatchObject({ drives: ['s1'] });
    const short = decide(5).outcome;
    expect(short).toMatchObject({ ok: true, result: { drives: ['s1'] }, error: { type: 'InsufficientDrives' } });
    expect(decide(1).outcome).toMatchObject({ ok: true, result: { drives: ['s1'] } });
    expect(decide(1).outcome).not.toHaveProperty('error');
  });

  it('refuses every valid ask with the node’s own refusal when the node has no drives to give', () => {
    const drives: NodeDrives = {
      ok: false,
      refusal: { ok: false, error: { type: 'NoSharedDrives', message: 'none yet' }, waitForCapacity: true },
    };
    const decisions = decideNodeAllocations(
      input({ drives, onNode: [container('a'), container('b')], asks: [ask('a'), ask('b')] }),
      sequentialUuids(),
    ).decisions;
    for (const d of decisions) expect(d.outcome).toMatchObject({ ok: false, error: { type: 'NoSharedDrives' } });
  });

  it('gives each container of a cluster its own ports, counting the ports given earlier in the same batch', () => {
    const cluster = {
      metadata: { name: 'wc', namespace: 'ns' },
      spec: {},
      status: { ports: { basePort: 14000, portRange: 500 } },
    } as unknown as WekaCluster;
    const names = ['a', 'b', 'c'];
    const decisions = decideNodeAllocations(
      input({
        onNode: names.map((n) => container(n, { cluster: 'wc' })),
        asks: names.map((n) => ask(n)),
        clusters: new Map([['ns/wc', cluster]]),
      }),
      sequentialUuids(),
    ).decisions;
    const ports = decisions.map((d) => (d.outcome.ok ? d.outcome.result.wekaPort : undefined));
    expect(ports.every((p) => p !== undefined)).toBe(true);
    expect(new Set(ports).size).toBe(3);
  });

  it("gives standalone containers Weka's default ports first, then the next free ones, outside every cluster's range", () => {
    const decisions = decideNodeAllocations(
      input({
        onNode: [container('a'), container('b'), container('c')],
        asks: [ask('a'), ask('b'), ask('c')],
        clusterRanges: [{ basePort: 14200, size: 500 }],
      }),
      sequentialUuids(),
    ).decisions;
    expect(decisions.map((d) => (d.outcome.ok ? [d.outcome.result.wekaPort, d.outcome.result.agentPort] : d))).toEqual([
      [14000, 14100],
      [14700, 14101],
      [14800, 14102],
    ]);
  });

  it('makes a member wait until its cluster has a port range', () => {
    const cluster = { metadata: { name: 'wc', namespace: 'ns' }, spec: {} } as unknown as WekaCluster;
    const [decision] = decideNodeAllocations(
      input({ onNode: [container('a', { cluster: 'wc' })], asks: [ask('a')], clusters: new Map([['ns/wc', cluster]]) }),
      sequentialUuids(),
    ).decisions;
    expect(decision!.outcome).toMatchObject({
      ok: false,
      error: { type: 'ClusterPortsPending' },
      waitForCapacity: true,
    });
  });

  it('gives ports to an allocation the ledger holds without them, keeping its virtual drives', () => {
    const first = decideNodeAllocations(input({ onNode: [container('a')], asks: [ask('a')] }), sequentialUuids());
    const drives = first.ledger.containers['uid-ns-a']!.allocation.virtualDrives;
    const ledger: AllocationLedger = {
      found: [],
      containers: { 'uid-ns-a': { container: 'ns/a', allocation: { virtualDrives: drives } } },
    };
    const again = decideNodeAllocations(
      input({ ledger, onNode: [container('a')], asks: [ask('a')] }),
      sequentialUuids('x'),
    );
    expect(again.decisions[0]!.outcome).toEqual({
      ok: true,
      result: { virtualDrives: drives, wekaPort: 14000, agentPort: 14100 },
    });
    expect(again.decisions[0]!.write).toBeDefined();
    expect(again.ledger.containers['uid-ns-a']!.allocation).toEqual({
      virtualDrives: drives,
      wekaPort: 14000,
      agentPort: 14100,
    });
  });

  it('decides a batch exactly as one decision after the other, each with a fresh read, would', () => {
    const drives = fc.array(fc.integer({ min: 400, max: 8000 }), { minLength: 1, maxLength: 4 });
    const asks = fc.array(
      fc.record({ name: fc.integer({ min: 0, max: 7 }), capacity: fc.integer({ min: 100, max: 5000 }) }),
      { minLength: 1, maxLength: 12 },
    );
    fc.assert(
      fc.property(drives, asks, (capacities, wanted) => {
        const physical: PhysicalDrive[] = capacities.map((gib, i) => tlc(`p${i}`, gib));
        const specs = new Map(wanted.map((w) => [`c${w.name}`, w.capacity]));
        const containers = [...specs].map(([name, gib]) => container(name, { containerCapacity: gib }));
        const order = wanted.map((w) => ask(`c${w.name}`));
        const base = { drives: { ok: true, drives: physical } as NodeDrives };

        const batch = decideNodeAllocations(
          input({ ...base, onNode: containers, asks: order }),
          sequentialUuids(),
        ).decisions;

        // One at a time: each decision recorded in the ledger before the next read.
        let ledger = emptyLedger();
        const single = order.map((a) => {
          const round = decideNodeAllocations(
            input({ ...base, ledger, onNode: containers, asks: [a] }),
            sequentialUuids(`${a.name}-${Object.keys(ledger.containers).length}`),
          );
          ledger = round.ledger;
          return round.decisions[0]!;
        });
        const shape = (d: (typeof batch)[number]) =>
          d.outcome.ok
            ? [
                d.outcome.result.virtualDrives.map((v) => [v.physicalUUID, v.capacityGiB]),
                d.outcome.result.wekaPort,
                d.outcome.result.agentPort,
              ]
            : d.outcome.error.type;
        expect(batch.map(shape)).toEqual(single.map(shape));

        const used = usedPerDrive(
          batch.filter((d) => d.write).flatMap((d) => (d.outcome.ok ? [d.outcome.result] : [])),
        );
        for (const p of physical) expect(used.get(p.physicalUUID) ?? 0).toBeLessThanOrEqual(p.capacityGiB);
      }),
      { numRuns: 200 },
    );
  });
});
