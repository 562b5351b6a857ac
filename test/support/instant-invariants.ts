// The drive-sharing invariants at every instant, not only at rest: a double allocation that is
// undone before the system settles still happened, and a check of the final state misses it. Two
// histories are replayed, write by write:
// - the apiserver's writes of WekaContainers, from its audit log (CONTAINER_WRITES_AUDIT_POLICY),
//   in etcd's order (the resourceVersion: one total order, which the log's line order is not);
// - each node's simulator log (commands.log, written under the node lock, so its order is the
//   node's truth), and the Weka cluster's drive changes across nodes in time order.
// After each write or change the allocations in force must fit the drives and name each virtual
// drive once. Pure functions: a test asserts `violations` is [] and that `checks` is not 0.
import type { VirtualDriveStatus } from '../../src/api/index.js';
import { objectKey } from '../../src/node/node-allocations.js';
import type { SimLogEntry } from './simulator.js';

/**
 * Audit every create, update, patch and delete of a WekaContainer or its status with the request
 * and the response (the object as written, with its resourceVersion), once the response is sent;
 * nothing else.
 */
export const CONTAINER_WRITES_AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: RequestResponse
    verbs: [create, update, patch, delete]
    resources:
      - group: weka.weka.io
        resources: [wekacontainers, wekacontainers/status]
  - level: None
`;

/** One successful write of a WekaContainer, and the object as it was after it. */
export interface ContainerWrite {
  /** etcd's revision of the write: the order of all writes. */
  resourceVersion: number;
  /** `namespace/name`. */
  key: string;
  uid: string;
  /** spec.nodeName, '' when unset. */
  node: string;
  /** status.allocations.virtualDrives and replacedVirtualDrives after the write (of a deleted object: as it was last). */
  allocations: VirtualDriveStatus[];
  /** The object no longer exists after this write: its allocations no longer count. */
  gone: boolean;
}

interface AuditObject {
  kind?: string;
  metadata?: {
    uid?: string;
    namespace?: string;
    name?: string;
    resourceVersion?: string;
    deletionTimestamp?: string;
    finalizers?: string[];
  };
  spec?: { nodeName?: string };
  status?: { allocations?: { virtualDrives?: VirtualDriveStatus[]; replacedVirtualDrives?: VirtualDriveStatus[] } };
  /** Of a Status object answering a delete: the deleted object's uid. */
  details?: { uid?: string };
}

interface AuditEvent {
  stage?: string;
  verb?: string;
  requestURI?: string;
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string; uid?: string };
  responseStatus?: { code?: number };
  responseObject?: unknown;
}

const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete']);

/**
 * The successful writes of WekaContainers (and their status) in an audit log of JSON lines,
 * sorted by resourceVersion. A line that does not parse is an error, except the last one, which
 * the apiserver may still be writing. A write other than a delete must carry the object it wrote
 * (audit level RequestResponse); a delete answered with a Status object instead of the deleted
 * object has no resourceVersion: it is placed right after the last write of its object in the
 * lines before it (by the uid of the event or of the Status details, else by namespace/name), or
 * left out when there is none.
 */
export function parseContainerWrites(log: string): ContainerWrite[] {
  const writes: ContainerWrite[] = [];
  for (const { line, event: e } of auditLogEvents<AuditEvent>(log)) {
    const ref = e.objectRef;
    if (e.stage !== 'ResponseComplete' || !WRITE_VERBS.has(e.verb ?? '') || ref?.resource !== 'wekacontainers')
      continue;
    if (ref.subresource !== undefined && ref.subresource !== 'status') continue;
    const code = e.responseStatus?.code ?? 0;
    if (code < 200 || code >= 300) continue;
    // A dry run changes nothing.
    if (new URL(e.requestURI ?? '', 'https://apiserver').searchParams.has('dryRun')) continue;
    const key = objectKey({ namespace: ref.namespace ?? '', name: ref.name ?? '' });
    const object = asObject(e.responseObject);
    const rv = object?.metadata?.resourceVersion;
    if (object === undefined || object.kind === 'Status' || rv === undefined) {
      if (e.verb === 'delete') {
        const deleted = lastWriteSoFar(writes, ref.uid || object?.details?.uid || undefined, key);
        if (deleted) writes.push({ ...deleted, gone: true });
        continue;
      }
      throw new Error(
        `audit log line ${line}: the ${e.verb} of ${key} has no response object with a resourceVersion (is the audit level RequestResponse?)`,
      );
    }
    const resourceVersion = Number(rv);
    if (!/^\d+$/.test(rv) || !Number.isSafeInteger(resourceVersion))
      throw new Error(`audit log line ${line}: resourceVersion ${JSON.stringify(rv)} of ${key} is not an integer`);
    const finalizers = object.metadata?.finalizers ?? [];
    const gone = finalizers.length === 0 && (e.verb === 'delete' || object.metadata?.deletionTimestamp !== undefined);
    writes.push({
      resourceVersion,
      key,
      uid: object.metadata?.uid ?? ref.uid ?? '',
      node: object.spec?.nodeName ?? '',
      // A replaced drive (block-drives) is claimed until its container removed it.
      allocations: [
        ...(object.status?.allocations?.virtualDrives ?? []),
        ...(object.status?.allocations?.replacedVirtualDrives ?? []),
      ],
      gone,
    });
  }
  // A write that removes the object sorts after any other at the same resourceVersion.
  return writes.sort((a, b) => a.resourceVersion - b.resourceVersion || Number(a.gone) - Number(b.gone));
}

/**
 * The events of an audit log (JSON lines) with their line numbers. A line that does not parse is an
 * error, except the last one, which the apiserver may still be writing.
 */
export function auditLogEvents<T>(log: string): Array<{ line: number; event: T }> {
  const lines = log.split('\n');
  const events: Array<{ line: number; event: T }> = [];
  lines.forEach((text, i) => {
    if (text.trim() === '') return;
    try {
      events.push({ line: i + 1, event: JSON.parse(text) as T });
    } catch (err) {
      if (i === lines.length - 1) return;
      throw new Error(`audit log line ${i + 1} is not JSON: ${err instanceof Error ? err.message : String(err)}`);
    }
  });
  return events;
}

/**
 * The write of the object with the highest resourceVersion among the lines read so far: by uid,
 * or by namespace/name when the audit event has no uid (a name may be reused by a new object
 * later in the log, hence "so far").
 */
function lastWriteSoFar(writes: readonly ContainerWrite[], uid: string | undefined, key: string) {
  let last: ContainerWrite | undefined;
  for (const w of writes) {
    if ((uid ? w.uid === uid : w.key === key) && (!last || w.resourceVersion >= last.resourceVersion)) last = w;
  }
  return last;
}

function asObject(value: unknown): AuditObject | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as AuditObject) : undefined;
}

export interface ReplayResult {
  /** One line per problem, when it started. */
  violations: string[];
  /** How many instants were checked. */
  checks: number;
}

/**
 * Reports each problem once, when it starts: `current` is every problem of this instant, by a
 * key naming it; one that was there at the previous instant is still the same problem.
 */
class ProblemTracker {
  readonly violations: string[] = [];
  private open = new Set<string>();

  instant(current: ReadonlyMap<string, string>): void {
    for (const [key, line] of current) if (!this.open.has(key)) this.violations.push(line);
    this.open = new Set(current.keys());
  }
}

/**
 * Replays the writes in order, keeping each live object's latest allocations, and after every
 * write checks that (a) on each node, the GiB the live objects allocate from a physical drive fit
 * its capacity (`capacityGiB` undefined: the node has no such drive, itself a violation), and (b)
 * no virtual UUID is in the allocations of two live objects.
 */
export function statusReplayViolations(
  writes: readonly ContainerWrite[],
  capacityGiB: (node: string, physicalUUID: string) => number | undefined,
): ReplayResult {
  const live = new Map<string, ContainerWrite>();
  const problems = new ProblemTracker();
  const who = (w: ContainerWrite) => `${w.key} (uid ${w.uid})`;
  for (const write of writes) {
    if (write.gone) live.delete(write.uid);
    else live.set(write.uid, write);
    const at = `resourceVersion ${write.resourceVersion}`;
    const current = new Map<string, string>();
    const perDrive = new Map<string, { node: string; physicalUUID: string; gib: number; holders: string[] }>();
    const holdersOf = new Map<string, ContainerWrite[]>();
    for (const w of live.values()) {
      for (const vd of w.allocations) {
        const driveKey = `${w.node} ${vd.physicalUUID}`;
        const drive = perDrive.get(driveKey) ?? { node: w.node, physicalUUID: vd.physicalUUID, gib: 0, holders: [] };
        drive.gib += vd.capacityGiB;
        drive.holders.push(`${who(w)} ${vd.capacityGiB} GiB`);
        perDrive.set(driveKey, drive);
        holdersOf.set(vd.virtualUUID, [...(holdersOf.get(vd.virtualUUID) ?? []), w]);
      }
    }
    for (const [driveKey, d] of perDrive) {
      const capacity = capacityGiB(d.node, d.physicalUUID);
      if (capacity === undefined) {
        current.set(
          `unknown ${driveKey}`,
          `${at}: node ${d.node || '(none)'} has no physical drive ${d.physicalUUID}, allocated by ${d.holders.join(', ')}`,
        );
      } else if (d.gib > capacity) {
        current.set(
          `over ${driveKey}`,
          `${at}: physical drive ${d.physicalUUID} of node ${d.node} over-committed: ${d.gib} GiB allocated of ${capacity} GiB, by ${d.holders.join(', ')}`,
        );
      }
    }
    for (const [virtualUUID, holders] of holdersOf) {
      if (holders.length > 1)
        current.set(
          `twice ${virtualUUID}`,
          `${at}: virtual drive ${virtualUUID} is allocated to ${holders.length} containers at once: ${holders.map(who).join(', ')}`,
        );
    }
    problems.instant(current);
  }
  return { violations: problems.violations, checks: writes.length };
}

type SimChange = SimLogEntry['changes'][number];
/** The simulator writes a time on every line; SimLogEntry does not declare it. */
type TimedEntry = SimLogEntry & { time?: unknown };

/**
 * Replays the simulator's logs. Per node, in log order: the GiB signed on each device never
 * exceed its capacity (`capacityGiB` undefined: the node has no such device, a violation), and no
 * virtual UUID is signed on the node twice at once. Across nodes, in the entries' time order (the
 * cluster's drive commands are logged by the node that ran them): no virtual UUID is added to the
 * Weka cluster again before a drive-remove of it. Every change is replayed, whatever the exit code
 * (a fail-after-effect command made its change). `checks` counts the virtual-add, virtual-remove,
 * drive-add and drive-remove changes replayed; an entry with one of them but no time is an error.
 * (The time is taken when the line is written, after the cluster lock is released: two cluster
 * commands on different nodes within a few ms may be logged in the other order. A drive-add
 * runs on the node its virtual drive is signed on, so one drive's changes normally all sit in one
 * node's log, whose order is exact.)
 */
export function simLogReplayViolations(
  logs: ReadonlyArray<{ node: string; entries: readonly SimLogEntry[] }>,
  capacityGiB: (node: string, devicePath: string) => number | undefined,
): ReplayResult {
  const violations: string[] = [];
  let checks = 0;
  for (const { node, entries } of logs) {
    const signed = new Map<string, { device: string; sizeGiB: number }>();
    const devices = new ProblemTracker();
    entries.forEach((entry, i) => {
      for (const c of entry.changes) {
        if (c.kind !== 'virtual-add' && c.kind !== 'virtual-remove') continue;
        checks++;
        const at = `${node} log entry ${i + 1} (${timeOf(entry, node, i)})`;
        const virtualUUID = String(c['virtualUUID']);
        const device = String(c['device']);
        const already = signed.get(virtualUUID);
        if (c.kind === 'virtual-remove') {
          if (already?.device === device) signed.delete(virtualUUID);
        } else if (already) {
          // Each add while the UUID is signed is a problem of its own.
          devices.violations.push(
            `${at}: virtual drive ${virtualUUID} signed on ${device} while it is signed on ${already.device}`,
          );
        } else {
          signed.set(virtualUUID, { device, sizeGiB: Number(c['sizeGiB']) });
        }
        const current = new Map<string, string>();
        for (const [path, used] of usedPerDevice(signed)) {
          const capacity = capacityGiB(node, path);
          if (capacity === undefined)
            current.set(`unknown ${path}`, `${at}: node ${node} has no device ${path}, yet it is signed`);
          else if (used.gib > capacity)
            current.set(
              `over ${path}`,
              `${at}: device ${path} of node ${node} over-committed: ${used.gib} GiB signed of ${capacity} GiB (${used.uuids.join(', ')})${recorded(c)}`,
            );
        }
        devices.instant(current);
      }
    });
    violations.push(...devices.violations);
  }
  const inCluster = new Map<string, string>();
  for (const { node, index, entry, change } of clusterChangesInTimeOrder(logs)) {
    checks++;
    // A whole drive has no virtual UUID: it is the node's device.
    const virtualUUID = String(change['virtualUUID'] ?? `${node} ${String(change['devicePath'])}`);
    const driveUUID = String(change['driveUUID']);
    if (change.kind === 'drive-remove') {
      inCluster.delete(virtualUUID);
      continue;
    }
    const earlier = inCluster.get(virtualUUID);
    if (earlier !== undefined)
      violations.push(
        `${node} log entry ${index + 1} (${timeOf(entry, node, index)}): virtual drive ${virtualUUID} added to the Weka cluster as drive ${driveUUID} while it is in it since ${earlier}, with no drive-remove in between`,
      );
    inCluster.set(virtualUUID, `${node} log entry ${index + 1} (drive ${driveUUID})`);
  }
  return { violations, checks };
}

function usedPerDevice(
  signed: ReadonlyMap<string, { device: string; sizeGiB: number }>,
): Map<string, { gib: number; uuids: string[] }> {
  const used = new Map<string, { gib: number; uuids: string[] }>();
  for (const [uuid, s] of signed) {
    const u = used.get(s.device) ?? { gib: 0, uuids: [] };
    u.gib += s.sizeGiB;
    u.uuids.push(`${uuid} ${s.sizeGiB} GiB`);
    used.set(s.device, u);
  }
  return used;
}

function recorded(c: SimChange): string {
  return typeof c['overcommitGiB'] === 'number' ? `; the simulator recorded ${c['overcommitGiB']} GiB over` : '';
}

function timeOf(entry: TimedEntry, node: string, index: number): string {
  if (typeof entry.time !== 'string' || Number.isNaN(Date.parse(entry.time)))
    throw new Error(`${node} log entry ${index + 1} has no time: the simulator writes one on every line`);
  return entry.time;
}

/**
 * Every drive-add and drive-remove of every node, merged by time; a node's own changes stay in its
 * log order even if its clock stepped back.
 */
function clusterChangesInTimeOrder(
  logs: ReadonlyArray<{ node: string; entries: readonly SimLogEntry[] }>,
): Array<{ node: string; index: number; entry: SimLogEntry; change: SimChange }> {
  const queues = logs.map(({ node, entries }) =>
    entries.flatMap((entry, index) =>
      entry.changes
        .filter((change) => change.kind === 'drive-add' || change.kind === 'drive-remove')
        .map((change) => ({ node, index, entry, change, time: Date.parse(timeOf(entry, node, index)) })),
    ),
  );
  const merged: Array<{ node: string; index: number; entry: SimLogEntry; change: SimChange }> = [];
  const heads = queues.map(() => 0);
  for (;;) {
    let pick = -1;
    queues.forEach((q, n) => {
      const head = q[heads[n]!];
      if (head && (pick === -1 || head.time < queues[pick]![heads[pick]!]!.time)) pick = n;
    });
    if (pick === -1) return merged;
    merged.push(queues[pick]![heads[pick]!++]!);
  }
}
