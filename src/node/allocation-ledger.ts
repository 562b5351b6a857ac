// A node's allocation ledger: what its mutex gave each drive container (by uid), and the virtual
// drives found on its devices that no container was given. It lives in an annotation of the Node,
// which only the operator writes, and only from the node's mutex. Allocation decisions count what
// the ledger holds, never what a container's status says: a status is the user's view, and
// anyone allowed to write it could otherwise free or take capacity that a device still holds.
import type { ClaimedVirtualDrive, ContainerDriveClaims, DriveType, VirtualDrive } from '../allocation/types.js';
import type { ContainerAllocation } from '../allocation/types.js';
import { containerPortBlocks } from '../allocation/ports.js';
import type { PortBlock } from '../allocation/port-blocks.js';

/** Node annotation holding the ledger (JSON, see encodeLedger). */
export const ALLOCATIONS_ANNOTATION = 'weka.weka.io/allocations';

export interface LedgerEntry {
  /** "namespace/name" of the container, for messages and people. */
  container: string;
  allocation: ContainerAllocation;
}

/** A virtual drive on one of the node's devices that no container in the ledger was given. */
export interface FoundVirtualDrive {
  virtualUUID: string;
  physicalUUID: string;
  capacityGiB: number;
  ownerClusterGUID: string;
}

export interface AllocationLedger {
  /** By container uid. */
  containers: Record<string, LedgerEntry>;
  found: FoundVirtualDrive[];
}

export const emptyLedger = (): AllocationLedger => ({ containers: {}, found: [] });

/** The name under which found virtual drives are counted and reported. */
export const FOUND_ON_DEVICES = 'virtual drives found on the devices';

/** What the ledger holds, as the allocator counts claims: one per container, one for the found drives. */
export function ledgerClaims(ledger: AllocationLedger, except?: string): ContainerDriveClaims[] {
  const claims: ContainerDriveClaims[] = Object.entries(ledger.containers)
    .filter(([uid]) => uid !== except)
    .map(([, e]) => ({
      container: e.container,
      // A replaced drive is on its device until its container removes it: still taken.
      virtualDrives: e.allocation.replacedVirtualDrives?.length
        ? [...e.allocation.virtualDrives, ...e.allocation.replacedVirtualDrives]
        : e.allocation.virtualDrives,
      ...(e.allocation.drives ? { exclusiveSerials: e.allocation.drives } : {}),
    }));
  if (ledger.found.length > 0) claims.push({ container: FOUND_ON_DEVICES, virtualDrives: ledger.found });
  return claims;
}

export function withAllocation(
  ledger: AllocationLedger,
  uid: string,
  container: string,
  allocation: ContainerAllocation,
): AllocationLedger {
  return { ...ledger, containers: { ...ledger.containers, [uid]: { container, allocation } } };
}

/**
 * The ledger without the container. When its virtual drives may still be on the devices (its
 * teardown never reached them), they stay counted, as found drives, until the devices are read
 * again and show them gone.
 */
export function withoutContainer(
  ledger: AllocationLedger,
  uid: string,
  leftOnDevices: boolean,
  ownerClusterGUID = '',
): AllocationLedger {
  const entry = ledger.containers[uid];
  if (!entry) return ledger;
  const containers = { ...ledger.containers };
  delete containers[uid];
  const left = leftOnDevices
    ? [...entry.allocation.virtualDrives, ...(entry.allocation.replacedVirtualDrives ?? [])].map(
        ({ virtualUUID, physicalUUID, capacityGiB }) => ({
          virtualUUID,
          physicalUUID,
          capacityGiB,
          ownerClusterGUID,
        }),
      )
    : [];
  return { containers, found: [...ledger.found, ...left] };
}

/** The uid the ledger holds for a container "namespace/name", if any. */
export function uidOf(ledger: AllocationLedger, container: string): string | undefined {
  return Object.entries(ledger.containers).find(([, e]) => e.container === container)?.[0];
}

/** A device as the node's proxy reports it: its physical UUID and the virtual drives on it. */
export interface DeviceVirtualDrives {
  physicalUUID: string;
  /** The drive's serial and type, which a restored entry's virtual drives take. */
  serial?: string;
  type?: DriveType;
  /** Its GiB: a restored entry may hold virtual drives not signed on it yet, within them. */
  capacityGiB?: number;
  virtualDrives: readonly { virtualUUID: string; ownerClusterGUID: string; sizeGiB: number }[];
}

/** What a live container's status shows it was given, for an entry the ledger lost. */
export interface ShownEntry {
  uid: string;
  /** "namespace/name". */
  container: string;
  allocation: ShownAllocation;
}

export interface LedgerReconciliation {
  ledger: AllocationLedger;
  /** Found on a device, in no container's entry: counted as taken from now on. */
  found: FoundVirtualDrive[];
  /** Entries of containers that no longer exist and hold nothing on the devices: forgotten. */
  forgotten: string[];
  /** Entries the ledger had lost (its Node registered again), given back from the devices and statuses. */
  restored: string[];
}

/**
 * The ledger after reading every device of the node. The devices are the truth about what is
 * taken: a virtual drive on a device that no entry holds is counted (and reported) as found; a
 * found drive that is no longer on any device is dropped. The entry of a container that no
 * longer exists (`live` are the uids that do) becomes found drives for what of it is still on a
 * device, and is forgotten otherwise. Entries of live containers stay as they are: their virtual
 * drives may not be signed yet.
 *
 * A live container the ledger holds nothing for, whose status (`shown`) names virtual drives that
 * are on the devices as named or not signed yet (on a device of the node with the room for them:
 * a container caught between its allocation and its signing), or whole drives (`wholeDrives`,
 * the serials signed for exclusive use) that no entry holds, on ports that no entry takes, gets
 * its entry back: a Node
 * deleted and registered again under the same name comes back without its annotations, and its
 * containers must not be given a second allocation. A drive two statuses name is given to neither.
 */
export function reconcileLedger(
  ledger: AllocationLedger,
  devices: readonly DeviceVirtualDrives[],
  live: ReadonlySet<string>,
  shown: readonly ShownEntry[] = [],
  wholeDrives: ReadonlySet<string> = new Set(),
): LedgerReconciliation {
  const onDevices = new Map<string, FoundVirtualDrive & { serial?: string; type?: DriveType }>();
  for (const device of devices)
    for (const vd of device.virtualDrives)
      onDevices.set(vd.virtualUUID, {
        virtualUUID: vd.virtualUUID,
        physicalUUID: device.physicalUUID,
        capacityGiB: vd.sizeGiB,
        ownerClusterGUID: vd.ownerClusterGUID,
        ...(device.serial === undefined ? {} : { serial: device.serial }),
        ...(device.type === undefined ? {} : { type: device.type }),
      });
  const containers: Record<string, LedgerEntry> = {};
  for (const [uid, entry] of Object.entries(ledger.containers)) if (live.has(uid)) containers[uid] = entry;
  const restored = restoreEntries(
    containers,
    { onDevices, devices },
    shown.filter((e) => live.has(e.uid)),
    wholeDrives,
  );
  const held = new Set(
    Object.values(containers).flatMap((e) =>
      [...e.allocation.virtualDrives, ...(e.allocation.replacedVirtualDrives ?? [])].map((v) => v.virtualUUID),
    ),
  );
  const known = new Set(ledger.found.map((f) => f.virtualUUID));
  const stillFound = [...onDevices.values()]
    .filter((vd) => !held.has(vd.virtualUUID))
    .map(({ virtualUUID, physicalUUID, capacityGiB, ownerClusterGUID }) => ({
      virtualUUID,
      physicalUUID,
      capacityGiB,
      ownerClusterGUID,
    }));
  const found = stillFound.filter((vd) => !known.has(vd.virtualUUID));
  // A gone container whose drives are still on a device is not forgotten: they are found.
  const onDevicesUnheld = new Set(stillFound.map((vd) => vd.virtualUUID));
  const forgotten = Object.entries(ledger.containers)
    .filter(([uid, e]) => !live.has(uid) && !e.allocation.virtualDrives.some((v) => onDevicesUnheld.has(v.virtualUUID)))
    .map(([, e]) => e.container);
  return { ledger: { containers, found: stillFound }, found, forgotten, restored };
}

/** Adds to `containers` the entries `shown` proves from the devices; returns their containers. */
function restoreEntries(
  containers: Record<string, LedgerEntry>,
  read: {
    onDevices: ReadonlyMap<string, FoundVirtualDrive & { serial?: string; type?: DriveType }>;
    devices: readonly DeviceVirtualDrives[];
  },
  shown: readonly ShownEntry[],
  wholeDrives: ReadonlySet<string>,
): string[] {
  const { onDevices } = read;
  const device = new Map(read.devices.map((d) => [d.physicalUUID, d]));
  // What each device holds or owes: every virtual drive on it, and the drives live entries hold on
  // it that are not signed yet.
  const used = new Map<string, number>();
  const use = (physicalUUID: string, gib: number) => used.set(physicalUUID, (used.get(physicalUUID) ?? 0) + gib);
  for (const d of onDevices.values()) use(d.physicalUUID, d.capacityGiB);
  for (const e of Object.values(containers))
    for (const v of e.allocation.virtualDrives) if (!onDevices.has(v.virtualUUID)) use(v.physicalUUID, v.capacityGiB);
  const entries = Object.values(containers);
  const heldUUIDs = new Set(entries.flatMap((e) => e.allocation.virtualDrives.map((v) => v.virtualUUID)));
  const heldSerials = new Set(entries.flatMap((e) => e.allocation.drives ?? []));
  const taken = entries.flatMap((e) => portBlocksOf(e.allocation));
  const candidates = shown.filter((e) => !containers[e.uid]);
  const named = (key: (e: ShownEntry) => readonly string[]) => {
    const counts = new Map<string, number>();
    for (const e of candidates) for (const k of key(e)) counts.set(k, (counts.get(k) ?? 0) + 1);
    return counts;
  };
  const uuidClaims = named((e) =>
    [...(e.allocation.virtualDrives ?? []), ...(e.allocation.replacedVirtualDrives ?? [])].map((v) => v.virtualUUID),
  );
  const serialClaims = named((e) => e.allocation.drives ?? []);
  const restored: string[] = [];
  for (const e of [...candidates].sort((a, b) => (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0))) {
    const vds = e.allocation.virtualDrives ?? [];
    const serials = e.allocation.drives ?? [];
    if (vds.length + serials.length === 0) continue;
    const onDevice = vds.map((v) => ({ v, d: onDevices.get(v.virtualUUID) }));
    // Signed as named, or not signed yet (a container caught between its allocation and its
    // signing) on a device of the node that still has the room for it.
    const unsigned = new Map<string, number>();
    for (const { v, d } of onDevice)
      if (d === undefined) unsigned.set(v.physicalUUID, (unsigned.get(v.physicalUUID) ?? 0) + v.capacityGiB);
    const fits = [...unsigned].every(([physicalUUID, gib]) => {
      const capacity = device.get(physicalUUID)?.capacityGiB;
      return capacity !== undefined && (used.get(physicalUUID) ?? 0) + gib <= capacity;
    });
    const drivesProven =
      fits &&
      onDevice.every(
        ({ v, d }) =>
          (d === undefined || (d.physicalUUID === v.physicalUUID && d.capacityGiB === v.capacityGiB)) &&
          !heldUUIDs.has(v.virtualUUID) &&
          uuidClaims.get(v.virtualUUID) === 1,
      );
    // A replaced drive no device holds any more was removed already; one still there must be as named.
    const replaced = (e.allocation.replacedVirtualDrives ?? []).flatMap((v) => {
      const d = onDevices.get(v.virtualUUID);
      return d ? [{ v, d }] : [];
    });
    const replacedProven = replaced.every(
      ({ v, d }) =>
        d.physicalUUID === v.physicalUUID &&
        d.capacityGiB === v.capacityGiB &&
        !heldUUIDs.has(v.virtualUUID) &&
        uuidClaims.get(v.virtualUUID) === 1,
    );
    const serialsProven = serials.every((s) => wholeDrives.has(s) && !heldSerials.has(s) && serialClaims.get(s) === 1);
    const ports = portBlocksOf(e.allocation);
    if (!drivesProven || !replacedProven || !serialsProven || ports.some((p) => taken.some((t) => overlaps(p, t))))
      continue;
    const allocation: ContainerAllocation = {
      virtualDrives: onDevice.map(({ v, d }) => {
        const drive = d ?? device.get(v.physicalUUID);
        return {
          virtualUUID: v.virtualUUID,
          physicalUUID: v.physicalUUID,
          capacityGiB: v.capacityGiB,
          serial: drive?.serial ?? v.serial ?? '',
          type: drive?.type ?? (v.type === 'QLC' ? 'QLC' : 'TLC'),
        };
      }),
      ...(serials.length > 0 ? { drives: [...serials] } : {}),
      ...(e.allocation.wekaPort === undefined ? {} : { wekaPort: e.allocation.wekaPort }),
      ...(e.allocation.agentPort === undefined ? {} : { agentPort: e.allocation.agentPort }),
      ...(replaced.length > 0
        ? {
            replacedVirtualDrives: replaced.map(({ v, d }) => ({
              virtualUUID: v.virtualUUID,
              physicalUUID: v.physicalUUID,
              capacityGiB: v.capacityGiB,
              serial: d.serial ?? v.serial ?? '',
              type: d.type ?? (v.type === 'QLC' ? 'QLC' : 'TLC'),
            })),
          }
        : {}),
    };
    containers[e.uid] = { container: e.container, allocation };
    for (const v of [...vds, ...replaced.map((r) => r.v)]) heldUUIDs.add(v.virtualUUID);
    for (const [physicalUUID, gib] of unsigned) use(physicalUUID, gib);
    for (const s of serials) heldSerials.add(s);
    taken.push(...ports);
    restored.push(e.container);
  }
  return restored;
}

function portBlocksOf(a: ShownAllocation): PortBlock[] {
  return a.wekaPort !== undefined && a.agentPort !== undefined
    ? containerPortBlocks({ wekaPort: a.wekaPort, agentPort: a.agentPort })
    : [];
}

const overlaps = (a: PortBlock, b: PortBlock): boolean => a.port < b.port + b.count && b.port < a.port + a.count;

export type LedgerDecodeResult = { ok: true; ledger: AllocationLedger } | { ok: false; message: string };

type EncodedDrive = [string, string, number, string, DriveType];
type EncodedFound = [string, string, number, string];
interface EncodedEntry {
  container: string;
  virtualDrives: EncodedDrive[];
  /** Serials of whole drives given to the container for its exclusive use. */
  drives?: string[];
  ports?: [number, number];
  /** Replaced virtual drives its container has not removed yet, as virtualDrives. */
  replaced?: EncodedDrive[];
}

/**
 * Compact JSON (a few dozen bytes per virtual drive: the annotations of a Node share 256 KiB):
 * {"containers": {uid: {"container", "virtualDrives": [[virtualUUID, physicalUUID, GiB, serial,
 * type]], "drives"?: [serial], "ports"?: [wekaPort, agentPort], "replaced"?: [as virtualDrives]}}, "found": [[virtualUUID, physicalUUID,
 * GiB, owner]]}.
 */
export function encodeLedger(ledger: AllocationLedger): string {
  const containers: Record<string, EncodedEntry> = {};
  for (const [uid, { container, allocation }] of Object.entries(ledger.containers)) {
    const { virtualDrives, drives, wekaPort, agentPort, replacedVirtualDrives: replaced } = allocation;
    const encode = (v: VirtualDrive): EncodedDrive => [v.virtualUUID, v.physicalUUID, v.capacityGiB, v.serial, v.type];
    containers[uid] = {
      container,
      virtualDrives: virtualDrives.map(encode),
      ...(replaced?.length ? { replaced: replaced.map(encode) } : {}),
      ...(drives !== undefined && drives.length > 0 ? { drives: [...drives] } : {}),
      ...(wekaPort !== undefined && agentPort !== undefined ? { ports: [wekaPort, agentPort] } : {}),
    };
  }
  const found: EncodedFound[] = ledger.found.map((f) => [
    f.virtualUUID,
    f.physicalUUID,
    f.capacityGiB,
    f.ownerClusterGUID,
  ]);
  return JSON.stringify({ containers, found });
}

class Malformed extends Error {}

/** Reads the annotation; never throws: anything malformed comes back as a message naming the part. */
export function decodeLedger(text: string | undefined): LedgerDecodeResult {
  if (text === undefined) return { ok: true, ledger: emptyLedger() };
  try {
    const parsed: unknown = JSON.parse(text);
    if (!isObject(parsed) || !isObject(parsed['containers']) || !Array.isArray(parsed['found']))
      throw new Malformed('must be {"containers": {...}, "found": [...]}');
    const containers: Record<string, LedgerEntry> = {};
    for (const [uid, raw] of Object.entries(parsed['containers'])) containers[uid] = decodeEntry(uid, raw);
    const found = parsed['found'].map((raw: unknown, i): FoundVirtualDrive => {
      if (!Array.isArray(raw) || raw.length !== 4) throw new Malformed(`found[${i}] is not [uuid, uuid, GiB, owner]`);
      const [virtualUUID, physicalUUID, capacityGiB, ownerClusterGUID] = raw as unknown[];
      if (typeof virtualUUID !== 'string' || typeof physicalUUID !== 'string' || typeof ownerClusterGUID !== 'string')
        throw new Malformed(`found[${i}] has a UUID that is not a string`);
      return { virtualUUID, physicalUUID, capacityGiB: gib(capacityGiB, `found[${i}]`), ownerClusterGUID };
    });
    return { ok: true, ledger: { containers, found } };
  } catch (err) {
    if (!(err instanceof Malformed) && !(err instanceof SyntaxError)) throw err;
    return { ok: false, message: `annotation ${ALLOCATIONS_ANNOTATION} ${err.message}` };
  }
}

function decodeEntry(uid: string, raw: unknown): LedgerEntry {
  if (!isObject(raw) || typeof raw['container'] !== 'string' || !Array.isArray(raw['virtualDrives']))
    throw new Malformed(`entry ${uid} must be {"container", "virtualDrives"}`);
  const virtualDrives = decodeDrives(uid, 'virtualDrives', raw['virtualDrives']);
  const ports = raw['ports'];
  const allocation: ContainerAllocation = { virtualDrives };
  if (raw['replaced'] !== undefined) {
    if (!Array.isArray(raw['replaced'])) throw new Malformed(`entry ${uid} replaced must be a list`);
    allocation.replacedVirtualDrives = decodeDrives(uid, 'replaced', raw['replaced']);
  }
  const drives = raw['drives'];
  if (drives !== undefined) {
    if (!Array.isArray(drives) || !drives.every((d) => typeof d === 'string' && d !== ''))
      throw new Malformed(`entry ${uid} drives must be a list of serials`);
    allocation.drives = drives as string[];
  }
  if (ports !== undefined) {
    if (!Array.isArray(ports) || ports.length !== 2 || !ports.every((p) => Number.isSafeInteger(p)))
      throw new Malformed(`entry ${uid} ports must be [wekaPort, agentPort]`);
    allocation.wekaPort = ports[0] as number;
    allocation.agentPort = ports[1] as number;
  }
  return { container: raw['container'], allocation };
}

function decodeDrives(uid: string, field: string, list: unknown[]): VirtualDrive[] {
  return list.map((d: unknown, i): VirtualDrive => {
    const where = `entry ${uid} ${field}[${i}]`;
    if (!Array.isArray(d) || d.length !== 5) throw new Malformed(`${where} is not [uuid, uuid, GiB, serial, type]`);
    const [virtualUUID, physicalUUID, capacityGiB, serial, type] = d as unknown[];
    if (typeof virtualUUID !== 'string' || typeof physicalUUID !== 'string' || typeof serial !== 'string')
      throw new Malformed(`${where} has a UUID or serial that is not a string`);
    if (type !== 'TLC' && type !== 'QLC') throw new Malformed(`${where} type must be TLC or QLC`);
    return { virtualUUID, physicalUUID, capacityGiB: gib(capacityGiB, where), serial, type };
  });
}

function gib(value: unknown, where: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1)
    throw new Malformed(`${where} GiB must be a whole number above 0`);
  return value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether a status's virtual drives are exactly the ledger's (same UUIDs, same order). */
export function sameVirtualDrives(
  status: readonly ClaimedVirtualDrive[] | undefined,
  ledger: readonly VirtualDrive[],
): boolean {
  return (
    status !== undefined &&
    status.length === ledger.length &&
    status.every((v, i) => v.virtualUUID === ledger[i]!.virtualUUID && v.capacityGiB === ledger[i]!.capacityGiB)
  );
}

/** An allocation as a status or an answer shows it: the ledger's, or something that claims to be. */
export interface ShownAllocation {
  virtualDrives?: readonly ClaimedVirtualDrive[] | undefined;
  replacedVirtualDrives?: readonly ClaimedVirtualDrive[] | undefined;
  drives?: readonly string[] | undefined;
  wekaPort?: number | undefined;
  agentPort?: number | undefined;
}

/**
 * Whether `shown` is exactly the allocation the ledger holds (`held`): the same virtual drives in
 * the same order, the same whole drives and the same ports. Nothing is the same as no allocation.
 */
export function sameAllocation(shown: ShownAllocation | null | undefined, held: ContainerAllocation | null): boolean {
  if (!held) return false;
  return (
    sameVirtualDrives(shown?.virtualDrives, held.virtualDrives) &&
    (shown?.replacedVirtualDrives ?? []).map((v) => v.virtualUUID).join(',') ===
      (held.replacedVirtualDrives ?? []).map((v) => v.virtualUUID).join(',') &&
    (shown?.drives ?? []).join(',') === (held.drives ?? []).join(',') &&
    shown?.wekaPort === held.wekaPort &&
    shown?.agentPort === held.agentPort
  );
}
