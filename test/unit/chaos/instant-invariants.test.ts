// The invariants at every instant: the audit log of WekaContainer writes replayed in etcd's order,
// and the simulator's logs replayed change by change.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { VirtualDriveStatus } from '../../../src/api/index.js';
import {
  CONTAINER_WRITES_AUDIT_POLICY,
  parseContainerWrites,
  simLogReplayViolations,
  statusReplayViolations,
  type ContainerWrite,
} from '../../support/instant-invariants.js';
import type { SimLogEntry } from '../../support/simulator.js';
import { CLUSTER_A, expectOk, signedNode, sim, simRoot, uuid, virtualAdd } from '../weka-sim/helpers.js';

// ---- audit events ----

const P1 = 'p1000000-0000-4000-8000-000000000001';
const P2 = 'p2000000-0000-4000-8000-000000000002';
const V = (n: number) => `v0000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

function vd(virtualUUID: string, physicalUUID: string, capacityGiB: number): VirtualDriveStatus {
  return { virtualUUID, physicalUUID, capacityGiB, serial: `S-${physicalUUID.slice(0, 2)}` };
}

interface EventSpec {
  rv?: number;
  name: string;
  uid?: string;
  node?: string;
  drives?: VirtualDriveStatus[];
  verb?: string;
  subresource?: string | null;
  resource?: string;
  stage?: string;
  code?: number;
  finalizers?: string[];
  deleting?: boolean;
  /** Answer with this instead of the object (e.g. a Status), or leave it out with null. */
  response?: unknown;
  refUid?: string;
  requestURI?: string;
}

function event(o: EventSpec): string {
  const uid = o.uid ?? `uid-${o.name}`;
  const subresource = o.subresource === undefined ? 'status' : o.subresource;
  const object = {
    apiVersion: 'weka.weka.io/v1alpha1',
    kind: 'WekaContainer',
    metadata: {
      name: o.name,
      namespace: 'ns',
      uid,
      resourceVersion: String(o.rv ?? 0),
      ...(o.finalizers ? { finalizers: o.finalizers } : {}),
      ...(o.deleting ? { deletionTimestamp: '2026-11-22T01:00:00Z' } : {}),
    },
    spec: { nodeName: o.node ?? 'node-1', cluster: 'c' },
    status: o.drives ? { allocations: { virtualDrives: o.drives, virtualDriveCount: o.drives.length } } : {},
  };
  return JSON.stringify({
    kind: 'Event',
    apiVersion: 'audit.k8s.io/v1',
    level: 'RequestResponse',
    auditID: `${o.name}-${o.rv ?? 'x'}`,
    stage: o.stage ?? 'ResponseComplete',
    requestURI:
      o.requestURI ??
      `/apis/weka.weka.io/v1alpha1/namespaces/ns/wekacontainers/${o.name}${subresource ? '/status' : ''}`,
    verb: o.verb ?? 'patch',
    objectRef: {
      resource: o.resource ?? 'wekacontainers',
      namespace: 'ns',
      name: o.name,
      apiGroup: 'weka.weka.io',
      apiVersion: 'v1alpha1',
      ...(subresource ? { subresource } : {}),
      ...(o.refUid ? { uid: o.refUid } : {}),
    },
    responseStatus: { metadata: {}, code: o.code ?? 200 },
    ...(o.response === null ? {} : { responseObject: o.response ?? object }),
  });
}

const log = (...events: string[]) => `${events.join('\n')}\n`;
/** A regular expression matching `text` literally. */
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const STATUS_SUCCESS = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 200 };

/** Physical drives: P1 and P2 on node-1 and node-2, 1000 GiB each. */
const capacity = (node: string, physicalUUID: string) =>
  ['node-1', 'node-2'].includes(node) && [P1, P2].includes(physicalUUID) ? 1000 : undefined;

const replay = (text: string) => statusReplayViolations(parseContainerWrites(text), capacity);

describe('the audit policy', () => {
  it('records every write of WekaContainers and their status with the response, and nothing else', () => {
    const policy = parse(CONTAINER_WRITES_AUDIT_POLICY) as {
      apiVersion: string;
      kind: string;
      omitStages: string[];
      rules: Array<{ level: string; verbs?: string[]; resources?: Array<{ group: string; resources: string[] }> }>;
    };
    expect(policy).toMatchObject({ apiVersion: 'audit.k8s.io/v1', kind: 'Policy', omitStages: ['RequestReceived'] });
    expect(policy.rules).toEqual([
      {
        level: 'RequestResponse',
        verbs: ['create', 'update', 'patch', 'delete'],
        resources: [{ group: 'weka.weka.io', resources: ['wekacontainers', 'wekacontainers/status'] }],
      },
      { level: 'None' },
    ]);
  });
});

describe('container writes from an audit log', () => {
  it('reads each successful write as the object after it, in resourceVersion order', () => {
    const writes = parseContainerWrites(
      log(
        event({ rv: 12, name: 'b', node: 'node-2', drives: [vd(V(2), P2, 300)] }),
        event({ rv: 10, name: 'a', verb: 'create', subresource: null }),
        event({ rv: 11, name: 'a', drives: [vd(V(1), P1, 400)] }),
        event({ rv: 13, name: 'a', verb: 'update', subresource: null, drives: [vd(V(1), P1, 400)] }),
      ),
    );
    expect(writes).toEqual<ContainerWrite[]>([
      { resourceVersion: 10, key: 'ns/a', uid: 'uid-a', node: 'node-1', allocations: [], gone: false },
      { resourceVersion: 11, key: 'ns/a', uid: 'uid-a', node: 'node-1', allocations: [vd(V(1), P1, 400)], gone: false },
      { resourceVersion: 12, key: 'ns/b', uid: 'uid-b', node: 'node-2', allocations: [vd(V(2), P2, 300)], gone: false },
      { resourceVersion: 13, key: 'ns/a', uid: 'uid-a', node: 'node-1', allocations: [vd(V(1), P1, 400)], gone: false },
    ]);
  });

  it.each<[string, Partial<EventSpec>]>([
    ['a request still being answered', { stage: 'ResponseStarted' }],
    ['a panicked request', { stage: 'Panic' }],
    ['a read', { verb: 'get' }],
    ['a watch', { verb: 'watch' }],
    ['a failed write', { code: 409 }],
    ['a write of another resource', { resource: 'wekaclusters' }],
    ['a write of another subresource', { subresource: 'scale' }],
    [
      'a dry run',
      { requestURI: '/apis/weka.weka.io/v1alpha1/namespaces/ns/wekacontainers/a/status?dryRun=All&fieldManager=x' },
    ],
  ])('leaves out %s', (_why, spec) => {
    expect(parseContainerWrites(log(event({ rv: 5, name: 'a', drives: [vd(V(1), P1, 10)], ...spec })))).toEqual([]);
  });

  it('ignores a last line the apiserver is still writing, and refuses any other that does not parse', () => {
    const good = event({ rv: 5, name: 'a' });
    expect(parseContainerWrites(`${good}\n{"kind":"Ev`)).toHaveLength(1);
    expect(() => parseContainerWrites(`{"kind":"Ev\n${good}\n`)).toThrow(/line 1 is not JSON/);
  });

  it('refuses a write that does not carry the object it wrote (audit level below RequestResponse)', () => {
    expect(() => parseContainerWrites(log(event({ rv: 5, name: 'a', response: null })))).toThrow(
      /patch of ns\/a has no response object/,
    );
    expect(() =>
      parseContainerWrites(log(event({ rv: 5, name: 'a', response: 'skipped-too-big-size-object' }))),
    ).toThrow(/no response object/);
  });

  it('refuses a resourceVersion that is not an integer', () => {
    const line = event({ rv: 5, name: 'a' }).replace('"resourceVersion":"5"', '"resourceVersion":"5a"');
    expect(() => parseContainerWrites(line)).toThrow(/resourceVersion "5a" of ns\/a is not an integer/);
  });

  it.each<[string, EventSpec, boolean]>([
    [
      'a delete answered with the object without finalizers',
      { rv: 9, name: 'a', verb: 'delete', subresource: null },
      true,
    ],
    [
      'a delete of an object with finalizers (it is only marked)',
      { rv: 9, name: 'a', verb: 'delete', subresource: null, finalizers: ['f'], deleting: true },
      false,
    ],
    [
      'an update that removes the last finalizer of a deleted object',
      { rv: 9, name: 'a', verb: 'update', subresource: null, deleting: true },
      true,
    ],
    [
      'a status patch of a deleted object that keeps its finalizer',
      { rv: 9, name: 'a', finalizers: ['f'], deleting: true },
      false,
    ],
    ['a status patch of an object without finalizers', { rv: 9, name: 'a' }, false],
  ])('marks gone: %s -> %s', (_why, spec, gone) => {
    expect(parseContainerWrites(log(event(spec)))).toMatchObject([{ resourceVersion: 9, gone }]);
  });

  it('places a delete answered with a Status right after the last write of its object before it', () => {
    const writes = parseContainerWrites(
      log(
        event({ rv: 20, name: 'other' }),
        event({ rv: 7, name: 'a', drives: [vd(V(1), P1, 10)] }),
        event({ rv: 8, name: 'a', drives: [vd(V(1), P1, 10)] }),
        event({ name: 'a', verb: 'delete', subresource: null, response: STATUS_SUCCESS }),
        // The name is reused by a new object after the delete: not the one deleted.
        event({ rv: 30, name: 'a', uid: 'uid-a2', verb: 'create', subresource: null }),
        // A Status delete of an object the log never wrote: nothing to remove.
        event({ name: 'never', verb: 'delete', subresource: null, response: STATUS_SUCCESS }),
      ),
    );
    expect(writes.map((w) => [w.resourceVersion, w.uid, w.gone])).toEqual([
      [7, 'uid-a', false],
      [8, 'uid-a', false],
      [8, 'uid-a', true],
      [20, 'uid-other', false],
      [30, 'uid-a2', false],
    ]);
  });

  it('sorts a Status delete after a write of the same resourceVersion logged after it', () => {
    const writes = parseContainerWrites(
      log(
        event({ rv: 8, name: 'a', drives: [vd(V(1), P1, 10)] }),
        event({ name: 'a', verb: 'delete', subresource: null, response: STATUS_SUCCESS }),
        // A patch that changed nothing (same resourceVersion), answered before the delete but logged after it.
        event({ rv: 8, name: 'a', drives: [vd(V(1), P1, 10)] }),
      ),
    );
    expect(writes.map((w) => w.gone)).toEqual([false, false, true]);
  });

  it.each<[string, Partial<EventSpec>]>([
    ['the uid of the audit event', { refUid: 'old' }],
    ['the uid in the details of the Status', { response: { ...STATUS_SUCCESS, details: { name: 'a', uid: 'old' } } }],
  ])('finds the object of a Status delete by %s when there is one', (_why, spec) => {
    const writes = parseContainerWrites(
      log(
        event({ rv: 7, name: 'a', uid: 'old' }),
        event({ rv: 9, name: 'a', uid: 'new' }),
        event({ name: 'a', verb: 'delete', subresource: null, response: STATUS_SUCCESS, ...spec }),
      ),
    );
    expect(writes.map((w) => [w.resourceVersion, w.uid, w.gone])).toEqual([
      [7, 'old', false],
      [7, 'old', true],
      [9, 'new', false],
    ]);
  });
});

describe('the statuses replayed write by write', () => {
  // a allocates 800 GiB of P1, then releases it (deleted: the response is the object as it was,
  // allocations included); b is then given the freed GiB.
  const ALLOCATED = { name: 'a', drives: [vd(V(1), P1, 800)] };
  const allocate = (rv: number) => event({ ...ALLOCATED, rv });
  const release = (rv: number) => event({ ...ALLOCATED, rv, verb: 'delete', subresource: null });
  const reuse = (rv: number) => event({ rv, name: 'b', drives: [vd(V(2), P1, 800)] });
  const holds = (rv: number, name: string, drives: VirtualDriveStatus[], node = 'node-1') =>
    event({ rv, name, node, drives });
  const OVER_P1 = `physical drive ${P1} of node node-1 over-committed`;

  // [why, audit lines in log order, the start of each violation expected]
  it.each<[string, string[], string[]]>([
    ['allocate, release, the next container gets the freed GiB', [allocate(10), release(11), reuse(12)], []],
    [
      // The same lines, but etcd took b's write (11) before a's release (12): the end state is fine.
      'the next allocation written before the release',
      [allocate(10), release(12), reuse(11)],
      [`resourceVersion 11: ${OVER_P1}`],
    ],
    ['a drive filled exactly to its capacity', [allocate(10), holds(11, 'b', [vd(V(2), P1, 200)])], []],
    ['a release by an emptied status', [allocate(10), holds(11, 'a', []), reuse(12)], []],
    [
      'a release by a delete answered with a Status',
      [allocate(10), event({ name: 'a', verb: 'delete', subresource: null, response: STATUS_SUCCESS }), reuse(12)],
      [],
    ],
    [
      'a delete that only marks an object with a finalizer: it still holds its GiB',
      [
        allocate(10),
        event({ ...ALLOCATED, rv: 11, verb: 'delete', subresource: null, finalizers: ['f'], deleting: true }),
        reuse(12),
      ],
      [`resourceVersion 12: ${OVER_P1}`],
    ],
    [
      'a virtual UUID in two statuses at once (on two drives, neither over-committed)',
      [holds(10, 'a', [vd(V(1), P1, 100)]), holds(11, 'b', [vd(V(1), P2, 100)])],
      [`resourceVersion 11: virtual drive ${V(1)} is allocated to 2 containers at once`],
    ],
    [
      'a problem that lasts (reported once) and starts again (reported again)',
      [
        holds(10, 'a', [vd(V(1), P1, 100)]),
        holds(11, 'b', [vd(V(1), P1, 100)]),
        holds(12, 'b', [vd(V(1), P1, 100)]),
        holds(13, 'b', []),
        holds(14, 'b', [vd(V(1), P1, 100)]),
      ],
      [`resourceVersion 11: virtual drive ${V(1)}`, `resourceVersion 14: virtual drive ${V(1)}`],
    ],
    [
      'a physical drive the node does not have',
      [holds(10, 'a', [vd(V(1), 'p9', 10)])],
      ['resourceVersion 10: node node-1 has no physical drive p9'],
    ],
    [
      'a physical drive of another node',
      [holds(10, 'a', [vd(V(1), P1, 10)], 'node-3')],
      [`resourceVersion 10: node node-3 has no physical drive ${P1}`],
    ],
    [
      'the same physical UUID on two nodes: counted per node',
      [holds(10, 'a', [vd(V(1), P1, 800)], 'node-1'), holds(11, 'b', [vd(V(2), P1, 800)], 'node-2')],
      [],
    ],
  ])('%s', (_why, lines, expected) => {
    const result = replay(log(...lines));
    expect(result.checks).toBe(lines.length);
    expect(result.violations).toEqual(expected.map((start) => expect.stringMatching(`^${escape(start)}`)));
  });

  it('names the instant, the GiB and the containers involved', () => {
    expect(replay(log(allocate(10), release(12), reuse(11))).violations).toEqual([
      `resourceVersion 11: ${OVER_P1}: 1600 GiB allocated of 1000 GiB, by ns/a (uid uid-a) 800 GiB, ns/b (uid uid-b) 800 GiB`,
    ]);
    expect(replay(log(holds(10, 'a', [vd(V(1), P1, 100)]), holds(11, 'b', [vd(V(1), P2, 100)]))).violations).toEqual([
      `resourceVersion 11: virtual drive ${V(1)} is allocated to 2 containers at once: ns/a (uid uid-a), ns/b (uid uid-b)`,
    ]);
    expect(replay(log(holds(10, 'a', [vd(V(1), 'p9', 10)]))).violations).toEqual([
      'resourceVersion 10: node node-1 has no physical drive p9, allocated by ns/a (uid uid-a) 10 GiB',
    ]);
  });
});

// ---- simulator logs ----

let clock = Date.parse('2026-11-22T01:00:00.000Z');
function entry(changes: SimLogEntry['changes'], o: { exitCode?: number; time?: number | null } = {}): SimLogEntry {
  const time = o.time === undefined ? (clock += 5) : o.time;
  return {
    ...(time === null ? {} : { time: new Date(time).toISOString() }),
    argv: ['weka-sign-drive'],
    exitCode: o.exitCode ?? 0,
    changes,
  } as SimLogEntry;
}
const DEV = '/dev/nvme0n1';
const add = (n: number, sizeGiB: number, extra: Record<string, unknown> = {}) => ({
  kind: 'virtual-add',
  device: DEV,
  virtualUUID: V(n),
  ownerClusterGUID: CLUSTER_A,
  sizeGiB,
  ...extra,
});
const remove = (n: number) => ({ kind: 'virtual-remove', device: DEV, virtualUUID: V(n), ownerClusterGUID: CLUSTER_A });
const driveAdd = (n: number, drive: number) => ({
  kind: 'drive-add',
  driveUUID: `d${drive}`,
  virtualUUID: V(n),
  containerId: 0,
});
const driveRemove = (n: number, drive: number) => ({
  kind: 'drive-remove',
  driveUUID: `d${drive}`,
  virtualUUID: V(n),
  containerId: 0,
});
/** One 1000 GiB device per node. */
const deviceCapacity = (node: string, path: string) =>
  ['node-1', 'node-2'].includes(node) && path === DEV ? 1000 : undefined;
const replayLog = (entries: SimLogEntry[], node = 'node-1') =>
  simLogReplayViolations([{ node, entries }], deviceCapacity);

describe('the simulator logs replayed change by change', () => {
  const T = Date.parse('2026-11-22T02:00:00.000Z');
  const node1 = (...entries: SimLogEntry[]) => ({ node: 'node-1', entries });
  const node2 = (...entries: SimLogEntry[]) => ({ node: 'node-2', entries });
  const OVER = 'device /dev/nvme0n1 of node node-1 over-committed';

  // [why, logs, the start of each violation expected (after "NODE log entry N (TIME): "), changes replayed]
  it.each<[string, Array<{ node: string; entries: SimLogEntry[] }>, string[], number]>([
    [
      'freed GiB signed again (a sign-proxy is not replayed)',
      [
        node1(
          entry([add(1, 800)]),
          entry([remove(1)]),
          entry([add(2, 800)]),
          entry([{ kind: 'sign-proxy', device: DEV, physicalUUID: P1 }]),
        ),
      ],
      [],
      3,
    ],
    [
      'an over-commit the simulator recorded, reported once while it lasts',
      [
        node1(
          entry([add(1, 600)]),
          entry([add(2, 500, { overcommitGiB: 100 })]),
          entry([add(3, 50, { overcommitGiB: 150 })]),
          entry([remove(2)]),
        ),
      ],
      [OVER],
      4,
    ],
    [
      'an over-commit by a command that failed after its effect',
      [node1(entry([add(1, 600)]), entry([add(2, 500)], { exitCode: 75 }))],
      [OVER],
      2,
    ],
    ['a device counted per node', [node1(entry([add(1, 800)])), node2(entry([add(2, 800)]))], [], 2],
    [
      'a signature on a device the node does not have',
      [{ node: 'node-3', entries: [entry([add(1, 10)])] }],
      ['node node-3 has no device /dev/nvme0n1'],
      1,
    ],
    [
      'sign, remove, sign of the same virtual UUID',
      [node1(entry([add(1, 10)]), entry([remove(1)]), entry([add(1, 10)]))],
      [],
      3,
    ],
    [
      'the same virtual UUID signed twice',
      [node1(entry([add(1, 10)]), entry([add(1, 10)]))],
      [`virtual drive ${V(1)} signed on /dev/nvme0n1 while it is signed on /dev/nvme0n1`],
      2,
    ],
    [
      'a virtual drive added to the Weka cluster twice, from two nodes',
      [node1(entry([driveAdd(1, 1)], { time: T })), node2(entry([driveAdd(1, 2)], { time: T + 10 }))],
      [
        `virtual drive ${V(1)} added to the Weka cluster as drive d2 while it is in it since node-1 log entry 1 (drive d1)`,
      ],
      2,
    ],
    [
      "added, removed from another node, added again (in time order, though node-2's log comes first)",
      [
        node2(entry([driveRemove(1, 1)], { time: T + 10 }), entry([driveAdd(1, 2)], { time: T + 20 })),
        node1(entry([driveAdd(1, 1)], { time: T })),
      ],
      [],
      3,
    ],
  ])('%s', (_why, logs, expected, checks) => {
    const result = simLogReplayViolations(logs, deviceCapacity);
    expect(result.checks).toBe(checks);
    expect(result.violations).toEqual(
      expected.map((start) => expect.stringMatching(`^node-\\d log entry \\d+ \\([^)]*\\): ${escape(start)}`)),
    );
  });

  it('names the entry, the GiB and the virtual drives of an over-commit, and what the simulator recorded', () => {
    const result = replayLog([
      entry([add(1, 600)], { time: T }),
      entry([add(2, 500, { overcommitGiB: 100 })], { time: T + 5 }),
    ]);
    expect(result.violations).toEqual([
      `node-1 log entry 2 (2026-11-22T02:00:00.005Z): device /dev/nvme0n1 of node node-1 over-committed: 1100 GiB signed of 1000 GiB (${V(1)} 600 GiB, ${V(2)} 500 GiB); the simulator recorded 100 GiB over`,
    ]);
  });

  it('refuses an entry without a time', () => {
    expect(() => replayLog([entry([driveAdd(1, 1)], { time: null })])).toThrow(/log entry 1 has no time/);
    expect(() => replayLog([entry([add(1, 1)], { time: null })])).toThrow(/log entry 1 has no time/);
  });

  it("catches the over-commit of the simulator's recording mode from its real log", async () => {
    const state = await signedNode(await simRoot());
    await expectOk(sim('--state', state, 'overcommit', 'record'));
    await expectOk(virtualAdd(state, DEV, uuid(1), CLUSTER_A, 700));
    await expectOk(virtualAdd(state, DEV, uuid(2), CLUSTER_A, 700));
    const entries = (await readFile(join(state, 'commands.log'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as SimLogEntry);
    const result = simLogReplayViolations([{ node: 'node-1', entries }], deviceCapacity);
    expect(result.checks).toBe(2);
    expect(result.violations).toEqual([expect.stringContaining('1400 GiB signed of 1000 GiB')]);
    expect(result.violations[0]).toContain('the simulator recorded 400 GiB over');
  });
});
