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
} from '../../../src/lifecycle/node-allocations.js';
import { DEFAULT_ALLOCATION_SETTINGS } from '../../../src/settings/index.js';
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
  } as WekaContainer;
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
    );
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

  it('counts what containers on the node already hold, and answers an already allocated container from its status without writing', () => {
    const held = decideNodeAllocations(
      input({ onNode: [container('old')], asks: [ask('old')] }),
      sequentialUuids('old'),
    )[0]!;
    if (!held.outcome.ok) throw new Error('expected an allocation');
    const old = container('old', {}, { allocations: { virtualDrives: held.outcome.result.virtualDrives } } as Status);
    const decisions = decideNodeAllocations(
      input({ onNode: [old, container('new')], asks: [ask('old'), ask('new')] }),
      sequentialUuids('new'),
    );
    expect(decisions[0]).toEqual({
      outcome: { ok: true, result: { virtualDrives: held.outcome.result.virtualDrives } },
    });
    expect(decisions[1]!.write).toBeDefined();
    const used = usedPerDrive([
      held.outcome.result,
      ...decisions.slice(1).flatMap((d) => (d.outcome.ok ? [d.outcome.result] : [])),
    ]);
    for (const [, gib] of used) expect(gib).toBeLessThanOrEqual(3840);
  });

  it('gives a container asked for twice one decision, shared by both asks', () => {
    const decisions = decideNodeAllocations(
      input({ onNode: [container('a')], asks: [ask('a'), ask('a')] }),
      sequentialUuids(),
    );
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
      why: 'it asks for no capacity (exclusive drives)',
      onNode: [container('a', { containerCapacity: undefined, numDrives: 2 })],
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
    );
    expect(d!.outcome).toMatchObject({ ok: false, waitForCapacity: waits, error: { type } });
    expect(d!.write).toBeUndefined();
  });

  it('refuses every valid ask with the node’s own refusal when the node has no drives to give', () => {
    const drives: NodeDrives = {
      ok: false,
      refusal: { ok: false, error: { type: 'NoSharedDrives', message: 'none yet' }, waitForCapacity: true },
    };
    const decisions = decideNodeAllocations(
      input({ drives, onNode: [container('a'), container('b')], asks: [ask('a'), ask('b')] }),
      sequentialUuids(),
    );
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
    );
    const ports = decisions.map((d) => (d.outcome.ok ? d.outcome.result.wekaPort : undefined));
    expect(ports.every((p) => p !== undefined)).toBe(true);
    expect(new Set(ports).size).toBe(3);
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

        const batch = decideNodeAllocations(input({ ...base, onNode: containers, asks: order }), sequentialUuids());

        // One at a time: each decision written into the container's status before the next read.
        let state = containers;
        const single = order.map((a) => {
          const [d] = decideNodeAllocations(
            input({ ...base, onNode: state, asks: [a] }),
            sequentialUuids(`${a.name}-${state.length}`),
          );
          if (d!.write && d!.outcome.ok) {
            const result = d!.outcome.result;
            state = state.map((c) =>
              c.metadata.name === a.name
                ? { ...c, status: { allocations: { virtualDrives: result.virtualDrives } } as Status }
                : c,
            );
          }
          return d!;
        });
        const shape = (d: (typeof batch)[number]) =>
          d.outcome.ok
            ? d.outcome.result.virtualDrives.map((v) => [v.physicalUUID, v.capacityGiB])
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
