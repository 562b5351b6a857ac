// Each kind's status as GitOps tools read it: kstatus (sigs.k8s.io/cli-utils, which Flux, Argo CD,
// kpt and `kubectl apply --wait` judge health with, run here as the real library) reads an object
// at work as InProgress, one that waits for a person as Failed with the reason, and one with
// nothing left to do as Current; every object carries Ready, which `kubectl wait
// --for=condition=Ready` waits on (kubectl built from the apiserver's Kubernetes version).
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Condition, WekaCluster } from '../../src/api/index.js';
import { specChangedSignal } from '../../src/protocol.js';
import { eventually } from '../support/async.js';
import { listContainers, patchContainerSpec } from '../support/containers.js';
import { POOL_LABEL, SMALL_MEMBER, WEKA_CLUSTERS, readCluster } from '../support/clusters.js';
import { addNode, kubeConfig, uniqueName, uniqueNamespace } from '../support/harness.js';
import { KSTATUS_BUILD_TIMEOUT_MS, kstatusOf, kstatusOfOne } from '../support/kstatus.js';
import { KUBECTL_BUILD_TIMEOUT_MS, kubectl } from '../support/kubectl.js';
import { readOperation, startSignDrivesOperation, waitFinished } from '../support/manual-operation.js';
import {
  createDriveContainer,
  deleteDriveContainer,
  readContainer,
  sharedDrivesNode,
  startTestOperator,
  startWekaCluster,
  waitForPhase,
  waitGone,
  type TestOperator,
} from '../support/operator.js';
import { createWekaCluster } from '../support/simulator.js';
import { testToolBinary } from '../support/tool-binary.js';

/** A node of a test cluster: room for a few small members of both drive types. */
const CLUSTER_DEVICES = [
  { path: '/dev/nvme0n1', capacityGiB: 7680, type: 'TLC' as const },
  { path: '/dev/nvme1n1', capacityGiB: 30720, type: 'QLC' as const },
];

let op: TestOperator;
beforeAll(async () => {
  await Promise.all([
    testToolBinary('kstatus', KSTATUS_BUILD_TIMEOUT_MS),
    testToolBinary('kubectl', KUBECTL_BUILD_TIMEOUT_MS),
  ]);
  op = await startTestOperator();
}, KUBECTL_BUILD_TIMEOUT_MS + 60_000);
afterAll(async () => {
  await op?.stop();
});

const condition = (o: { status?: { conditions?: Condition[] } } | null, type: string) =>
  o?.status?.conditions?.find((c) => c.type === type);

/**
 * Polls `read` until `until` holds, keeping every distinct status seen on the way (by its phase
 * and conditions) for kstatus to read afterwards.
 */
async function watchUntil<T extends { status?: { phase?: string } }>(
  what: string,
  read: () => Promise<T | null>,
  until: (o: T) => boolean,
  timeoutMs = 180_000,
): Promise<{ last: T; seen: T[] }> {
  const seen = new Map<string, T>();
  const last = await eventually(
    what,
    async () => {
      const o = await read();
      // Only what the operator wrote: a status without a phase is the test's own (the GUID it gives).
      if (!o?.status?.phase) return undefined;
      seen.set(JSON.stringify(o.status, ['phase', 'conditions', 'type', 'status', 'reason']), o);
      return until(o) ? o : undefined;
    },
    timeoutMs,
    { intervalMs: 50 },
  );
  return { last, seen: [...seen.values()] };
}

describe('kstatus on a WekaContainer', () => {
  it(
    'InProgress while it comes up, Current once Ready, InProgress while a growth waits for capacity, Current once grown',
    { timeout: 300_000 },
    async () => {
      const node = await sharedDrivesNode([{ path: '/dev/nvme0n1', capacityGiB: 3000, type: 'TLC' }], 'kstatus');
      const guid = await createWekaCluster(node, uniqueName('kstatus'));
      const ns = await uniqueNamespace('kstatus');
      const tlc = (containerCapacity: number) => ({
        nodeName: node,
        driveCores: 1,
        containerCapacity,
        driveTypesRatio: { tlc: 1, qlc: 0 },
      });
      const a = { namespace: ns, name: 'grows' };
      const b = { namespace: ns, name: 'holds' };
      const ca = await createDriveContainer(op, a, tlc(1000), guid);
      // As a pipeline waits for it: returns once Ready, and only then.
      const waitReady = kubectl([
        'wait',
        '--for=condition=Ready',
        `wekacontainer/${a.name}`,
        '-n',
        ns,
        '--timeout=180s',
      ]);
      const { last: ready, seen } = await watchUntil(
        'grows to be Ready',
        () => readContainer(a),
        (c) => c.status?.phase === 'Ready',
      );
      const before = seen.filter((c) => c.status?.phase !== 'Ready');
      expect(before.length).toBeGreaterThan(0);
      expect((await kstatusOf(before)).map((r) => r.status)).toEqual(before.map(() => 'InProgress'));
      // Every status on the way carried Ready, False until it was.
      expect(before.map((c) => condition(c, 'Ready')?.status)).toEqual(before.map(() => 'False'));
      expect((await kstatusOfOne(ready)).status).toBe('Current');
      expect(condition(ready, 'Ready')?.status).toBe('True');
      const waited = await waitReady;
      expect(waited, waited.stderr).toMatchObject({ code: 0 });
      expect(waited.stdout).toContain('condition met');

      const cb = await createDriveContainer(op, b, tlc(1500), guid);
      await waitForPhase(b, 'Ready', 120_000);
      // 500 GiB are left: growing by 1000 waits for capacity, Ready all the while.
      await patchContainerSpec(kubeConfig(), a, { containerCapacity: 2000 });
      await ca.handle.signal(specChangedSignal);
      const waiting = await eventually('the growth to wait', async () => {
        const c = await readContainer(a);
        return c && condition(c, 'Grown')?.status === 'False' ? c : undefined;
      });
      expect(waiting.status?.phase).toBe('Ready');
      expect(condition(waiting, 'Ready')?.status).toBe('True');
      const growing = await kstatusOfOne(waiting);
      expect(growing.status).toBe('InProgress');
      expect(growing.message).toMatch(/not enough TLC capacity: need 1000 GiB/);

      await deleteDriveContainer(op, b, cb.uid);
      await waitGone(b);
      const grown = await eventually('the growth to finish', async () => {
        const c = await readContainer(a);
        return c && condition(c, 'Grown')?.status === 'True' && c.status?.phase === 'Ready' ? c : undefined;
      });
      expect((await kstatusOfOne(grown)).status).toBe('Current');

      const waitDeleted = kubectl(['wait', '--for=delete', `wekacontainer/${a.name}`, '-n', ns, '--timeout=180s']);
      await deleteDriveContainer(op, a, ca.uid);
      const deleted = await waitDeleted;
      expect(deleted, deleted.stderr).toMatchObject({ code: 0 });
      expect(await readContainer(a)).toBeNull();
    },
  );

  it('Failed with the reason when refused for good: its phase says Refused, and Ready is False', async () => {
    const node = await sharedDrivesNode([{ path: '/dev/nvme0n1', capacityGiB: 3840, type: 'TLC' }], 'kstatus-ref');
    const guid = await createWekaCluster(node, uniqueName('kstatus'));
    const ref = { namespace: await uniqueNamespace('kstatus-ref'), name: 'twenty-on-one-core' };
    // 20 virtual drives on one drive core: the CRD allows it, the operator's setting (8 per core) does not.
    const { uid } = await createDriveContainer(
      op,
      ref,
      { nodeName: node, driveCores: 1, numDrives: 20, driveCapacity: 100 },
      guid,
    );
    const refused = await waitForPhase(ref, 'Refused', 120_000);
    expect(condition(refused, 'Ready')).toMatchObject({ status: 'False', reason: 'InvalidDriveSharingConfig' });
    expect(condition(refused, 'Stalled')).toMatchObject({ status: 'True', reason: 'InvalidDriveSharingConfig' });
    const verdict = await kstatusOfOne(refused);
    expect(verdict.status).toBe('Failed');
    expect(verdict.message).toMatch(/numDrives 20 asks for 20 virtual drives; at most 8 per drive core/);
    // A pipeline waiting for it to be Ready times out, as it must.
    const waited = await kubectl([
      'wait',
      '--for=condition=Ready',
      `wekacontainer/${ref.name}`,
      '-n',
      ref.namespace,
      '--timeout=3s',
    ]);
    expect(waited.code).not.toBe(0);
    expect(waited.stderr).toMatch(/timed out/);

    await deleteDriveContainer(op, ref, uid);
    await waitGone(ref);
  });
});

describe('kstatus on a WekaManualOperation', () => {
  it('Current once it succeeded; Failed, with why, when no node matched', { timeout: 180_000 }, async () => {
    const ns = await uniqueNamespace('kstatus-op');
    const selector = { 'weka.io/drive-sharing': uniqueName('kstatus') };
    await addNode({
      name: uniqueName('kstatus-op'),
      labels: selector,
      devices: [{ path: '/dev/nvme0n1', capacityGiB: 1920, type: 'TLC' }],
    });
    const signs = { namespace: ns, name: 'signs' };
    await startSignDrivesOperation(op, signs, {
      type: 'device-paths',
      nodeSelector: selector,
      devicePaths: ['/dev/nvme0n1'],
      shared: true,
    });
    const done = await waitFinished(signs);
    expect(done.status?.phase).toBe('Succeeded');
    expect(condition(done, 'Ready')?.status).toBe('True');
    expect((await kstatusOfOne(done)).status).toBe('Current');

    const none = { namespace: ns, name: 'matches-nothing' };
    await startSignDrivesOperation(op, none, {
      type: 'device-paths',
      nodeSelector: { 'weka.io/drive-sharing': uniqueName('nothing') },
      devicePaths: ['/dev/nvme0n1'],
      shared: true,
    });
    const failed = await waitFinished(none);
    expect(failed.status?.phase).toBe('Failed');
    expect(condition(failed, 'Ready')?.status).toBe('False');
    const verdict = await kstatusOfOne((await readOperation(none))!);
    expect(verdict.status).toBe('Failed');
    expect(verdict.message).toMatch(/no node matches/);
  });
});

describe('kstatus on a WekaCluster', () => {
  it('InProgress while it forms and while its members grow, Current once Ready', { timeout: 420_000 }, async () => {
    const pool = uniqueName('pool');
    await Promise.all([0, 1].map(() => sharedDrivesNode(CLUSTER_DEVICES, 'kstatus-cl', { [POOL_LABEL]: pool })));
    const ref = { namespace: await uniqueNamespace('kstatus-cl'), name: 'tenant' };
    const { handle } = await startWekaCluster(op, ref, pool, { driveContainers: 2, ...SMALL_MEMBER });
    const read = () => readCluster(ref.namespace, ref.name);
    const { last: ready, seen } = await watchUntil<WekaCluster>('the cluster to be Ready', read, (c) => {
      return c.status?.phase === 'Ready';
    });
    const forming = seen.filter((c) => c.status?.phase !== 'Ready');
    expect(forming.length).toBeGreaterThan(0);
    expect((await kstatusOf(forming)).map((r) => r.status)).toEqual(forming.map(() => 'InProgress'));
    expect((await kstatusOfOne(ready)).status).toBe('Current');

    // A larger template: every member grows; the cluster is at work until each has.
    await kubeConfig()
      .makeApiClient(CustomObjectsApi)
      .patchNamespacedCustomObject(
        {
          ...WEKA_CLUSTERS,
          ...ref,
          body: { spec: { dynamicTemplate: { ...SMALL_MEMBER, driveContainers: 2, containerCapacity: 4400 } } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    await handle.signal(specChangedSignal);
    // Each look pairs the cluster with whether every member holds the larger template yet.
    const during: WekaCluster[] = [];
    const regrown = await eventually(
      'every member grown and the cluster Ready',
      async () => {
        const members = await listContainers(kubeConfig(), ref.namespace);
        const cluster = await read();
        if (!cluster) return undefined;
        const grown =
          members.length === 2 &&
          members.every((m) => {
            const gib = (m.status?.allocations?.virtualDrives ?? []).reduce((sum, d) => sum + d.capacityGiB, 0);
            return m.status?.phase === 'Ready' && gib >= 4400;
          });
        if (!grown) during.push(cluster);
        // Ready for the larger template: a status of the generation before it says Ready for the
        // smaller one, and kstatus reads it as InProgress (observedGeneration behind generation).
        const observed = cluster.status?.observedGeneration === cluster.metadata?.generation;
        return grown && observed && cluster.status?.phase === 'Ready' ? cluster : undefined;
      },
      240_000,
      { intervalMs: 100 },
    );
    expect(during.length).toBeGreaterThan(0);
    expect((await kstatusOf(during)).map((r) => r.status)).toEqual(during.map(() => 'InProgress'));
    // Whole, so that a failure shows kstatus's reason with it.
    expect(await kstatusOfOne(regrown)).toMatchObject({ status: 'Current' });
  });
});

describe('kstatus on a WekaCluster whose members are refused', () => {
  it(
    'Failed, saying which members and why to look at them, when its image is not one the operator may run',
    { timeout: 240_000 },
    async () => {
      const pool = uniqueName('pool');
      await sharedDrivesNode(CLUSTER_DEVICES, 'kstatus-img', { [POOL_LABEL]: pool });
      const ref = { namespace: await uniqueNamespace('kstatus-img'), name: 'tenant' };
      await startWekaCluster(
        op,
        ref,
        pool,
        { driveContainers: 1, ...SMALL_MEMBER },
        { image: 'quay.io/someone-else/weka-in-container:4.4.10.183' },
      );
      const refused = await eventually(
        'the cluster to say its member is refused',
        async () => {
          const c = await readCluster(ref.namespace, ref.name);
          return c?.status?.phase === 'Refused' ? c : undefined;
        },
        120_000,
        {
          progress: async () => {
            const c = await readCluster(ref.namespace, ref.name);
            const m = await readContainer({ namespace: ref.namespace, name: 'tenant-drive-0' });
            return `cluster ${c?.status?.phase} ${JSON.stringify(c?.status?.conditions?.map((x) => [x.type, x.status, x.reason]))}; member ${m?.status?.phase} ${JSON.stringify(m?.status?.conditions?.map((x) => [x.type, x.status, x.reason, x.message.slice(0, 80)]))}`;
          },
        },
      );
      expect(condition(refused, 'Stalled')).toMatchObject({ status: 'True', reason: 'MembersRefused' });
      const verdict = await kstatusOfOne(refused);
      expect(verdict.status).toBe('Failed');
      expect(verdict.message).toMatch(/drive containers tenant-drive-0 are refused/);
      const member = await readContainer({ namespace: ref.namespace, name: 'tenant-drive-0' });
      expect(member?.status?.phase).toBe('Refused');
      expect(condition(member, 'Stalled')?.reason).toBe('ImageNotAllowed');
      expect((await kstatusOfOne(member!)).message).toMatch(/is not allowed: the operator creates pods only from/);
    },
  );
});
