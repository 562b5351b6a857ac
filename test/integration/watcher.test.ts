// The CR watcher on the real apiserver and Temporal, with an in-process worker: it adds the
// finalizer, starts exactly one workflow per object (even with two watchers, or after a
// restart), signals spec changes and deletions, and catches up on what it missed while stopped.
import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1ManagedFieldsEntry,
} from '@kubernetes/client-node';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { OperatorMetrics } from '../../deploy/operator/metrics.js';
import { startWatcher, type RunningWatcher, type WatcherOptions } from '../../deploy/operator/watcher/watcher.js';
import { FINALIZER, FIELD_MANAGER, type ObjectRef } from '../../src/api/names.js';
import { eventually, sleep } from '../support/async.js';
import { kubeConfig, uniqueNamespace } from '../support/harness.js';
import { createContainerObject, WEKA_CONTAINERS } from '../support/containers.js';
import {
  readContainer,
  sharedDrivesNode,
  startTestOperator,
  waitForPhase,
  waitGone,
  type ContainerSpecInput,
  type TestOperator,
} from '../support/operator.js';
import { startListHoldingProxy, type ListHoldingProxy } from '../support/list-holding-proxy.js';
import { createWekaCluster, showDevice } from '../support/simulator.js';
import { containerWorkflowId } from '../../src/protocol.js';

const DEVICES = [
  { path: '/dev/nvme0n1', capacityGiB: 7680, type: 'TLC' as const },
  { path: '/dev/nvme1n1', capacityGiB: 7680, type: 'TLC' as const },
  { path: '/dev/nvme2n1', capacityGiB: 15360, type: 'QLC' as const },
];
const SPEC = { driveCores: 2, containerCapacity: 2000, driveTypesRatio: { tlc: 1, qlc: 1 } };

let op: TestOperator;
let node: string;
let guid: string;
let running: RunningWatcher[] = [];

beforeAll(async () => {
  op = await startTestOperator();
  node = await sharedDrivesNode(DEVICES, 'watch-node');
  guid = await createWekaCluster(node, 'watched');
});
afterEach(async () => {
  await Promise.all(running.map((w) => w.stop()));
  running = [];
});
afterAll(async () => {
  await op?.stop();
});

async function watcher(
  options: Pick<WatcherOptions, 'resyncMs' | 'endedSweepMs' | 'metrics' | 'backoff'> & { kubeConfig?: KubeConfig } = {},
): Promise<RunningWatcher> {
  const w = startWatcher({
    kubeConfig: kubeConfig(),
    temporal: op.client,
    taskQueue: op.deps.taskQueue,
    logger: pino({ level: process.env.WATCHER_TEST_LOG ?? 'warn' }),
    ...options,
  });
  running.push(w);
  await w.ready;
  return w;
}

async function stop(w: RunningWatcher): Promise<void> {
  await w.stop();
  running = running.filter((x) => x !== w);
}

/** Runs `body` with a proxy in front of the apiserver; the watchers stop before the proxy does. */
async function throughProxy(body: (proxy: ListHoldingProxy) => Promise<void>): Promise<void> {
  const proxy = await startListHoldingProxy();
  try {
    await body(proxy);
  } finally {
    await Promise.all(running.map((w) => w.stop()));
    running = [];
    await proxy.stop();
  }
}

/** A drive WekaContainer as a user creates it (no finalizer, no workflow), in a standalone cluster. */
async function createContainer(
  ref: ObjectRef,
  spec: Omit<ContainerSpecInput, 'nodeName'>,
  finalizers: string[] = [],
): Promise<string> {
  return (
    await createContainerObject(kubeConfig(), ref, { nodeName: node, ...spec }, { finalizers, clusterGUID: guid })
  ).metadata.uid!;
}

async function deleteContainer(ref: ObjectRef): Promise<void> {
  await kubeConfig()
    .makeApiClient(CustomObjectsApi)
    .deleteNamespacedCustomObject({ ...WEKA_CONTAINERS, ...ref });
}

/** Every run (running or closed) Temporal has for the workflow id. */
async function runsOf(workflowId: string): Promise<string[]> {
  const runs: string[] = [];
  for await (const wf of op.client.workflow.list({ query: `WorkflowId="${workflowId}"` })) runs.push(wf.runId);
  return runs;
}

async function eventReasons(ref: ObjectRef): Promise<string[]> {
  const events = await kubeConfig().makeApiClient(CoreV1Api).listNamespacedEvent({ namespace: ref.namespace });
  return events.items.filter((e) => e.involvedObject.name === ref.name).map((e) => e.reason ?? '');
}

async function virtualDrivesOnNode(): Promise<string[]> {
  const all = await Promise.all(DEVICES.map((d) => showDevice(node, d.path)));
  return all.flatMap((d) => d.virtualDrives.map((v) => v.virtualUUID));
}

/** Waits (a minute at most) for a new run of the container's workflow, running; returns its id. */
async function runningAgain(uid: string, previousRun: string): Promise<string> {
  return eventually(
    'the workflow running again',
    async () => {
      const d = await op.client.workflow.getHandle(containerWorkflowId(uid)).describe();
      return d.runId !== previousRun && d.status.name === 'RUNNING' ? d.runId : undefined;
    },
    60_000,
  );
}

describe('the CR watcher', () => {
  it(
    'adds the finalizer, starts one workflow, writes its id, and the container becomes Ready',
    { timeout: 180_000 },
    async () => {
      await watcher();
      const ref = { namespace: await uniqueNamespace('watch'), name: 'drive-0' };
      const uid = await createContainer(ref, SPEC);

      const ready = await waitForPhase(ref, 'Ready', 150_000);
      expect(ready.metadata.finalizers).toEqual([FINALIZER]);
      expect(ready.status?.workflowID).toBe(containerWorkflowId(uid));
      expect(ready.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
      // The watcher owns status.workflowID through its own field manager, and nothing in spec.
      const managedFields = (ready.metadata as { managedFields?: V1ManagedFieldsEntry[] }).managedFields ?? [];
      const managed = managedFields.filter((m) => m.manager === FIELD_MANAGER.watcher);
      expect(managed.find((m) => m.subresource === 'status')?.fieldsV1).toEqual({ 'f:status': { 'f:workflowID': {} } });
      expect(managed.find((m) => m.subresource === undefined)?.fieldsV1).toEqual({
        'f:metadata': { 'f:finalizers': { '.': {}, [`v:"${FINALIZER}"`]: {} } },
      });
      expect(await runsOf(containerWorkflowId(uid))).toHaveLength(1);
      const description = await op.client.workflow.getHandle(containerWorkflowId(uid)).describe();
      expect(await description.staticSummary()).toBe(`Drive container ${ref.namespace}/drive-0 on node ${node}`);
      expect(description.memo).toMatchObject({ kind: 'WekaContainer', namespace: ref.namespace, name: 'drive-0', uid });
      expect(await eventReasons(ref)).toContain('WorkflowStarted');

      await deleteContainer(ref);
      await waitGone(ref, 120_000);
    },
  );

  it(
    'starts exactly one workflow and records each Event once with two watchers at once and after a watcher restart',
    { timeout: 180_000 },
    async () => {
      const [a] = await Promise.all([watcher(), watcher()]);
      const ref = { namespace: await uniqueNamespace('watch-two'), name: 'drive-0' };
      const uid = await createContainer(ref, SPEC);
      const ready = await waitForPhase(ref, 'Ready', 150_000);
      expect(ready.metadata.finalizers).toEqual([FINALIZER]);
      // Both watchers wrote the workflow id; the Event that says so is there once.
      expect((await eventReasons(ref)).filter((r) => r === 'WorkflowStarted')).toHaveLength(1);

      await stop(a!);
      // A restarted watcher lists everything again and, once ready, has started (use-existing) again.
      await watcher();
      const runs = await runsOf(containerWorkflowId(uid));
      expect(runs).toHaveLength(1);
      const description = await op.client.workflow.getHandle(containerWorkflowId(uid)).describe();
      expect(description.status.name).toBe('RUNNING');
      expect(description.runId).toBe(runs[0]);

      await deleteContainer(ref);
      await waitGone(ref, 120_000);
      expect((await eventReasons(ref)).filter((r) => r === 'TeardownRequested')).toHaveLength(1);
    },
  );

  it(
    "takes a drive container its user labelled as the operator's like any other: Ready, and its deletion completes",
    { timeout: 180_000 },
    async () => {
      await watcher();
      const ref = { namespace: await uniqueNamespace('watch-label'), name: 'drive-0' };
      const labels = { 'app.kubernetes.io/managed-by': 'weka-drives-operator' };
      await createContainerObject(kubeConfig(), ref, { nodeName: node, ...SPEC }, { clusterGUID: guid, labels });
      const ready = await waitForPhase(ref, 'Ready', 150_000);
      expect(ready.metadata.finalizers).toEqual([FINALIZER]);
      await deleteContainer(ref);
      await waitGone(ref, 120_000);
    },
  );

  it('signals a spec change, and the waiting workflow proceeds to Ready', { timeout: 180_000 }, async () => {
    await watcher();
    const ref = { namespace: await uniqueNamespace('watch-spec'), name: 'no-cores' };
    await createContainer(ref, { containerCapacity: 2000, driveTypesRatio: { tlc: 1, qlc: 0 } });
    await eventually(
      'the refusal for the missing driveCores',
      async () => {
        const cond = (await readContainer(ref))?.status?.conditions?.find((c) => c.type === 'Allocated');
        return cond?.status === 'False' && cond.reason === 'InvalidDriveSharingConfig' ? true : undefined;
      },
      120_000,
    );

    // driveCores was never set, so setting it is allowed. Only the watcher's signal wakes the workflow.
    await kubeConfig()
      .makeApiClient(CustomObjectsApi)
      .patchNamespacedCustomObject(
        { ...WEKA_CONTAINERS, ...ref, body: { spec: { driveCores: 2 } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    const ready = await waitForPhase(ref, 'Ready', 150_000);
    expect(ready.status?.allocations?.virtualDrives?.length).toBeGreaterThanOrEqual(2);
    expect(await eventReasons(ref)).toContain('SpecChangeSignalled');

    await deleteContainer(ref);
    await waitGone(ref, 120_000);
  });

  it(
    'signals a raised containerCapacity to a Ready container, which grows in place',
    { timeout: 180_000 },
    async () => {
      await watcher();
      const ref = { namespace: await uniqueNamespace('watch-grow'), name: 'drive-0' };
      await createContainer(ref, SPEC);
      const before = (await waitForPhase(ref, 'Ready', 150_000)).status?.allocations?.virtualDrives ?? [];

      // Nothing but the watcher tells the parked workflow that the spec changed.
      await kubeConfig()
        .makeApiClient(CustomObjectsApi)
        .patchNamespacedCustomObject(
          { ...WEKA_CONTAINERS, ...ref, body: { spec: { containerCapacity: 3000 } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
      const grown = await eventually(
        'the container Ready with 3000 GiB, every drive added',
        async () => {
          const c = await readContainer(ref);
          const drives = c?.status?.allocations?.virtualDrives ?? [];
          const gib = drives.reduce((sum, d) => sum + d.capacityGiB, 0);
          const added = c?.status?.addedVirtualDrives?.length ?? 0;
          return c?.status?.phase === 'Ready' && gib === 3000 && added === drives.length ? drives : undefined;
        },
        120_000,
      );
      expect(grown.slice(0, before.length)).toEqual(before);
      expect(await eventReasons(ref)).toContain('SpecChangeSignalled');

      await deleteContainer(ref);
      await waitGone(ref, 120_000);
    },
  );

  it(
    'tears down on deletion: virtual drives removed, then the finalizer, then the object is gone',
    { timeout: 180_000 },
    async () => {
      await watcher();
      const ref = { namespace: await uniqueNamespace('watch-delete'), name: 'drive-0' };
      const uid = await createContainer(ref, SPEC);
      const ready = await waitForPhase(ref, 'Ready', 150_000);
      const mine = (ready.status?.allocations?.virtualDrives ?? []).map((d) => d.virtualUUID);
      expect(mine.length).toBeGreaterThan(0);
      expect(await virtualDrivesOnNode()).toEqual(expect.arrayContaining(mine));

      await deleteContainer(ref);
      // While the teardown runs, the object stays, held by the finalizer.
      const deleting = await readContainer(ref);
      expect(deleting?.metadata.deletionTimestamp).toBeDefined();
      await waitGone(ref, 120_000);
      await op.client.workflow.getHandle(containerWorkflowId(uid)).result();
      const left = await virtualDrivesOnNode();
      for (const v of mine) expect(left).not.toContain(v);
      expect(await eventReasons(ref)).toContain('TeardownRequested');
    },
  );

  it(
    'starts a workflow terminated while its object exists again within a minute, with a Warning Event, and the container keeps its drives',
    { timeout: 240_000 },
    async () => {
      await watcher();
      const ref = { namespace: await uniqueNamespace('watch-ended'), name: 'drive-0' };
      const uid = await createContainer(ref, SPEC);
      const ready = await waitForPhase(ref, 'Ready', 150_000);
      const drives = ready.status!.allocations!.virtualDrives!.map((d) => d.virtualUUID).sort();
      const handle = op.client.workflow.getHandle(containerWorkflowId(uid));
      const firstRun = (await handle.describe()).runId;

      // What the Temporal UI's Terminate does: the run ends at once, with no cleanup of its own.
      const terminatedAt = Date.now();
      await handle.terminate('terminated from the Temporal UI');
      const secondRun = await runningAgain(uid, firstRun);
      console.log(`terminated workflow running again after ${Date.now() - terminatedAt} ms`);
      expect(await runsOf(containerWorkflowId(uid))).toEqual(expect.arrayContaining([firstRun, secondRun]));
      const events = await kubeConfig().makeApiClient(CoreV1Api).listNamespacedEvent({ namespace: ref.namespace });
      const ended = events.items.filter((e) => e.involvedObject.name === ref.name && e.reason === 'WorkflowEnded');
      expect(ended).toHaveLength(1);
      expect(ended[0]!.type).toBe('Warning');
      expect(ended[0]!.message).toContain(firstRun);
      expect(ended[0]!.message).toMatch(/terminated/);

      // The new run picks up the recorded state: same drives, none released, Ready again.
      const again = await waitForPhase(ref, 'Ready', 120_000);
      expect(again.status!.allocations!.virtualDrives!.map((d) => d.virtualUUID).sort()).toEqual(drives);
      expect((await virtualDrivesOnNode()).filter((v) => drives.includes(v)).sort()).toEqual(drives);

      await deleteContainer(ref);
      await waitGone(ref, 120_000);
      expect((await virtualDrivesOnNode()).filter((v) => drives.includes(v))).toEqual([]);
    },
  );

  it(
    'makes no start call for a running workflow at a re-list, and starts each again when Temporal has fewer running than it started',
    { timeout: 240_000 },
    async () => {
      const metrics = new OperatorMetrics();
      const starts = async () =>
        (await metrics.watcherActions.get()).values
          .filter(
            (v) => v.labels.action === 'startWorkflow' && v.labels.kind === 'WekaContainer' && v.labels.result === 'ok',
          )
          .reduce((sum, v) => sum + v.value, 0);
      // Re-lists every 2 s; the ended-workflow sweep is kept out of the way.
      await watcher({ resyncMs: 2_000, endedSweepMs: 3_600_000, metrics });
      const ref = { namespace: await uniqueNamespace('watch-relist'), name: 'drive-0' };
      const uid = await createContainer(ref, SPEC);
      await waitForPhase(ref, 'Ready', 150_000);
      const before = await starts();
      await sleep(7_000);
      expect(await starts()).toBe(before);

      // A run gone without the sweep noticing (a replaced Temporal store looks the same to a
      // re-list): fewer running than started, so the next re-list starts each object again.
      const handle = op.client.workflow.getHandle(containerWorkflowId(uid));
      const firstRun = (await handle.describe()).runId;
      await handle.terminate('gone without a trace');
      await runningAgain(uid, firstRun);
      await waitForPhase(ref, 'Ready', 120_000);
      await deleteContainer(ref);
      await waitGone(ref, 120_000);
    },
  );

  it(
    'keeps watching while it lists again: a deletion during a slow re-list is torn down before the list answers, and the older copy in that list does not start it again',
    { timeout: 240_000 },
    () =>
      throughProxy(async (proxy) => {
        await watcher({ kubeConfig: proxy.kubeConfig, resyncMs: 3_000, endedSweepMs: 3_600_000 });
        const ref = { namespace: await uniqueNamespace('watch-slow-list'), name: 'drive-0' };
        const uid = await createContainer(ref, SPEC);
        await waitForPhase(ref, 'Ready', 150_000);

        // A re-list whose answer (the container still Ready) is held: at 10,000 objects a list
        // takes seconds, and a deletion meanwhile must not wait for it.
        const slowList = proxy.holdLists(WEKA_CONTAINERS.plural);
        try {
          await slowList.listed;
          await deleteContainer(ref);
          await waitGone(ref, 90_000);
        } finally {
          slowList.release();
        }
        // The held list, handled now, and the re-lists after it find the teardown done: one run only.
        await sleep(7_000);
        expect(await runsOf(containerWorkflowId(uid))).toHaveLength(1);
      }),
  );

  it(
    'lists again only beside a running watch: a deletion torn down while the watch was cut is not signalled again when it resumes',
    { timeout: 240_000 },
    () =>
      throughProxy(async (proxy) => {
        await watcher({
          kubeConfig: proxy.kubeConfig,
          resyncMs: 2_000,
          endedSweepMs: 3_600_000,
          backoff: { initialMs: 10_000, maxMs: 10_000, jitter: false },
        });
        const ref = { namespace: await uniqueNamespace('watch-cut'), name: 'drive-0' };
        const uid = await createContainer(ref, SPEC);
        await waitForPhase(ref, 'Ready', 150_000);

        // The watch is down for 40 s, its last version from before the deletion. A list taken
        // meanwhile (and the teardown it would start) not followed by a watch from the list's own
        // version would have the resumed watch replay the deletion as news once the object is gone.
        const cut = proxy.cutWatches();
        await deleteContainer(ref);
        await sleep(40_000);
        cut.restore();
        await waitGone(ref, 120_000);
        // The watch is back within 10 s of the restore; what it replays is handled at once.
        await sleep(20_000);
        expect(await runsOf(containerWorkflowId(uid))).toHaveLength(1);
      }),
  );

  it('catches up after being stopped: a deletion it missed is still torn down', { timeout: 240_000 }, async () => {
    const first = await watcher();
    const ref = { namespace: await uniqueNamespace('watch-missed'), name: 'drive-0' };
    const uid = await createContainer(ref, SPEC);
    await waitForPhase(ref, 'Ready', 150_000);
    await stop(first);

    await deleteContainer(ref);
    // Nobody tells the workflow while no watcher runs: the object waits, still Ready, held by the finalizer.
    await sleep(3_000);
    const waiting = await readContainer(ref);
    expect(waiting?.metadata.deletionTimestamp).toBeDefined();
    expect(waiting?.status?.phase).toBe('Ready');

    await watcher();
    await waitGone(ref, 120_000);
    expect(await runsOf(containerWorkflowId(uid))).toHaveLength(1);
  });

  it(
    'tears down an object created and deleted while no watcher ran, whose workflow never started',
    { timeout: 180_000 },
    async () => {
      const ref = { namespace: await uniqueNamespace('watch-never'), name: 'drive-0' };
      // A finalizer is already there (a manifest carried it, or a watcher died right after adding it).
      const uid = await createContainer(ref, SPEC, [FINALIZER]);
      await deleteContainer(ref);
      expect((await readContainer(ref))?.metadata.deletionTimestamp).toBeDefined();
      expect(await runsOf(containerWorkflowId(uid))).toHaveLength(0);

      await watcher();
      await waitGone(ref, 120_000);
      // Signal-with-start ran the workflow once, straight into its teardown.
      expect(await runsOf(containerWorkflowId(uid))).toHaveLength(1);
      await op.client.workflow.getHandle(containerWorkflowId(uid)).result();
    },
  );

  it('leaves alone containers of other modes and the ones the operator created', { timeout: 60_000 }, async () => {
    await watcher();
    const ns = await uniqueNamespace('watch-ignored');
    const custom = kubeConfig().makeApiClient(CustomObjectsApi);
    const body = (name: string, mode: string, labels: Record<string, string> = {}) => ({
      apiVersion: 'weka.weka.io/v1alpha1',
      kind: 'WekaContainer',
      metadata: { name, labels },
      spec: { mode, image: 'quay.io/weka.io/weka-in-container:test', nodeName: node },
    });
    await custom.createNamespacedCustomObject({
      ...WEKA_CONTAINERS,
      namespace: ns,
      body: body('compute-0', 'compute'),
    });
    await custom.createNamespacedCustomObject({
      ...WEKA_CONTAINERS,
      namespace: ns,
      body: body('proxy-0', 'ssdproxy', { 'app.kubernetes.io/managed-by': 'weka-drives-operator' }),
    });
    // A drive container created after them: once it has its finalizer, the watcher has seen the others too.
    await createContainer({ namespace: ns, name: 'drive-0' }, SPEC);
    await eventually('the drive container to get its finalizer', async () =>
      (await readContainer({ namespace: ns, name: 'drive-0' }))?.metadata.finalizers?.includes(FINALIZER)
        ? true
        : undefined,
    );
    for (const name of ['compute-0', 'proxy-0']) {
      const c = await readContainer({ namespace: ns, name });
      expect(c?.metadata.finalizers ?? []).toEqual([]);
      expect(c?.status?.workflowID).toBeUndefined();
      expect(await runsOf(containerWorkflowId(c!.metadata.uid!))).toHaveLength(0);
    }
    await deleteContainer({ namespace: ns, name: 'drive-0' });
    await waitGone({ namespace: ns, name: 'drive-0' }, 120_000);
  });
});
