// The chaos engine's workload: rollouts that ask for more than the nodes hold, spread over several
// namespaces and Weka clusters, and what "settled" means under that pressure. Pure: the engine
// (engine.ts) reads the objects and acts.
import { randomUUID } from 'node:crypto';
import type { WekaContainer } from '../../src/api/index.js';
import { allocateVirtualDrives, type PhysicalDrive } from '../../src/allocation/index.js';
import { allocationRequest } from '../../src/node/requests.js';
import { DEFAULT_ALLOCATION_SETTINGS } from '../../src/allocation/settings.js';
import type { SimulatedDevice } from '../../deploy/local/fake-nodes.js';
import type { Random } from '../support/random.js';

/**
 * Per node 3840 GiB of TLC on two devices and 3840 of QLC on one. Every request below is a
 * multiple of 384 GiB (the smallest virtual drive) of each type, so a node can end completely full.
 */
export const PRESSURE_DEVICES: SimulatedDevice[] = [
  { path: '/dev/nvme0n1', capacityGiB: 1920, type: 'TLC' },
  { path: '/dev/nvme1n1', capacityGiB: 1920, type: 'TLC' },
  { path: '/dev/nvme2n1', capacityGiB: 3840, type: 'QLC' },
];
export const NODE_CAPACITY_GIB = PRESSURE_DEVICES.reduce((sum, d) => sum + d.capacityGiB, 0);

/** A small container: 384 GiB of each type on one core; a large one: 768 of each on two cores. */
export const SMALL_CONTAINER = { driveCores: 1, containerCapacity: 768, driveTypesRatio: { tlc: 1, qlc: 1 } };
const SMALL = SMALL_CONTAINER;
const LARGE = { driveCores: 2, containerCapacity: 1536, driveTypesRatio: { tlc: 1, qlc: 1 } };

export interface PlannedContainer {
  namespace: string;
  name: string;
  /** Index into the run's Weka clusters (the GUID the test gives the standalone container). */
  cluster: number;
  spec: Record<string, unknown>;
}

/** One round's containers, in the two waves the engine creates them in. */
export interface PressurePlan {
  /** Per node, large and small containers asking exactly the node's capacity, in a random order. */
  fill: PlannedContainer[];
  /**
   * Per node, small containers asking the rest of the demand, created after the first wave: they
   * take what the large ones could not, so a node ends full but for less than a small one when the
   * waves allocate in the order they were created (faults can reorder them: see roomLeft).
   */
  topUp: PlannedContainer[];
}

/**
 * One round's containers: per node, `demand` times what it holds (at least 1.2), spread over the
 * namespaces and clusters. The first wave asks exactly each node's capacity in large and small
 * containers; the second asks the rest in small ones.
 */
export function pressurePlan(o: {
  round: number;
  nodes: readonly string[];
  namespaces: readonly string[];
  clusters: number;
  demand: number;
  random: Random;
}): PressurePlan {
  if (o.demand < 1.2) throw new Error(`a pressure rollout asks for at least 120 % of the capacity, not ${o.demand}`);
  const fill: PlannedContainer[] = [];
  const topUp: PlannedContainer[] = [];
  let i = 0;
  const plan = (node: string, spec: typeof SMALL, wave: PlannedContainer[]) => {
    wave.push({
      namespace: o.namespaces[i % o.namespaces.length]!,
      name: `r${o.round}-c${String(i).padStart(3, '0')}`,
      cluster: Math.floor(i / o.namespaces.length) % o.clusters,
      spec: { ...spec, nodeName: node },
    });
    i++;
    return spec.containerCapacity;
  };
  for (const node of o.nodes) {
    let asked = 0;
    // Every size is a multiple of the small one, so the first wave asks exactly the capacity.
    while (asked < NODE_CAPACITY_GIB) {
      const large = NODE_CAPACITY_GIB - asked >= LARGE.containerCapacity && o.random.next() < 0.5;
      asked += plan(node, large ? LARGE : SMALL, fill);
    }
    while (asked < o.demand * NODE_CAPACITY_GIB) asked += plan(node, SMALL, topUp);
  }
  return { fill: o.random.sample(fill, fill.length), topUp: o.random.sample(topUp, topUp.length) };
}

/** The phase and the conditions that are not True: what a person would look at first. */
export function statusText(c: WekaContainer): string {
  const off = (c.status?.conditions ?? []).filter((x) => x.status !== 'True');
  return `${c.status?.phase ?? 'new'}${off.map((x) => `; ${x.type} ${x.reason}: ${x.message}`).join('')}`;
}

/** The capacity refusals a container waits on (the other refusals wait for a spec change). */
const CAPACITY_REFUSALS = new Set(['InsufficientDriveCapacity', 'InsufficientDrives']);

export function waitsForCapacity(c: WekaContainer): boolean {
  const allocated = c.status?.conditions?.find((x) => x.type === 'Allocated');
  return (
    c.status?.phase === 'Allocating' &&
    allocated?.status === 'False' &&
    CAPACITY_REFUSALS.has(allocated.reason ?? '') &&
    (c.status.allocations?.virtualDrives?.length ?? 0) === 0
  );
}

/**
 * Whether the container's request fits in what its node's drives have left after every other
 * container's status on the node: the allocator itself, fed from the outside's view.
 */
export function fitsOnNode(c: WekaContainer, drives: readonly PhysicalDrive[], all: readonly WekaContainer[]): boolean {
  const claimed = all
    .filter((o) => o !== c && o.spec.nodeName === c.spec.nodeName)
    .map((o) => ({
      container: `${o.metadata.namespace}/${o.metadata.name}`,
      virtualDrives: o.status?.allocations?.virtualDrives ?? [],
    }));
  const result = allocateVirtualDrives(
    { physicalDrives: drives, claimed, request: allocationRequest(c.spec), settings: DEFAULT_ALLOCATION_SETTINGS },
    randomUUID,
  );
  return result.ok;
}

/**
 * Why the containers have not settled yet ([] once settled): settled is every container Ready,
 * or waiting for capacity that its node does not have; none being deleted.
 */
export function unsettled(
  containers: readonly WekaContainer[],
  drivesOf: (node: string) => readonly PhysicalDrive[] | undefined,
): string[] {
  const out: string[] = [];
  for (const c of containers) {
    const name = `${c.metadata.namespace}/${c.metadata.name}`;
    if (c.metadata.deletionTimestamp) out.push(`${name} is being deleted (${statusText(c)})`);
    else if (c.status?.phase === 'Ready') continue;
    else if (!waitsForCapacity(c)) out.push(`${name} is ${statusText(c)}`);
    else {
      const drives = drivesOf(c.spec.nodeName ?? '');
      if (!drives) out.push(`${name} waits on node ${c.spec.nodeName}, whose shared drives cannot be read`);
      else if (fitsOnNode(c, drives, containers))
        out.push(`${name} waits for capacity that node ${c.spec.nodeName} has (${statusText(c)})`);
    }
  }
  return out;
}

/** Per node, the share of its capacity the statuses hold (0 to 1). */
export function nodeFill(containers: readonly WekaContainer[], nodes: readonly string[]): Map<string, number> {
  const fill = new Map(nodes.map((n) => [n, 0]));
  for (const c of containers) {
    const node = c.spec.nodeName ?? '';
    if (!fill.has(node)) continue;
    const gib = (c.status?.allocations?.virtualDrives ?? []).reduce((sum, vd) => sum + vd.capacityGiB, 0);
    fill.set(node, fill.get(node)! + gib / NODE_CAPACITY_GIB);
  }
  return fill;
}

/**
 * The nodes a pressure rollout left with room for one of its waiters, or with room and no waiter:
 * every node must end full but for less than the smallest container still waiting on it. `fill` is
 * nodeFill's answer for the same containers. Which
 * containers end up waiting depends on the order the faults let them ask in (a node whose small
 * containers all came early can leave a large one 768 GiB short), so the room left is measured
 * against the waiters, not against a fixed share of the node.
 */
export function roomLeft(containers: readonly WekaContainer[], fill: ReadonlyMap<string, number>): string[] {
  const out: string[] = [];
  for (const [node, share] of fill) {
    const free = Math.round((1 - share) * NODE_CAPACITY_GIB);
    if (free <= 0) continue;
    const waiters = containers
      .filter((c) => c.spec.nodeName === node && waitsForCapacity(c))
      .map((c) => ({ name: `${c.metadata.namespace}/${c.metadata.name}`, gib: askedGiB(c) }))
      .sort((a, b) => a.gib - b.gib);
    const smallest = waiters[0];
    if (!smallest) out.push(`node ${node} has ${free} GiB left and no container waiting for capacity`);
    else if (smallest.gib <= free)
      out.push(`node ${node} has ${free} GiB left, enough for ${smallest.name} (${smallest.gib} GiB), which waits`);
  }
  return out;
}

function askedGiB(c: WekaContainer): number {
  return allocationRequest(c.spec).containerCapacity ?? 0;
}
