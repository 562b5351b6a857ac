// Blocked drives: a failing or suspect physical drive an administrator takes out of use. A blocked
// drive offers no capacity and is never chosen again; every virtual drive on a blocked shared drive
// is replaced by one of the same size and type on another drive of the node, and the old one stays
// counted (replacedVirtualDrives) until its container has added the new one and removed the old
// one from Weka and the device. The annotations are the Weka operator's own (serials, and physical
// UUIDs for shared drives: internal/controllers/operations/block_drives.go), so either operator
// reads what the other wrote.
import {
  BLOCKED_DRIVES_ANNOTATION,
  BLOCKED_PHYSICAL_UUIDS_ANNOTATION,
  decodeSerialsAnnotation,
} from '../annotations/exclusive-drives.js';
import type { MalformedAnnotationError } from '../annotations/shared-drives.js';
import { drawUnusedUuids } from '../allocation/drive-sharing.js';
import { driveSpaces } from '../allocation/drive-space.js';
import type {
  ContainerAllocation,
  ContainerDriveClaims,
  PhysicalDrive,
  UuidSource,
  VirtualDrive,
} from '../allocation/types.js';

/** Why a container's allocation answer is pending while a virtual drive of it has no replacement. */
export const NO_REPLACEMENT_CAPACITY = 'NoReplacementCapacity';

/** The two blocked-drive annotations of a node, as lists. */
export interface BlockedDrives {
  serials: string[];
  physicalUUIDs: string[];
}

/** Drives named by a block-drives or unblock-drives operation. */
export interface DriveIds {
  serials?: readonly string[] | undefined;
  physicalUUIDs?: readonly string[] | undefined;
}

/** The node's blocked drives, as its annotations say (absent: none). Never throws. */
export function blockedDrivesOf(
  annotations: Readonly<Record<string, string>>,
): { ok: true; blocked: BlockedDrives } | { ok: false; error: MalformedAnnotationError } {
  const serials = decodeSerialsAnnotation(BLOCKED_DRIVES_ANNOTATION, annotations[BLOCKED_DRIVES_ANNOTATION]);
  if (!serials.ok) return serials;
  const uuids = decodeSerialsAnnotation(
    BLOCKED_PHYSICAL_UUIDS_ANNOTATION,
    annotations[BLOCKED_PHYSICAL_UUIDS_ANNOTATION],
  );
  if (!uuids.ok) return uuids;
  return { ok: true, blocked: { serials: serials.serials, physicalUUIDs: uuids.serials } };
}

/** The physical UUIDs of the node's shared drives that are blocked, by their UUID or their serial. */
export function blockedSharedUUIDs(shared: readonly PhysicalDrive[], blocked: BlockedDrives): Set<string> {
  const serials = new Set(blocked.serials);
  const out = new Set(blocked.physicalUUIDs);
  for (const d of shared) if (d.serial !== '' && serials.has(d.serial)) out.add(d.physicalUUID);
  return out;
}

export type BlockPlan = { ok: true; blocked: BlockedDrives } | { ok: false; type: string; message: string };

/**
 * The node's blocked drives after blocking `ask`. A serial must be a drive the node signed (shared
 * or for exclusive use), a physical UUID one of its shared drives: anything else is refused
 * (UnknownDrive), naming each, and nothing is blocked.
 */
export function planBlock(
  node: string,
  known: { shared: readonly PhysicalDrive[]; exclusive: readonly string[] },
  current: BlockedDrives,
  ask: DriveIds,
): BlockPlan {
  const serials = new Set([...known.exclusive, ...known.shared.map((d) => d.serial).filter((s) => s !== '')]);
  const uuids = new Set(known.shared.map((d) => d.physicalUUID));
  const unknown = [
    ...(ask.serials ?? []).filter((s) => !serials.has(s)).map((s) => `serial ${s}`),
    ...(ask.physicalUUIDs ?? []).filter((u) => !uuids.has(u)).map((u) => `physical UUID ${u}`),
  ];
  if (unknown.length > 0)
    return {
      ok: false,
      type: 'UnknownDrive',
      message: `node ${node} has no signed drive with ${unknown.join(', ')}: nothing was blocked`,
    };
  return {
    ok: true,
    blocked: {
      serials: union(current.serials, ask.serials),
      physicalUUIDs: union(current.physicalUUIDs, ask.physicalUUIDs),
    },
  };
}

/**
 * The node's blocked drives after unblocking `ask`: each must be blocked under that id, or it is
 * refused (NotBlocked), naming each, and nothing is unblocked.
 */
export function planUnblock(node: string, current: BlockedDrives, ask: DriveIds): BlockPlan {
  const notBlocked = [
    ...(ask.serials ?? []).filter((s) => !current.serials.includes(s)).map((s) => `serial ${s}`),
    ...(ask.physicalUUIDs ?? []).filter((u) => !current.physicalUUIDs.includes(u)).map((u) => `physical UUID ${u}`),
  ];
  if (notBlocked.length > 0)
    return {
      ok: false,
      type: 'NotBlocked',
      message: `node ${node} does not block ${notBlocked.join(', ')} (blocked: ${describeBlocked(current)}): nothing was unblocked`,
    };
  const out = (list: readonly string[], drop: readonly string[] | undefined) => list.filter((x) => !drop?.includes(x));
  return {
    ok: true,
    blocked: {
      serials: out(current.serials, ask.serials),
      physicalUUIDs: out(current.physicalUUIDs, ask.physicalUUIDs),
    },
  };
}

/** Each blocked drive as a person reads it: 'serial X', 'physical UUID Y'. */
export function blockedList(b: BlockedDrives): string[] {
  return [...b.serials.map((s) => `serial ${s}`), ...b.physicalUUIDs.map((u) => `physical UUID ${u}`)];
}

export function describeBlocked(b: BlockedDrives): string {
  const all = blockedList(b);
  return all.length > 0 ? all.join(', ') : 'none';
}

export interface Replacement {
  old: VirtualDrive;
  replacement: VirtualDrive;
}

export interface ReplacementDecision {
  /** `held` itself when nothing changed. */
  allocation: ContainerAllocation;
  replaced: Replacement[];
  /** Virtual drives on a blocked drive for which no other drive of the node has the room. */
  unplaced: VirtualDrive[];
}

/**
 * Replaces each of the container's virtual drives on a blocked drive by a new one of the same size
 * and type on the unblocked drive of that type with the most room (ties by physical UUID), counting
 * every claim on the node and the replacements made before it. The new drive takes the old one's
 * place in virtualDrives; the old one moves to replacedVirtualDrives, still counted. A drive no
 * other drive has the room for stays where it is (unplaced): the container keeps what it has.
 */
export function replaceBlockedVirtualDrives(
  input: {
    held: ContainerAllocation;
    drives: readonly PhysicalDrive[];
    blocked: ReadonlySet<string>;
    /** Every claim on the node, the container's own included. */
    claimed: readonly ContainerDriveClaims[];
  },
  newUuid: UuidSource,
): ReplacementDecision {
  const { held, drives, blocked } = input;
  const onBlocked = held.virtualDrives.filter((v) => blocked.has(v.physicalUUID));
  if (onBlocked.length === 0) return { allocation: held, replaced: [], unplaced: [] };
  const usable = drives.filter((d) => !blocked.has(d.physicalUUID));
  const claims: ContainerDriveClaims[] = [...input.claimed];
  const uuids = drawUnusedUuids(onBlocked.length, newUuid, claims);
  const replaced: Replacement[] = [];
  const unplaced: VirtualDrive[] = [];
  for (const [i, old] of onBlocked.entries()) {
    const space = driveSpaces(
      usable.filter((d) => d.type === old.type),
      claims,
    ).find((s) => s.availableGiB >= old.capacityGiB);
    if (!space) {
      unplaced.push(old);
      continue;
    }
    const { physicalUUID, serial } = space.drive;
    const replacement: VirtualDrive = {
      virtualUUID: uuids[i]!,
      physicalUUID,
      capacityGiB: old.capacityGiB,
      serial,
      type: old.type,
    };
    claims.push({ container: 'replacement', virtualDrives: [replacement] });
    replaced.push({ old, replacement });
  }
  if (replaced.length === 0) return { allocation: held, replaced, unplaced };
  const by = new Map(replaced.map((r) => [r.old.virtualUUID, r.replacement]));
  const allocation: ContainerAllocation = {
    ...held,
    virtualDrives: held.virtualDrives.map((v) => by.get(v.virtualUUID) ?? v),
    replacedVirtualDrives: [...(held.replacedVirtualDrives ?? []), ...replaced.map((r) => r.old)],
  };
  return { allocation, replaced, unplaced };
}

/** The allocation without the replaced virtual drives named (their container removed them). */
export function withoutReplaced(held: ContainerAllocation, virtualUUIDs: readonly string[]): ContainerAllocation {
  const left = (held.replacedVirtualDrives ?? []).filter((v) => !virtualUUIDs.includes(v.virtualUUID));
  if (left.length === (held.replacedVirtualDrives ?? []).length) return held;
  const { replacedVirtualDrives: _, ...rest } = held;
  return left.length > 0 ? { ...rest, replacedVirtualDrives: left } : rest;
}

/**
 * Everything a teardown removes: the replaced virtual drives (block-drives) a container had not
 * removed yet are on the devices and in the cluster like the others.
 */
export function withReplacedDrives(a: ContainerAllocation): ContainerAllocation;
export function withReplacedDrives(a: ContainerAllocation | null): ContainerAllocation | null;
export function withReplacedDrives(a: ContainerAllocation | null): ContainerAllocation | null {
  if (!a?.replacedVirtualDrives?.length) return a;
  const { replacedVirtualDrives, ...rest } = a;
  return { ...rest, virtualDrives: [...a.virtualDrives, ...replacedVirtualDrives] };
}

/** A message naming the virtual drives with their size and physical drive. */
export function drivesList(drives: readonly VirtualDrive[]): string {
  return drives
    .map((d) => `${d.virtualUUID} (${d.capacityGiB} GiB ${d.type} on ${d.serial || d.physicalUUID})`)
    .join(', ');
}

function union(a: readonly string[], b: readonly string[] | undefined): string[] {
  return [...new Set([...a, ...(b ?? [])])];
}
