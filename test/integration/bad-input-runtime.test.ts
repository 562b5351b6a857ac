// Bad input that only shows up while a drive container's workflow runs: valid WekaContainers that
// cannot be satisfied yet, a malformed shared-drives annotation, truncated CLI output, a node that
// disappears. A table: every row says where the user sees the message (the container's condition
// and a Warning Event, or a WekaManualOperation's results), checks that nothing was lost (no
// allocation, no virtual drive signed, a neighbour keeps its drives, an annotation is not
// overwritten), and, where something can fix it, that the container then proceeds to Ready.
// Rejections before anything runs (the apiserver, the typed Weka calls) are in bad-input.test.ts.
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { KubeExecTransport } from '../../activities/exec/kube-exec.js';
import type { ExecOptions, ExecResult, ExecTarget, ExecTransport } from '../../activities/exec/transport.js';
import { decodeSharedDrivesAnnotation, SHARED_DRIVES_ANNOTATION } from '../../src/annotations/index.js';
import type { Condition, WekaContainer } from '../../src/api/index.js';
import { proxyName, type ObjectRef } from '../../src/api/names.js';
import { eventually } from '../support/async.js';
import { warningEvent } from '../support/events.js';
import { WEKA_CONTAINERS } from '../support/containers.js';
import { kubeConfig, removeNode, uniqueName, uniqueNamespace } from '../support/harness.js';
import { readNode, startSignDrivesOperation, waitFinished } from '../support/manual-operation.js';
import {
  type ContainerSpecInput,
  createDriveContainer,
  deleteDriveContainer,
  podExists,
  readContainer,
  sharedDrivesNode,
  useTestOperator,
  waitForPhase,
  waitGone,
} from '../support/operator.js';
import { changeCounts, createWekaCluster, showDevice, sim, simulatorLog } from '../support/simulator.js';
import { containerWorkflowId, specChangedSignal } from '../../src/protocol.js';

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
/** A refused allocation is asked again at least this often (CAPACITY_RETRY in workflows/drive-container/run.ts), plus slack. */
const RETRY_WINDOW_MS = 75_000;
const ROW_TIMEOUT_MS = 300_000;
/** A step that failed is tried again on its own after 30 s (workflows/drive-container/bring-up.ts), plus slack. */
const ERROR_RETRY_WINDOW_MS = 75_000;

/**
 * The real exec transport, except that `weka-sign-drive list` in the listed pods prints only the
 * first half of its JSON: what a tool killed mid-print, or a broken pipe, looks like.
 */
class TruncatingExec implements ExecTransport {
  readonly pods = new Set<string>();
  constructor(private readonly inner: ExecTransport) {}

  async run(target: ExecTarget, argv: readonly string[], opts?: ExecOptions): Promise<ExecResult> {
    const result = await this.inner.run(target, argv, opts);
    if (!this.pods.has(`${target.namespace}/${target.pod}`) || argv[0] !== 'weka-sign-drive' || argv[1] !== 'list')
      return result;
    return { ...result, stdout: result.stdout.slice(0, Math.floor(result.stdout.length / 2)) };
  }
}

const exec = new TruncatingExec(KubeExecTransport.fromKubeConfig(kubeConfig()));
const op = useTestOperator({ exec });

// ---- what the user sees -------------------------------------------------------------------

/** Waits for the container's condition of this type to be False with this reason. */
async function refusal(ref: ObjectRef, type: string, reason: string, timeoutMs = RETRY_WINDOW_MS): Promise<Condition> {
  return eventually(
    `${ref.name}: condition ${type}=False reason ${reason}`,
    async () => {
      const c = (await readContainer(ref))?.status?.conditions?.find((x) => x.type === type);
      return c?.status === 'False' && c.reason === reason ? c : undefined;
    },
    timeoutMs,
  );
}

// ---- what must not be lost ----------------------------------------------------------------

async function allocationOf(ref: ObjectRef): Promise<string[]> {
  return ((await readContainer(ref))?.status?.allocations?.virtualDrives ?? []).map(
    (d) => `${d.virtualUUID}@${d.physicalUUID}:${d.capacityGiB}`,
  );
}

/** Virtual drives signed on the node's devices, as the simulator has them. */
async function virtualDrivesOn(node: string, devices: string[]): Promise<string[]> {
  const infos = await Promise.all(devices.map((d) => showDevice(node, d)));
  return infos.flatMap((i) => i.virtualDrives.map((v) => v.virtualUUID)).sort();
}

async function virtualAdds(node: string): Promise<number> {
  return [...changeCounts(await simulatorLog(node), 'virtual-add', 'virtualUUID').values()].reduce((a, b) => a + b, 0);
}

// ---- set-up and changes -------------------------------------------------------------------

interface Case {
  node: string;
  guid: string;
  labels: Record<string, string>;
  ns: string;
  ref: ObjectRef;
  uid: string;
}

/** A node sharing these drives (signed, in its annotation, selectable by a label of its own). */
async function nodeWith(
  devices: Parameters<typeof sharedDrivesNode>[0],
  prefix: string,
): Promise<Omit<Case, 'ref' | 'uid'>> {
  const labels = { 'weka.io/drive-sharing': uniqueName('bad-input') };
  const node = await sharedDrivesNode(devices, prefix, labels);
  const guid = await createWekaCluster(node, uniqueName('cluster'));
  return { node, guid, labels, ns: await uniqueNamespace(prefix) };
}

async function container(
  base: Omit<Case, 'ref' | 'uid'>,
  name: string,
  spec: Omit<ContainerSpecInput, 'nodeName'>,
): Promise<Case> {
  const ref = { namespace: base.ns, name };
  const { uid } = await createDriveContainer(op, ref, { nodeName: base.node, ...spec }, base.guid);
  return { ...base, ref, uid };
}

/** A new drive is plugged into the node and signed by a sign-drives operation, as an admin would. */
async function plugInAndSign(
  c: Case,
  device: { path: string; capacityGiB: number; type: 'TLC' | 'QLC' },
): Promise<void> {
  await sim(c.node, 'init-node', '--device', `${device.path}:${device.capacityGiB}:${device.type}`);
  const ref = { namespace: c.ns, name: uniqueName('sign') };
  await startSignDrivesOperation(op, ref, {
    type: 'device-paths',
    nodeSelector: c.labels,
    devicePaths: [device.path],
    shared: true,
  });
  expect((await waitFinished(ref)).status?.phase).toBe('Succeeded');
}

async function patchNodeAnnotation(node: string, text: string): Promise<void> {
  await kubeConfig()
    .makeApiClient(CoreV1Api)
    .patchNode({ name: node, body: { metadata: { annotations: { [SHARED_DRIVES_ANNOTATION]: text } } } }, mergePatch);
}

async function annotationOf(node: string): Promise<string | undefined> {
  return (await readNode(node)).metadata?.annotations?.[SHARED_DRIVES_ANNOTATION];
}

/** A spec change the CRD allows (the image), signalled as the watcher would. */
async function changeImage(c: Case): Promise<void> {
  await kubeConfig()
    .makeApiClient(CustomObjectsApi)
    .patchNamespacedCustomObject(
      { ...WEKA_CONTAINERS, ...c.ref, body: { spec: { image: 'quay.io/weka.io/weka-in-container:retry' } } },
      mergePatch,
    );
  await op.client.workflow.getHandle(containerWorkflowId(c.uid)).signal(specChangedSignal);
}

async function deleteAndWaitGone(c: Case, timeoutMs = 90_000): Promise<void> {
  await deleteDriveContainer(op, c.ref, c.uid);
  await waitGone(c.ref, timeoutMs);
}

// ---- the table ----------------------------------------------------------------------------

interface Row<C> {
  name: string;
  /** Where the user sees what is wrong. */
  where: string;
  setup(): Promise<C>;
  seesMessage(c: C): Promise<void>;
  nothingLost(c: C): Promise<void>;
  /** The change that lets it through and the container reaching Ready; or the clean deletion when no change can. */
  resolves(c: C): Promise<void>;
}

interface AnyRow {
  name: string;
  where: string;
  run(): Promise<void>;
}

function row<C>(r: Row<C>): AnyRow {
  return {
    name: r.name,
    where: r.where,
    async run() {
      const c = await r.setup();
      await r.seesMessage(c);
      await r.nothingLost(c);
      await r.resolves(c);
    },
  };
}

const TLC_1920 = { path: '/dev/nvme0n1', capacityGiB: 1920, type: 'TLC' as const };
const TLC_3840 = { path: '/dev/nvme0n1', capacityGiB: 3840, type: 'TLC' as const };

const ROWS: AnyRow[] = [
  row({
    name: "a container larger than the node's free capacity waits, and goes through once a new drive is signed",
    where: 'condition Allocated=False InsufficientDriveCapacity + Warning Event',
    async setup() {
      const base = await nodeWith([TLC_1920], 'too-little');
      // A neighbour takes 768 of the 1920 GiB first: 1152 GiB stay usable.
      const neighbour = await container(base, 'neighbour', {
        driveCores: 2,
        containerCapacity: 768,
        driveTypesRatio: { tlc: 1, qlc: 0 },
      });
      await waitForPhase(neighbour.ref, 'Ready', 90_000);
      const neighbourDrives = await allocationOf(neighbour.ref);
      const big = await container(base, 'big', {
        driveCores: 2,
        containerCapacity: 2400,
        driveTypesRatio: { tlc: 1, qlc: 0 },
      });
      return { big, neighbour, neighbourDrives };
    },
    async seesMessage({ big }) {
      const cond = await refusal(big.ref, 'Allocated', 'InsufficientDriveCapacity');
      expect(cond.message).toMatch(/need 2400 GiB, but the node's TLC drives have 1152 GiB usable/);
      expect(await warningEvent(big.ref, 'InsufficientDriveCapacity')).toBe(cond.message);
      expect((await readContainer(big.ref))?.status?.phase).toBe('Allocating');
    },
    async nothingLost({ big, neighbour, neighbourDrives }) {
      expect(await allocationOf(big.ref)).toEqual([]);
      expect(await allocationOf(neighbour.ref)).toEqual(neighbourDrives);
      expect((await readContainer(neighbour.ref))?.status?.phase).toBe('Ready');
      expect(await virtualDrivesOn(big.node, [TLC_1920.path])).toEqual(
        neighbourDrives.map((d) => d.split('@')[0]).sort(),
      );
    },
    async resolves({ big, neighbour, neighbourDrives }) {
      const before = decodeSharedDrivesAnnotation((await annotationOf(big.node))!);
      await plugInAndSign(big, { path: '/dev/nvme1n1', capacityGiB: 1920, type: 'TLC' });
      const after = decodeSharedDrivesAnnotation((await annotationOf(big.node))!);
      if (!before.ok || !after.ok) throw new Error(`unreadable annotation on ${big.node}`);
      // Merged, not replaced: the drive the neighbour lives on is still listed, unchanged.
      expect(after.drives.map((d) => d.devicePath).sort()).toEqual(['/dev/nvme0n1', '/dev/nvme1n1']);
      expect(after.drives).toContainEqual(before.drives[0]);
      const ready = await waitForPhase(big.ref, 'Ready', RETRY_WINDOW_MS);
      expect((ready.status?.allocations?.virtualDrives ?? []).reduce((s, d) => s + d.capacityGiB, 0)).toBe(2400);
      expect(ready.status?.conditions?.find((x) => x.type === 'Allocated')?.status).toBe('True');
      expect(await allocationOf(neighbour.ref)).toEqual(neighbourDrives);
      await Promise.all([deleteAndWaitGone(big), deleteAndWaitGone(neighbour)]);
    },
  }),

  row({
    name: 'a container asking for QLC on a node without QLC drives waits, and goes through once a QLC drive is signed',
    where: 'condition Allocated=False InvalidDriveSharingConfig + Warning Event',
    async setup() {
      return container(await nodeWith([TLC_3840], 'no-qlc'), 'wants-qlc', {
        driveCores: 1,
        containerCapacity: 1536,
        driveTypesRatio: { tlc: 1, qlc: 1 },
      });
    },
    async seesMessage(c) {
      const cond = await refusal(c.ref, 'Allocated', 'InvalidDriveSharingConfig');
      expect(cond.message).toMatch(/no physical drive on the node is QLC/);
      expect(await warningEvent(c.ref, 'InvalidDriveSharingConfig')).toBe(cond.message);
    },
    async nothingLost(c) {
      expect(await allocationOf(c.ref)).toEqual([]);
      expect(await virtualAdds(c.node)).toBe(0);
    },
    // driveTypesRatio is set once (CEL), so the spec cannot be fixed in place: a TLC-only
    // container is a new object. What can change is the node: sign a QLC drive.
    async resolves(c) {
      await plugInAndSign(c, { path: '/dev/nvme1n1', capacityGiB: 7680, type: 'QLC' });
      const ready = await waitForPhase(c.ref, 'Ready', RETRY_WINDOW_MS);
      expect(new Set(ready.status?.allocations?.virtualDrives?.map((d) => d.type))).toEqual(new Set(['TLC', 'QLC']));
      await deleteAndWaitGone(c);
    },
  }),

  row({
    name: 'a container with more drive cores than its capacity can give 384 GiB each is refused, and deletes cleanly',
    where: 'condition Allocated=False InsufficientDriveCapacity (below the minimum) + Warning Event',
    async setup() {
      return container(await nodeWith([TLC_3840, { ...TLC_3840, path: '/dev/nvme1n1' }], 'many-cores'), 'eight-cores', {
        driveCores: 8,
        containerCapacity: 2000,
        driveTypesRatio: { tlc: 1, qlc: 0 },
      });
    },
    async seesMessage(c) {
      const cond = await refusal(c.ref, 'Allocated', 'InsufficientDriveCapacity');
      // 8 cores x 384 GiB = 3072 GiB > 2000 GiB, whatever the node has.
      expect(cond.message).toMatch(/2000 GiB.*8 TLC virtual drives of at least 384 GiB need 3072 GiB/);
      expect(await warningEvent(c.ref, 'InsufficientDriveCapacity')).toBe(cond.message);
    },
    async nothingLost(c) {
      expect(await allocationOf(c.ref)).toEqual([]);
      expect(await virtualAdds(c.node)).toBe(0);
    },
    // driveCores is set once, and no node capacity fixes a request below its own minimum: the
    // way out is a higher containerCapacity or a new container. This one must still go away cleanly.
    async resolves(c) {
      await deleteAndWaitGone(c);
      expect(await podExists(c.ns, c.ref.name)).toBe(false);
    },
  }),

  row({
    name: 'a malformed shared-drives annotation is named on the container, is not overwritten by signing, and the container proceeds once it is repaired',
    where: "condition Allocated=False MalformedAnnotation + Warning Event; the sign-drives operation's status.results",
    async setup() {
      const base = await nodeWith([TLC_3840], 'bad-annotation');
      const good = (await annotationOf(base.node))!;
      const broken = good.replace(/"capacityGiB":\d+/, '"capacityGiB":"3.75TiB"');
      expect(broken).not.toBe(good);
      await patchNodeAnnotation(base.node, broken);
      const c = await container(base, 'on-broken-node', {
        driveCores: 1,
        containerCapacity: 1000,
        driveTypesRatio: { tlc: 1, qlc: 0 },
      });
      return { ...c, good, broken };
    },
    async seesMessage(c) {
      const cond = await refusal(c.ref, 'Allocated', 'MalformedAnnotation');
      expect(cond.message).toContain(`node ${c.node}: annotation ${SHARED_DRIVES_ANNOTATION} entry 0`);
      expect(cond.message).toContain('capacityGiB must be a whole number above 0, got "3.75TiB"');
      expect(await warningEvent(c.ref, 'MalformedAnnotation')).toBe(cond.message);
    },
    async nothingLost(c) {
      expect(await allocationOf(c.ref)).toEqual([]);
      // Signing on that node refuses to rewrite an annotation it cannot read (it would drop drives).
      const ref = { namespace: c.ns, name: 'sign-on-broken-node' };
      await startSignDrivesOperation(op, ref, {
        type: 'device-paths',
        nodeSelector: c.labels,
        devicePaths: [TLC_3840.path],
        shared: true,
      });
      const done = await waitFinished(ref);
      expect(done.status?.phase).toBe('Failed');
      const error = done.status?.results?.find((r) => r.node === c.node)?.error ?? '';
      expect(error).toContain(`node ${c.node}: annotation ${SHARED_DRIVES_ANNOTATION} entry 0`);
      expect(error).toContain('not overwriting it');
      expect(await annotationOf(c.node)).toBe(c.broken);
    },
    async resolves(c) {
      await patchNodeAnnotation(c.node, c.good);
      await waitForPhase(c.ref, 'Ready', RETRY_WINDOW_MS);
      await deleteAndWaitGone(c);
    },
  }),

  row({
    name: 'a failure that looked final but was a glitch (truncated output, once) is tried again on its own, without a spec change',
    where: 'phase Error with condition Ready=False StepFailed, then Ready after the retry interval',
    async setup() {
      const base = await nodeWith([TLC_3840], 'glitch');
      exec.pods.add(`${base.ns}/glitch`);
      return container(base, 'glitch', {
        driveCores: 1,
        containerCapacity: 1000,
        driveTypesRatio: { tlc: 1, qlc: 0 },
      });
    },
    async seesMessage(c) {
      await refusal(c.ref, 'Ready', 'StepFailed', 90_000);
      await waitForPhase(c.ref, 'Error', 30_000);
    },
    async nothingLost(c) {
      expect(await virtualAdds(c.node)).toBe(0);
      expect(await allocationOf(c.ref)).toHaveLength(1);
    },
    async resolves(c) {
      // The tool prints whole output again; nobody touches the spec.
      exec.pods.delete(`${c.ns}/glitch`);
      const ready = await waitForPhase(c.ref, 'Ready', ERROR_RETRY_WINDOW_MS);
      expect(await virtualDrivesOn(c.node, [TLC_3840.path])).toEqual(
        ready.status!.allocations!.virtualDrives!.map((d) => d.virtualUUID),
      );
      await deleteAndWaitGone(c);
    },
  }),

  row({
    name: 'truncated output of weka-sign-drive list stops the container before it signs anything, and it proceeds after a spec change',
    where: 'condition Ready=False StepFailed quoting the command and its output + Warning Event',
    async setup() {
      const base = await nodeWith([TLC_3840], 'truncated');
      exec.pods.add(`${base.ns}/truncated`);
      return container(base, 'truncated', {
        driveCores: 1,
        containerCapacity: 1000,
        driveTypesRatio: { tlc: 1, qlc: 0 },
      });
    },
    async seesMessage(c) {
      const cond = await refusal(c.ref, 'Ready', 'StepFailed', 90_000);
      expect(cond.message).toContain(`weka-sign-drive list -j: unexpected output (not valid JSON): "{`);
      expect(cond.message).toMatch(/^signing virtual drive 1 of 1/);
      expect(await warningEvent(c.ref, 'StepFailed')).toBe(cond.message);
      await waitForPhase(c.ref, 'Error', 30_000);
    },
    async nothingLost(c) {
      expect(await virtualAdds(c.node)).toBe(0);
      expect(await virtualDrivesOn(c.node, [TLC_3840.path])).toEqual([]);
      // The allocation stays the container's (released on deletion), so nobody else gets it twice.
      expect(await allocationOf(c.ref)).toHaveLength(1);
    },
    async resolves(c) {
      exec.pods.delete(`${c.ns}/truncated`);
      await changeImage(c);
      const ready = await waitForPhase(c.ref, 'Ready', 90_000);
      expect(await virtualAdds(c.node)).toBe(1);
      expect(await virtualDrivesOn(c.node, [TLC_3840.path])).toEqual(
        ready.status!.allocations!.virtualDrives!.map((d) => d.virtualUUID),
      );
      await deleteAndWaitGone(c);
      expect(await virtualDrivesOn(c.node, [TLC_3840.path])).toEqual([]);
    },
  }),

  row({
    name: 'a container created on a node that is already gone says so, and deletes cleanly',
    where: 'condition Placed=False NodeNotFound + Warning Event',
    async setup() {
      const base = await nodeWith([TLC_3840], 'gone-before');
      await removeNode(base.node);
      return container(base, 'orphan', { driveCores: 1, containerCapacity: 1000, driveTypesRatio: { tlc: 1, qlc: 0 } });
    },
    async seesMessage(c) {
      // Waited for without asking that node's mutex anything (a made-up name starts no mutex).
      const cond = await refusal(c.ref, 'Placed', 'NodeNotFound', 90_000);
      expect(cond.message).toContain(`node ${c.node} does not exist`);
      expect(await warningEvent(c.ref, 'NodeNotFound')).toBe(cond.message);
    },
    async nothingLost(c) {
      expect(await allocationOf(c.ref)).toEqual([]);
      expect(await podExists(c.ns, c.ref.name)).toBe(false);
      expect(await podExists(op.operatorNamespace, proxyName(c.node))).toBe(false);
    },
    async resolves(c) {
      await deleteAndWaitGone(c);
    },
  }),

  row({
    name: "a node that disappears while a container waits to allocate is named on the container, and its deletion completes once the node's pods are collected",
    where: 'condition Allocated=False NodeNotFound + Warning Event',
    async setup() {
      const c = await container(await nodeWith([TLC_1920], 'gone-during'), 'stranded', {
        driveCores: 2,
        containerCapacity: 4000,
        driveTypesRatio: { tlc: 1, qlc: 0 },
      });
      await refusal(c.ref, 'Allocated', 'InsufficientDriveCapacity');
      await removeNode(c.node);
      return c;
    },
    async seesMessage(c) {
      const cond = await refusal(c.ref, 'Allocated', 'NodeNotFound');
      expect(cond.message).toContain(`node ${c.node} does not exist`);
      expect(await warningEvent(c.ref, 'NodeNotFound')).toBe(cond.message);
    },
    async nothingLost(c) {
      const now = (await readContainer(c.ref)) as WekaContainer;
      expect(now.status?.allocations?.virtualDrives ?? []).toEqual([]);
      expect(now.spec.nodeName).toBe(c.node);
      expect(await virtualAdds(c.node)).toBe(0);
    },
    async resolves(c) {
      // A pod on a vanished node never finishes terminating by itself; the teardown deletes it at
      // once, as Kubernetes' pod garbage collector would, and completes.
      await deleteDriveContainer(op, c.ref, c.uid);
      await waitGone(c.ref, 90_000);
      expect(await podExists(c.ns, c.ref.name)).toBe(false);
    },
  }),

  row({
    name: 'a container whose node disappears after it joined its cluster can still be deleted, and says what it left behind',
    where: 'Warning Event NodeGone naming the virtual drives and the cluster',
    async setup() {
      const c = await container(await nodeWith([TLC_3840], 'gone-after-join'), 'joined', {
        driveCores: 1,
        containerCapacity: 1000,
        driveTypesRatio: { tlc: 1, qlc: 0 },
      });
      await waitForPhase(c.ref, 'Ready', 120_000);
      await removeNode(c.node);
      return c;
    },
    async seesMessage(c) {
      const drives = await allocationOf(c.ref);
      expect(drives.length).toBeGreaterThan(0);
      await deleteDriveContainer(op, c.ref, c.uid);
      await waitGone(c.ref, 120_000);
      const message = await warningEvent(c.ref, 'NodeGone');
      for (const entry of drives) expect(message).toContain(entry.split('@')[0]!);
      expect(message).toMatch(/may remain in Weka cluster/);
    },
    async nothingLost(c) {
      // What could not be undone on the vanished node is named in the Event; nothing else is held.
      expect(await readContainer(c.ref)).toBeNull();
      expect(await podExists(c.ns, c.ref.name)).toBe(false);
    },
    async resolves() {
      // The object is gone and its teardown finished: nothing more to resolve.
    },
  }),
];

describe('bad input shown while the workflow runs', () => {
  it.concurrent.each(ROWS)('$name (where: $where)', async (r) => r.run(), ROW_TIMEOUT_MS);
});
