// The allocation decisions of one node's mutex, as a pure function over one read of the node:
// its shared drives and allocation ledger, every WekaContainer on it, and the clusters they
// belong to. What is taken is what the ledger holds (allocation-ledger.ts), never a status. The mutex may
// decide several queued allocations at once; they are decided in arrival order, each counting
// the virtual drives and ports given to the ones before it, exactly as if they had been decided
// one after the other with a fresh read each time.
import { EXCLUSIVE_DRIVES_ANNOTATION } from '../annotations/exclusive-drives.js';
import {
  allocateContainerPorts,
  allocateExclusiveDrives,
  allocateStandalonePorts,
  allocateVirtualDrives,
  containerPortBlocks,
  type ContainerDriveClaims,
  type ContainerPorts,
  type DriveSharingError,
  type PhysicalDrive,
  type PortBlock,
  type PortRange,
  type UuidSource,
} from '../allocation/index.js';
import type { AllocationRefusal, ContainerAllocation } from '../allocation/types.js';
import type { AllocationSettings } from '../allocation/settings.js';
import type { WekaCluster, WekaContainer } from '../api/index.js';
import { ledgerClaims, sameAllocation, withAllocation, type AllocationLedger } from './allocation-ledger.js';
import { decideForHeld, type HeldDecision } from './held-growth.js';
import { drivesList, NO_REPLACEMENT_CAPACITY, replaceBlockedVirtualDrives } from './blocked-drives.js';
import { refText, type ObjectRef } from '../api/names.js';
import { allocationRequest, usesDriveSharing } from './requests.js';

/** A container's request to its node's mutex: which container, on which node. */
export interface AllocationAsk extends ObjectRef {
  node: string;
}

/** The answer to one ask: its allocation, or a refusal saying whether more capacity could help. */
export type AllocationOutcome =
  | {
      ok: true;
      result: ContainerAllocation;
      /** Served in part: what it holds, and why the growth its request asks for is not made yet. */
      error?: AllocationRefusal;
      waitForCapacity?: boolean;
    }
  | { ok: false; error: AllocationRefusal; waitForCapacity: boolean };

/** The node's shared drives as read, or why there are none to allocate from. */
export type NodeDrives =
  { ok: true; drives: PhysicalDrive[] } | { ok: false; refusal: AllocationOutcome & { ok: false } };

/** The node's drives signed for exclusive use (serials), and the blocked ones, or why they cannot be read. */
export type ExclusiveNodeDrives =
  { ok: true; signed: string[]; blocked: string[] } | { ok: false; refusal: AllocationOutcome & { ok: false } };

export interface NodeAllocationInput {
  node: string;
  drives: NodeDrives;
  /** Absent: the node offers none. */
  exclusive?: ExclusiveNodeDrives;
  /** What the node's mutex gave each container, and what was found on its devices: the only claims counted. */
  ledger: AllocationLedger;
  /** Physical UUIDs of the shared drives blocked on the node (blocked-drives.ts): never chosen, their virtual drives replaced. */
  blocked?: ReadonlySet<string>;
  /** Every WekaContainer whose spec.nodeName is the node, as listed. */
  onNode: readonly WekaContainer[];
  /** The asks, in arrival order. */
  asks: readonly AllocationAsk[];
  /** An asked-for container that is not on the node's list, read on its own (null: it does not exist). */
  notListed: ReadonlyMap<string, WekaContainer | null>;
  /** The clusters the asking containers name, by "namespace/name" (null: it does not exist). */
  clusters: ReadonlyMap<string, WekaCluster | null>;
  /**
   * Every cluster's allocated port range (any namespace), which a standalone container's ports
   * stay out of; needed only when a standalone container asks (see needsClusterRanges).
   */
  clusterRanges?: readonly PortRange[];
  settings: AllocationSettings;
}

/** An allocation to write to a container's status, conditional on the version read. */
export interface StatusWrite {
  ref: ObjectRef;
  uid: string;
  resourceVersion: string | undefined;
}

/**
 * One decision per ask; `write` is set when the container's status does not show its allocation
 * yet (a new one, or one its status lost).
 */
export interface NodeAllocationDecision {
  outcome: AllocationOutcome;
  write?: StatusWrite;
  /** The same container asked before, at this index: this ask shares that one's decision. */
  sameAs?: number;
  /** What the container held before this decision grew it: the ledger goes back to it if the write is refused. */
  previous?: ContainerAllocation;
}

export const refusal = (
  type: string,
  message: string,
  waitForCapacity: boolean,
  data: Record<string, unknown> = {},
): AllocationOutcome & { ok: false } => ({
  ok: false,
  error: { ...data, type, message },
  waitForCapacity,
});

export const objectKey = (ref: ObjectRef): string => `${ref.namespace}/${ref.name}`;
/** The "namespace/name" of a listed container, as objectKey gives it for a ref. */
export const containerKey = (c: WekaContainer): string => `${c.metadata.namespace ?? ''}/${c.metadata.name ?? ''}`;
const idOf = (c: WekaContainer): string => c.metadata.uid ?? containerKey(c);

/** The "namespace/name" of the clusters the asks' containers belong to: what the caller must read. */
export function clustersToRead(containers: readonly (WekaContainer | null | undefined)[]): ObjectRef[] {
  const refs = new Map<string, ObjectRef>();
  for (const c of containers) {
    if (c?.spec.cluster)
      refs.set(objectKey({ namespace: c.metadata.namespace ?? '', name: c.spec.cluster }), {
        namespace: c.metadata.namespace ?? '',
        name: c.spec.cluster,
      });
  }
  return [...refs.values()];
}

/** Whether any of the asking containers is standalone, so the caller must read every cluster's range. */
export function needsClusterRanges(containers: readonly (WekaContainer | null | undefined)[]): boolean {
  return containers.some((c) => c !== null && c !== undefined && !c.spec.cluster);
}

/** The decisions of one round, the ledger after them, and the statuses that lost their allocation. */
export interface NodeAllocationRound {
  decisions: NodeAllocationDecision[];
  ledger: AllocationLedger;
  /** Live containers, not among the asks, whose status no longer shows what the ledger holds for them. */
  restores: (StatusWrite & { allocation: ContainerAllocation })[];
}

export function decideNodeAllocations(input: NodeAllocationInput, newUuid: UuidSource): NodeAllocationRound {
  const { node, settings } = input;
  const blocked = input.blocked ?? new Set<string>();
  // A blocked drive offers nothing: allocations and growths choose among the others.
  const drives: NodeDrives =
    input.drives.ok && blocked.size > 0
      ? { ok: true, drives: input.drives.drives.filter((d) => !blocked.has(d.physicalUUID)) }
      : input.drives;
  let ledger = input.ledger;
  const listed = new Map(input.onNode.map((c) => [containerKey(c), c]));
  const ports = new Map<string, PortBlock[]>(
    Object.entries(ledger.containers).map(([uid, e]) => [uid, portsOf(e.allocation)]),
  );
  const firstAsk = new Map<string, number>();

  const decide = (ask: AllocationAsk): NodeAllocationDecision => {
    const ref = { namespace: ask.namespace, name: ask.name };
    if (ask.node !== node)
      return {
        outcome: refusal(
          'InvalidObject',
          `${refText(ref)} asked the mutex of node ${node} for node ${ask.node}`,
          false,
        ),
      };
    const container = listed.get(objectKey(ref)) ?? input.notListed.get(objectKey(ref)) ?? null;
    if (!container || container.metadata.deletionTimestamp)
      return { outcome: refusal('ContainerGone', `${refText(ref)} no longer exists or is being deleted`, false) };
    if (container.spec.nodeName !== node)
      return {
        outcome: refusal(
          'InvalidObject',
          `${refText(ref)} is on node ${container.spec.nodeName ?? '(none)'}, not ${node}`,
          false,
        ),
      };
    const self = idOf(container);
    const write = { ref, uid: self, resourceVersion: container.metadata.resourceVersion };
    const clusterKey = container.spec.cluster
      ? objectKey({ namespace: ask.namespace, name: container.spec.cluster })
      : undefined;
    const cluster = clusterKey ? (input.clusters.get(clusterKey) ?? null) : null;
    const wholeDrivesInput = (): WholeDrivesInput => ({
      ref,
      container,
      cluster,
      exclusive: input.exclusive,
      shared: drives,
      claimed: ledgerClaims(ledger, self),
    });
    // Already given (a retry after the answer was lost, a status that lost it, a spec that grew):
    // the same again, grown if the request asks for more and it fits. An allocation made without
    // ports (before containers had them) gets its ports first, below.
    const held = ledger.containers[self]?.allocation;
    if (held && hasPorts(held)) {
      const kept = held.drives?.length
        ? growWholeDrives(held, wholeDrivesInput())
        : decideForHeld(
            {
              held,
              container,
              cluster: clusterKey ? cluster : undefined,
              drives: drives.ok ? drives : { ...drives.refusal },
              ledger,
              settings,
              waitsForNode,
            },
            newUuid,
          );
      const swapped = replaceOnBlocked(kept, input.drives, blocked, ledger, newUuid);
      if (swapped.allocation !== held)
        ledger = withAllocation(ledger, self, containerKey(container), swapped.allocation);
      const outcome: AllocationOutcome = { ok: true, result: swapped.allocation, ...swapped.pending };
      const shown = sameAllocation(container.status?.allocations, swapped.allocation);
      return { outcome, ...(shown ? {} : { write }), ...(swapped.allocation !== held ? { previous: held } : {}) };
    }
    if (clusterKey && !cluster)
      return { outcome: refusal('ClusterNotFound', `WekaCluster ${clusterKey} does not exist`, true) };
    let allocation: ContainerAllocation;
    if (held) allocation = { ...held };
    else if (!usesDriveSharing(container.spec, cluster?.spec.dynamicTemplate)) {
      const given = exclusiveDrives(wholeDrivesInput());
      if (!given.ok) return { outcome: given.refusal };
      allocation = { virtualDrives: [], drives: given.serials };
    } else if (!drives.ok) return { outcome: drives.refusal };
    else {
      const result = allocateVirtualDrives(
        {
          physicalDrives: drives.drives,
          claimed: ledgerClaims(ledger, self),
          request: allocationRequest(container.spec, cluster?.spec.dynamicTemplate),
          settings,
        },
        newUuid,
      );
      if (!result.ok)
        return {
          outcome: refusal(result.error.type, result.error.message, waitsForNode(result.error), { ...result.error }),
        };
      allocation = { virtualDrives: [...result.virtualDrives] };
    }
    // Ports on the node: every other container's there, whatever its cluster, is taken.
    const taken = [...ports].filter(([id]) => id !== self).flatMap(([, blocks]) => blocks);
    const given = containerPorts(ref, cluster, taken, input.clusterRanges ?? []);
    if (!given.ok) return { outcome: given.refusal };
    allocation.wekaPort = given.ports.wekaPort;
    allocation.agentPort = given.ports.agentPort;
    ledger = withAllocation(ledger, self, containerKey(container), allocation);
    ports.set(self, portsOf(allocation));
    return { outcome: { ok: true, result: allocation }, write };
  };

  const decisions: NodeAllocationDecision[] = [];
  for (const [i, ask] of input.asks.entries()) {
    const first = firstAsk.get(objectKey(ask));
    if (first !== undefined) {
      // The same container asked twice: both get the first decision, written once.
      decisions.push({ outcome: decisions[first]!.outcome, sameAs: first });
      continue;
    }
    firstAsk.set(objectKey(ask), i);
    decisions.push(decide(ask));
  }
  const restores = input.onNode.flatMap((c) => {
    const held = ledger.containers[idOf(c)]?.allocation;
    if (
      !held ||
      c.metadata.deletionTimestamp ||
      firstAsk.has(containerKey(c)) ||
      sameAllocation(c.status?.allocations, held)
    )
      return [];
    const ref = { namespace: c.metadata.namespace ?? '', name: c.metadata.name ?? '' };
    return [{ ref, uid: idOf(c), resourceVersion: c.metadata.resourceVersion, allocation: held }];
  });
  return { decisions, ledger, restores };
}

/**
 * Whole drives for a container that shares none: numDrives of the node's drives signed for
 * exclusive use that no container holds and that are not blocked (allocateExclusiveDrives).
 */
interface WholeDrivesInput {
  ref: ObjectRef;
  container: WekaContainer;
  cluster: WekaCluster | null;
  exclusive: ExclusiveNodeDrives | undefined;
  shared: NodeDrives;
  /** Every other container's claims on the node. */
  claimed: ContainerDriveClaims[];
}

function exclusiveDrives({
  ref,
  container,
  cluster,
  exclusive,
  shared,
  claimed,
}: WholeDrivesInput): { ok: true; serials: string[] } | { ok: false; refusal: AllocationOutcome & { ok: false } } {
  const count = container.spec.numDrives ?? cluster?.spec.dynamicTemplate?.numDrives;
  if (count === undefined || count < 1) {
    const message = `${refText(ref)} sets neither driveCapacity nor containerCapacity (shared drives) nor numDrives (whole drives for its exclusive use), here or in its cluster's dynamicTemplate`;
    return { ok: false, refusal: refusal('InvalidDriveSharingConfig', message, false) };
  }
  if (!exclusive) {
    const message = `node ${container.spec.nodeName ?? ''} has no drives signed for exclusive use (annotation ${EXCLUSIVE_DRIVES_ANNOTATION}); sign them with a WekaManualOperation sign-drives without shared: true`;
    return { ok: false, refusal: refusal('NoExclusiveDrives', message, true) };
  }
  if (!exclusive.ok) return exclusive;
  const result = allocateExclusiveDrives({
    signedSerials: exclusive.signed,
    blockedSerials: exclusive.blocked,
    claimed,
    sharedDrives: shared.ok ? shared.drives : [],
    count,
  });
  if (!result.ok)
    return { ok: false, refusal: refusal(result.error.type, result.error.message, true, { ...result.error }) };
  return { ok: true, serials: result.serials };
}

/**
 * A container on whole drives whose spec now asks for more: the difference, by the same rules, next
 * to the drives it holds; what it holds whatever the answer (a growth that does not fit is pending).
 */
function growWholeDrives(
  held: ContainerAllocation,
  input: WholeDrivesInput,
): { allocation: ContainerAllocation; pending?: { error: AllocationRefusal; waitForCapacity: boolean } } {
  const { container, cluster, claimed } = input;
  const holds = held.drives ?? [];
  const wanted = container.spec.numDrives ?? cluster?.spec.dynamicTemplate?.numDrives ?? holds.length;
  if (wanted <= holds.length) return { allocation: held };
  // Its own drives count as taken (claimed excludes the container itself).
  const own = { container: containerKey(container), virtualDrives: [], exclusiveSerials: holds };
  const more = { ...container, spec: { ...container.spec, numDrives: wanted - holds.length } } as WekaContainer;
  const given = exclusiveDrives({ ...input, container: more, cluster: null, claimed: [...claimed, own] });
  if (!given.ok)
    return {
      allocation: held,
      pending: { error: given.refusal.error, waitForCapacity: given.refusal.waitForCapacity },
    };
  return { allocation: { ...held, drives: [...holds, ...given.serials] } };
}

/**
 * The held allocation (grown or not) with its virtual drives on blocked drives replaced where
 * another drive has the room. Those that stay on a blocked drive make the answer pending
 * (NoReplacementCapacity, asked again when capacity is released): that says more than a growth
 * that waits too.
 */
function replaceOnBlocked(
  kept: HeldDecision,
  shared: NodeDrives,
  blocked: ReadonlySet<string>,
  ledger: AllocationLedger,
  newUuid: UuidSource,
): HeldDecision {
  if (blocked.size === 0 || !shared.ok) return kept;
  const decision = replaceBlockedVirtualDrives(
    { held: kept.allocation, drives: shared.drives, blocked, claimed: ledgerClaims(ledger) },
    newUuid,
  );
  if (decision.unplaced.length === 0) return { ...kept, allocation: decision.allocation };
  const message = `its virtual drives ${drivesList(decision.unplaced)} are on a blocked drive and no other drive of the node has the room for a replacement of the same size and type: it keeps them, and asks again when capacity is released`;
  return {
    allocation: decision.allocation,
    pending: { error: { type: NO_REPLACEMENT_CAPACITY, message }, waitForCapacity: true },
  };
}

/** Fields of an InvalidDriveSharingConfig that describe the node's drives and claims, not the request. */
const NODE_STATE_FIELDS = ['physicalDrives', 'claimed'];

/**
 * Whether the requester should ask again when the node changes. A shortfall, or a problem with
 * the node's drives (none of a type the request needs, a bad entry), can pass once drives are
 * signed or released there; a problem in the request or the settings only with a spec change.
 */
export function waitsForNode(error: DriveSharingError | { type: string; field?: string }): boolean {
  return (
    error.type !== 'InvalidDriveSharingConfig' || NODE_STATE_FIELDS.some((field) => error.field?.startsWith(field))
  );
}

const hasPorts = (a: ContainerAllocation): boolean => a.wekaPort !== undefined && a.agentPort !== undefined;

/**
 * A member's ports come from its cluster's range (so it waits until the cluster has one); a
 * standalone container's from outside every cluster's range.
 */
function containerPorts(
  ref: ObjectRef,
  cluster: WekaCluster | null,
  taken: readonly PortBlock[],
  clusterRanges: readonly PortRange[],
): { ok: true; ports: ContainerPorts } | { ok: false; refusal: AllocationOutcome & { ok: false } } {
  if (!cluster) {
    const given = allocateStandalonePorts(taken, clusterRanges);
    return given.ok ? given : { ok: false, refusal: refusal(given.error.type, given.error.message, true) };
  }
  const range = cluster.status?.ports;
  if (range?.basePort === undefined || range.portRange === undefined) {
    const message = `${refText(ref)} waits for its WekaCluster ${cluster.metadata.name ?? ''} to be given its port range`;
    return { ok: false, refusal: refusal('ClusterPortsPending', message, true) };
  }
  const given = allocateContainerPorts({ basePort: range.basePort, size: range.portRange }, taken, range);
  return given.ok ? given : { ok: false, refusal: refusal(given.error.type, given.error.message, true) };
}

function portsOf(a: { wekaPort?: number; agentPort?: number } | undefined): PortBlock[] {
  return a?.wekaPort !== undefined && a.agentPort !== undefined
    ? containerPortBlocks({ wekaPort: a.wekaPort, agentPort: a.agentPort })
    : [];
}
