import { describe, expect, it } from 'vitest';
import type { PhysicalDrive } from '../../../src/allocation/index.js';
import type { WekaContainer } from '../../../src/api/index.js';
import {
  fitsOnNode,
  NODE_CAPACITY_GIB,
  nodeFill,
  PRESSURE_DEVICES,
  pressurePlan,
  roomLeft,
  unsettled,
  type PlannedContainer,
} from '../../chaos/pressure.js';
import { seededRandom } from '../../support/random.js';

const DRIVES: PhysicalDrive[] = PRESSURE_DEVICES.map((d, i) => ({
  physicalUUID: `00000000-0000-4000-8000-00000000000${i}`,
  serial: `SER${i}`,
  capacityGiB: d.capacityGiB,
  type: d.type,
  devicePath: d.path,
}));

function container(
  name: string,
  o: { phase?: string; gib?: number; waiting?: boolean; deleting?: boolean; small?: boolean } = {},
): WekaContainer {
  const perType = (o.gib ?? 0) / 2;
  return {
    apiVersion: 'weka.weka.io/v1alpha1',
    kind: 'WekaContainer',
    metadata: {
      name,
      namespace: 'ns',
      uid: name,
      ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
    },
    spec: {
      mode: 'drive',
      nodeName: 'n1',
      driveCores: o.small === false ? 2 : 1,
      containerCapacity: o.small === false ? 1536 : 768,
      driveTypesRatio: { tlc: 1, qlc: 1 },
    },
    status: {
      phase: o.phase ?? 'Ready',
      ...(perType > 0
        ? {
            allocations: {
              // Half of the TLC on each TLC device, the QLC on the QLC device.
              virtualDrives: [0, 1, 2].map((d) => ({
                virtualUUID: `${name}-${d}`,
                physicalUUID: DRIVES[d]!.physicalUUID,
                serial: DRIVES[d]!.serial,
                capacityGiB: d === 2 ? perType : perType / 2,
                type: d === 2 ? 'QLC' : 'TLC',
              })),
            },
          }
        : {}),
      conditions: o.waiting
        ? [
            {
              type: 'Allocated',
              status: 'False',
              reason: 'InsufficientDriveCapacity',
              message: 'no room',
              lastTransitionTime: '2026-01-01T00:00:00Z',
            },
          ]
        : [],
    },
  } as unknown as WekaContainer;
}

describe('pressurePlan', () => {
  const plan = pressurePlan({
    round: 1,
    nodes: ['a', 'b', 'c'],
    namespaces: ['ns0', 'ns1'],
    clusters: 2,
    demand: 1.25,
    random: seededRandom(7),
  });
  const asked = (wave: readonly PlannedContainer[], node: string) =>
    wave.filter((c) => c.spec['nodeName'] === node).reduce((s, c) => s + (c.spec['containerCapacity'] as number), 0);

  it('asks every node for exactly its capacity first, then for the rest of the demand in small containers', () => {
    for (const node of ['a', 'b', 'c']) {
      expect(asked(plan.fill, node)).toBe(NODE_CAPACITY_GIB);
      expect(asked(plan.fill, node) + asked(plan.topUp, node)).toBeGreaterThanOrEqual(1.25 * NODE_CAPACITY_GIB);
    }
    expect(new Set(plan.topUp.map((c) => c.spec['containerCapacity']))).toEqual(new Set([768]));
    expect(new Set(plan.fill.map((c) => c.spec['containerCapacity']))).toEqual(new Set([768, 1536]));
  });

  it('spreads over every namespace and cluster, with unique names, in a random order', () => {
    const all = [...plan.fill, ...plan.topUp];
    expect(new Set(all.map((c) => c.namespace))).toEqual(new Set(['ns0', 'ns1']));
    expect(new Set(all.map((c) => c.cluster))).toEqual(new Set([0, 1]));
    expect(new Set(all.map((c) => `${c.namespace}/${c.name}`)).size).toBe(all.length);
    const sorted = [...plan.fill].sort((x, y) => x.name.localeCompare(y.name));
    expect(plan.fill.map((c) => c.name)).not.toEqual(sorted.map((c) => c.name));
  });

  it('refuses a demand under 120 %', () => {
    expect(() =>
      pressurePlan({ round: 1, nodes: ['a'], namespaces: ['ns'], clusters: 1, demand: 1.1, random: seededRandom(1) }),
    ).toThrow(/at least 120 %/);
  });
});

describe('unsettled', () => {
  const drives = () => DRIVES;

  it('is settled when every container is Ready or waits for capacity its node lacks', () => {
    // 3840 GiB of QLC on one device: five large holders leave nothing for a waiter.
    const holders = Array.from({ length: 5 }, (_, i) => container(`h${i}`, { gib: 1536 }));
    expect(unsettled([...holders, container('w', { phase: 'Allocating', waiting: true })], drives)).toEqual([]);
  });

  it('reports a waiter that would fit, a container on its way and one being deleted', () => {
    const out = unsettled(
      [
        container('h', { gib: 768 }),
        container('w', { phase: 'Allocating', waiting: true }),
        container('s', { phase: 'Signing' }),
        container('d', { deleting: true }),
      ],
      drives,
    );
    expect(out).toEqual([
      expect.stringMatching(/ns\/w waits for capacity that node n1 has/),
      expect.stringMatching(/ns\/s is Signing/),
      expect.stringMatching(/ns\/d is being deleted/),
    ]);
  });

  it('reports a waiter whose node has no readable drives', () => {
    expect(unsettled([container('w', { phase: 'Allocating', waiting: true })], () => undefined)).toEqual([
      expect.stringMatching(/cannot be read/),
    ]);
  });
});

describe('fitsOnNode and nodeFill', () => {
  it('counts what the other statuses on the node hold', () => {
    const w = container('w', { phase: 'Allocating', waiting: true });
    expect(fitsOnNode(w, DRIVES, [w])).toBe(true);
    const full = Array.from({ length: 5 }, (_, i) => container(`h${i}`, { gib: 1536 }));
    expect(fitsOnNode(w, DRIVES, [w, ...full])).toBe(false);
    expect(nodeFill(full, ['n1', 'n2'])).toEqual(
      new Map([
        ['n1', 1],
        ['n2', 0],
      ]),
    );
  });
});

describe('roomLeft', () => {
  // Four large holders and one small one: 6912 of 7680 GiB, 768 left.
  const held = [
    ...Array.from({ length: 4 }, (_, i) => container(`h${i}`, { gib: 1536 })),
    container('s', { gib: 768 }),
  ];
  const large = () => container('wl', { phase: 'Allocating', waiting: true, small: false });
  const small = () => container('ws', { phase: 'Allocating', waiting: true });
  const roomOnN1 = (containers: WekaContainer[]) => roomLeft(containers, nodeFill(containers, ['n1']));

  it('accepts a node left short of its smallest waiter, a large one 768 GiB short', () => {
    expect(roomOnN1([...held, large()])).toEqual([]);
  });

  it('accepts a full node, with or without waiters', () => {
    const full = Array.from({ length: 5 }, (_, i) => container(`h${i}`, { gib: 1536 }));
    expect(roomOnN1([...full, small()])).toEqual([]);
    expect(roomOnN1(full)).toEqual([]);
  });

  it('reports a node with room for a waiter, even when the allocator says it does not fit', () => {
    expect(roomOnN1([...held, large(), small()])).toEqual([
      'node n1 has 768 GiB left, enough for ns/ws (768 GiB), which waits',
    ]);
  });

  it('reports a node with room and nothing waiting: the rollout did not press on it', () => {
    expect(roomOnN1(held)).toEqual(['node n1 has 768 GiB left and no container waiting for capacity']);
  });
});
