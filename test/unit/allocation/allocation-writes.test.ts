// The allocation activity against a fake apiserver that refuses chosen requests: what each kind of
// failure of a status write, or of a read, becomes. A node's mutex waits behind this activity, so
// only a transient failure may fail it (for Temporal to retry); a failure the apiserver would
// repeat is the asking container's answer, and the rest of the batch goes on. The real apiserver
// refusing a write (422, from an admission policy) is in test/integration/impossible-request.test.ts.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createAllocationDecisions } from '../../../activities/allocations.js';
import type { ActivityDeps } from '../../../activities/deps.js';
import { apiMessage, describeKubeError, kubeFailure } from '../../../activities/kube/errors.js';
import { encodeSharedDrivesAnnotation, SHARED_DRIVES_ANNOTATION } from '../../../src/annotations/index.js';
import { DEFAULT_ALLOCATION_SETTINGS, type PhysicalDrive } from '../../../src/allocation/index.js';
import type { MutexOutcome } from '../../../src/protocol.js';
import { ALLOCATIONS_ANNOTATION } from '../../../src/node/allocation-ledger.js';

const NODE = 'node-1';
const BASE = '/apis/weka.weka.io/v1alpha1';

interface Failure {
  code: number;
  message: string;
  /** How many times to fail; for ever when absent. */
  times?: number;
}

interface StoredContainer {
  metadata: { name: string; namespace: string; uid: string; resourceVersion: string };
  spec: Record<string, unknown>;
  status?: { allocations?: { virtualDrives?: unknown[] } };
}

/** An apiserver with one node (two 3840 GiB TLC drives) and the WekaContainers given. */
class FakeApiserver {
  readonly containers = new Map<string, StoredContainer>();
  /** Failures of a status write, by "namespace/name". */
  readonly writeFailures = new Map<string, Failure>();
  /** A failure of the list of the node's containers. */
  listFailure: Failure | undefined;
  /** Failures of the dry-run create of a container's pod, by "namespace/name". */
  readonly podFailures = new Map<string, Failure>();
  /** The pods dry-run, as "namespace/name": none is ever stored. */
  dryRuns: string[] = [];
  lists = 0;
  writes: string[] = [];
  /** The node's annotations the activity wrote (its allocation ledger). */
  readonly nodeAnnotations: Record<string, string> = {};
  /** Bumped by every write of the node. */
  nodeVersion = 1;
  private version = 1;
  private server: Server | undefined;

  add(namespace: string, name: string, spec: Record<string, unknown>): void {
    this.containers.set(`${namespace}/${name}`, {
      metadata: { name, namespace, uid: `uid-${namespace}-${name}`, resourceVersion: String(this.version++) },
      spec,
    });
  }

  async start(): Promise<KubeConfig> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'fake', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: 'fake' }],
      contexts: [{ name: 'fake', cluster: 'fake', user: 'fake' }],
      currentContext: 'fake',
    });
    return kc;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  private fail(res: ServerResponse, f: Failure): void {
    if (f.times !== undefined) f.times--;
    const reason = { 403: 'Forbidden', 404: 'NotFound', 409: 'Conflict', 422: 'Invalid' }[f.code] ?? 'InternalError';
    this.send(res, f.code, { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: f.message, reason });
  }

  private node(drives: PhysicalDrive[]): unknown {
    const annotations = { ...this.nodeAnnotations, [SHARED_DRIVES_ANNOTATION]: encodeSharedDrivesAnnotation(drives) };
    return {
      kind: 'Node',
      apiVersion: 'v1',
      metadata: { name: NODE, resourceVersion: String(this.nodeVersion), annotations },
    };
  }

  private send(res: ServerResponse, code: number, body: unknown): void {
    res.writeHead(code, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? '/', 'http://fake');
    const active = (f: Failure | undefined): f is Failure => f !== undefined && (f.times === undefined || f.times > 0);
    if (req.method === 'GET' && url.pathname === `/api/v1/nodes/${NODE}`) {
      const drives = [0, 1].map((i) => ({
        physicalUUID: `p${i}`,
        serial: `SN${i}`,
        capacityGiB: 3840,
        type: 'TLC' as const,
        devicePath: `/dev/nvme${i}n1`,
      }));
      return this.send(res, 200, this.node(drives));
    }
    if (req.method === 'PATCH' && url.pathname === `/api/v1/nodes/${NODE}`) {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        metadata: { resourceVersion?: string; annotations?: Record<string, string> };
      };
      if (body.metadata.resourceVersion && body.metadata.resourceVersion !== String(this.nodeVersion))
        return this.fail(res, { code: 409, message: 'the node has been modified' });
      Object.assign(this.nodeAnnotations, body.metadata.annotations ?? {});
      this.nodeVersion++;
      return this.send(res, 200, this.node([]));
    }
    const pods = /^\/api\/v1\/namespaces\/([^/]+)\/pods$/.exec(url.pathname);
    if (req.method === 'POST' && pods && url.searchParams.get('dryRun') === 'All') {
      const pod = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { metadata: { name: string } };
      const key = `${pods[1]}/${pod.metadata.name}`;
      this.dryRuns.push(key);
      const failure = this.podFailures.get(key);
      if (active(failure)) return this.fail(res, failure);
      return this.send(res, 201, pod);
    }
    // Standalone containers' ports stay out of every cluster's range: here there is none.
    if (req.method === 'GET' && url.pathname === `${BASE}/wekaclusters`) return this.send(res, 200, { items: [] });
    if (req.method === 'GET' && url.pathname === `${BASE}/wekacontainers`) {
      this.lists++;
      if (active(this.listFailure)) return this.fail(res, this.listFailure);
      return this.send(res, 200, { items: [...this.containers.values()] });
    }
    const match = /^\/apis\/weka\.weka\.io\/v1alpha1\/namespaces\/([^/]+)\/wekacontainers\/([^/]+)(\/status)?$/.exec(
      url.pathname,
    );
    const key = match ? `${match[1]}/${match[2]}` : '';
    const stored = this.containers.get(key);
    if (req.method === 'GET' && match && !match[3]) {
      return stored ? this.send(res, 200, stored) : this.fail(res, { code: 404, message: `${key} not found` });
    }
    if (req.method === 'PATCH' && match?.[3]) {
      this.writes.push(key);
      const failure = this.writeFailures.get(key);
      if (active(failure)) return this.fail(res, failure);
      if (!stored) return this.fail(res, { code: 404, message: `wekacontainers "${match[2]}" not found` });
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        metadata: { resourceVersion?: string };
        status: { allocations?: { virtualDrives?: unknown[] } };
      };
      if (body.metadata.resourceVersion && body.metadata.resourceVersion !== stored.metadata.resourceVersion)
        return this.fail(res, { code: 409, message: 'the object has been modified' });
      stored.status = body.status.allocations ? { allocations: body.status.allocations } : {};
      stored.metadata.resourceVersion = String(this.version++);
      return this.send(res, 200, stored);
    }
    this.send(res, 404, { kind: 'Status', message: `no route for ${req.method} ${url.pathname}` });
  }
}

const SPEC = {
  mode: 'drive',
  nodeName: NODE,
  driveCores: 1,
  containerCapacity: 700,
  driveTypesRatio: { tlc: 1, qlc: 0 },
};

let fake: FakeApiserver;
afterEach(async () => {
  await fake?.stop();
});

/** The activity over a fake apiserver holding these containers (in "namespace/name" form). */
async function setUp(containers: string[], spec: (key: string) => Record<string, unknown> = () => SPEC) {
  fake = new FakeApiserver();
  for (const key of containers) {
    const [namespace, name] = key.split('/') as [string, string];
    fake.add(namespace, name, spec(key));
  }
  const deps = {
    kubeConfig: await fake.start(),
    logger: pino({ level: 'silent' }),
    settings: DEFAULT_ALLOCATION_SETTINGS,
  } as unknown as ActivityDeps;
  const { allocateForContainers, releaseAllocation } = createAllocationDecisions(deps);
  const asks = containers.map((key) => {
    const [namespace, name] = key.split('/') as [string, string];
    return { namespace, name, node: NODE };
  });
  return { allocate: () => allocateForContainers({ node: NODE, containers: asks }), releaseAllocation };
}

const held = (key: string): number =>
  ((fake.containers.get(key)?.status?.allocations?.virtualDrives ?? []) as { capacityGiB: number }[]).reduce(
    (s, d) => s + d.capacityGiB,
    0,
  );

function expectRefused(outcome: MutexOutcome | undefined, type: string, waitForCapacity: boolean): string {
  expect(outcome).toMatchObject({ ok: false, waitForCapacity, error: { type } });
  return (outcome as { error: { message: string } }).error.message;
}

describe('a failed allocation write in a batch', () => {
  it('422 (a schema, CEL rule or admission policy refuses it): that container’s refusal, the others allocated', async () => {
    const { allocate } = await setUp(['a/first', 'b/refused', 'a/last']);
    fake.writeFailures.set('b/refused', { code: 422, message: 'denied by policy "no-drives-for-b"' });
    const [first, refused, last] = await allocate();
    expect(first?.ok).toBe(true);
    expect(last?.ok).toBe(true);
    const message = expectRefused(refused, 'AllocationWriteRefused', false);
    expect(message).toBe(
      'the apiserver refused to store the allocation of b/refused in its status (HTTP 422: denied by policy "no-drives-for-b"); nothing was allocated; the container asks again when its spec changes',
    );
    expect([held('a/first'), held('b/refused'), held('a/last')]).toEqual([700, 0, 700]);
    // The write after the refused one was decided again from a fresh read: two reads in all.
    expect(fake.lists).toBe(2);
  });

  it('403 (the operator is refused): that container’s refusal, asked again later; the others allocated', async () => {
    const { allocate } = await setUp(['a/first', 'b/forbidden', 'a/last']);
    fake.writeFailures.set('b/forbidden', { code: 403, message: 'forbidden: no patch on wekacontainers/status' });
    const [first, forbidden, last] = await allocate();
    expect([first?.ok, last?.ok]).toEqual([true, true]);
    expect(expectRefused(forbidden, 'AllocationWriteRefused', true)).toMatch(/HTTP 403.*asks again in 30 s$/);
  });

  it('404 (deleted since the read): ContainerGone, the others allocated', async () => {
    const { allocate } = await setUp(['a/first', 'b/gone', 'a/last']);
    fake.writeFailures.set('b/gone', { code: 404, message: 'not found' });
    const [first, gone, last] = await allocate();
    expect([first?.ok, last?.ok]).toEqual([true, true]);
    expectRefused(gone, 'ContainerGone', false);
  });

  it('500 (transient): fails the activity, for Temporal to retry', async () => {
    const { allocate } = await setUp(['a/first', 'b/unlucky']);
    fake.writeFailures.set('b/unlucky', { code: 500, message: 'etcdserver: request timed out' });
    await expect(allocate()).rejects.toMatchObject({ code: 500 });
  });

  it('409 once (changed since the read): decided again from a fresh read and allocated', async () => {
    const { allocate } = await setUp(['a/first', 'b/changed']);
    fake.writeFailures.set('b/changed', { code: 409, message: 'the object has been modified', times: 1 });
    const outcomes = await allocate();
    expect(outcomes.map((o) => o.ok)).toEqual([true, true]);
    expect(fake.lists).toBe(2);
  });

  it('409 for ever: fails the activity after five fresh reads (the containers keep changing)', async () => {
    const { allocate } = await setUp(['a/first', 'b/changing']);
    fake.writeFailures.set('b/changing', { code: 409, message: 'the object has been modified' });
    await expect(allocate()).rejects.toMatchObject({ type: 'AllocationConflict' });
    expect(fake.lists).toBe(5);
    expect(held('a/first')).toBe(700);
  });

  it('refusals in every write of a batch never fail it: each container has its answer', async () => {
    const keys = Array.from({ length: 8 }, (_, i) => `ns-${i}/c`);
    const { allocate } = await setUp(keys);
    for (const key of keys) fake.writeFailures.set(key, { code: 422, message: 'invalid' });
    const outcomes = await allocate();
    for (const o of outcomes) expectRefused(o, 'AllocationWriteRefused', false);
  });
});

describe('a pod the apiserver would refuse', () => {
  it('a namespace beyond its quota: that container is refused QuotaExceeded and holds nothing; the others allocated', async () => {
    const { allocate } = await setUp(['a/first', 'b/beyond', 'a/last']);
    fake.podFailures.set('b/beyond', {
      code: 403,
      message: 'pods "beyond" is forbidden: exceeded quota: drives, requested: weka.io/shared-drives-capacity=700',
    });
    const [first, beyond, last] = await allocate();
    expect([first?.ok, last?.ok]).toEqual([true, true]);
    expect(expectRefused(beyond, 'QuotaExceeded', true)).toMatch(/exceeded quota: drives.*nothing was allocated/);
    expect([held('a/first'), held('b/beyond'), held('a/last')]).toEqual([700, 0, 700]);
    expect(fake.writes).not.toContain('b/beyond');
    expect(JSON.parse(fake.nodeAnnotations['weka.weka.io/allocations'] ?? '{}').containers).not.toHaveProperty(
      'uid-b-beyond',
    );
    // Asked once per new allocation, dry: no pod is ever created.
    expect(new Set(fake.dryRuns)).toEqual(new Set(['a/first', 'b/beyond', 'a/last']));
  });

  it('an allocation the container holds already is not asked about again', async () => {
    const { allocate } = await setUp(['a/held']);
    expect((await allocate())[0]?.ok).toBe(true);
    fake.dryRuns = [];
    fake.podFailures.set('a/held', { code: 403, message: 'exceeded quota: drives' });
    expect((await allocate())[0]?.ok).toBe(true);
    expect(fake.dryRuns).toEqual([]);
  });
});

describe('a node that lost its ledger', () => {
  it('reads its devices first, and when they cannot be read every ask is refused and asked again in 30 s', async () => {
    const { allocate } = await setUp(['a/held']);
    expect((await allocate())[0]?.ok).toBe(true);
    // Registered again: the annotation is gone, the container still shows its allocation. This
    // fake has no ssdproxy to read the devices with.
    delete fake.nodeAnnotations[ALLOCATIONS_ANNOTATION];
    const [outcome] = await allocate();
    const message = expectRefused(outcome, 'LedgerNotRebuilt', true);
    expect(message).toContain('no allocation ledger');
    expect(fake.nodeAnnotations[ALLOCATIONS_ANNOTATION]).toBeUndefined();
  });
});

describe('a failed read', () => {
  it('403 on the list of the node’s containers: every ask refused, asked again later', async () => {
    const { allocate } = await setUp(['a/first', 'b/second']);
    fake.listFailure = { code: 403, message: 'cannot list wekacontainers at the cluster scope' };
    const outcomes = await allocate();
    for (const o of outcomes)
      expect(expectRefused(o, 'NodeUnreadable', true)).toMatch(/cannot read node node-1 .*HTTP 403/);
  });

  it('503 on the list: fails the activity, for Temporal to retry', async () => {
    const { allocate } = await setUp(['a/first']);
    fake.listFailure = { code: 503, message: 'the server is currently unable to handle the request' };
    await expect(allocate()).rejects.toMatchObject({ code: 503 });
  });
});

describe('a batch after a failed write', () => {
  // The node holds 2 x 3840 GiB. A big container's allocation fills most of it; the one after it
  // is refused for lack of capacity in the same decision. When the big one's write fails, that
  // refusal assumed an allocation that never happened: it is decided again, as one-at-a-time
  // decisions would, and allocated.
  const specs = (key: string) =>
    key === 'a/big' ? { ...SPEC, containerCapacity: 7000 } : { ...SPEC, containerCapacity: 3000 };

  it.each([
    ['refused (422)', { code: 422, message: 'denied by policy' }],
    ['gone (404)', { code: 404, message: 'not found' }],
  ])('re-decides a refusal that counted a write then %s', async (_what, failure) => {
    const { allocate } = await setUp(['a/big', 'b/after'], specs);
    fake.writeFailures.set('a/big', failure);
    const [, after] = await allocate();
    expect(after?.ok).toBe(true);
    expect(held('b/after')).toBe(3000);
  });
});

describe('a decision that throws', () => {
  it('is the refusal of the one container it throws on; the others are allocated', async () => {
    // A ratio of null (which the CRD's schema would refuse) makes the decision throw: a bug's stand-in.
    const { allocate } = await setUp(['a/first', 'b/broken', 'a/last'], (key) =>
      key === 'b/broken' ? { ...SPEC, driveTypesRatio: null } : SPEC,
    );
    const [first, broken, last] = await allocate();
    expect([first?.ok, last?.ok]).toEqual([true, true]);
    expect(expectRefused(broken, 'AllocatorError', false)).toMatch(/^the allocator failed on b\/broken: /);
  });
});

describe('release', () => {
  it('frees a deleted container in the ledger even when the apiserver refuses to clear its status (422)', async () => {
    const { allocate, releaseAllocation } = await setUp(['a/first']);
    expect((await allocate())[0]?.ok).toBe(true);
    expect(fake.nodeAnnotations[ALLOCATIONS_ANNOTATION]).toContain('uid-a-first');
    (fake.containers.get('a/first')!.metadata as Record<string, unknown>)['deletionTimestamp'] = '2026-01-01T00:00:00Z';
    fake.writeFailures.set('a/first', { code: 422, message: 'invalid' });
    expect(await releaseAllocation({ namespace: 'a', name: 'first', node: NODE, uid: 'uid-a-first' })).toEqual({
      ok: true,
      result: { released: true },
    });
    expect(fake.nodeAnnotations[ALLOCATIONS_ANNOTATION]).not.toContain('uid-a-first');
  });

  it('says it released nothing, and writes nothing, for a container the ledger holds nothing for', async () => {
    const { releaseAllocation } = await setUp(['a/first']);
    (fake.containers.get('a/first')!.metadata as Record<string, unknown>)['deletionTimestamp'] = '2026-01-01T00:00:00Z';
    const before = fake.nodeVersion;
    expect(await releaseAllocation({ namespace: 'a', name: 'first', node: NODE, uid: 'uid-a-first' })).toEqual({
      ok: true,
      result: { released: false },
    });
    expect(fake.nodeVersion).toBe(before);
  });

  it('refuses to release a container that is not being deleted', async () => {
    const { allocate, releaseAllocation } = await setUp(['a/first']);
    expect((await allocate())[0]?.ok).toBe(true);
    const answer = await releaseAllocation({ namespace: 'a', name: 'first', node: NODE, uid: 'uid-a-first' });
    expectRefused(answer, 'NotDeleting', false);
    expect(fake.nodeAnnotations[ALLOCATIONS_ANNOTATION]).toContain('uid-a-first');
  });
});

describe('kubeFailure', () => {
  it.each([
    [undefined, 'transient'],
    [408, 'transient'],
    [429, 'transient'],
    [500, 'transient'],
    [503, 'transient'],
    [409, 'conflict'],
    [401, 'access'],
    [403, 'access'],
    [400, 'refused'],
    [404, 'refused'],
    [413, 'refused'],
    [422, 'refused'],
  ])('HTTP %s is %s', (code, kind) => {
    expect(kubeFailure(code === undefined ? new Error('ECONNRESET') : { code })).toBe(kind);
  });

  it('reads the apiserver’s message from a Status body, as a string or parsed', () => {
    expect(apiMessage({ code: 422, body: '{"kind":"Status","message":"spec.x: Invalid value"}' })).toBe(
      'spec.x: Invalid value',
    );
    expect(apiMessage({ code: 422, body: { message: 'parsed' } })).toBe('parsed');
    expect(describeKubeError(new Error('socket hang up'))).toBe('no answer: socket hang up');
  });
});
