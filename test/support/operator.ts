// The operator for integration and chaos tests, on the test file's control plane: its worker run inside
// the test file, with its own task queue so test files never pick up each other's work, or the
// whole operator as a process (operator-process.ts); and drive containers driven through it.
import { afterAll, beforeAll } from 'vitest';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import type { PhysicalDrive } from '../../src/allocation/index.js';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { pino } from 'pino';
import type { ActivityDeps } from '../../activities/index.js';
import { KubeExecTransport } from '../../activities/exec/kube-exec.js';
import { createOperatorWorker, type OperatorWorkerOptions } from '../../deploy/operator/worker.js';
import { startWatcher, type RunningWatcher } from '../../deploy/operator/watcher/watcher.js';
import { createSimulatedCluster, signSharedDrives } from '../../deploy/local/shared-drives.js';
import { DEFAULT_ALLOCATION_SETTINGS } from '../../src/allocation/settings.js';
import type { WekaCluster, WekaContainer } from '../../src/api/index.js';
import { FINALIZER, proxyName, type ObjectRef } from '../../src/api/names.js';
import { DEFAULT_ALLOWED_IMAGES } from '../../src/manifests/image-policy.js';
import type { SimulatedDevice } from '../../deploy/local/fake-nodes.js';
import {
  decodeSharedDrivesAnnotation,
  encodeSharedDrivesAnnotation,
  SHARED_DRIVES_ANNOTATION,
} from '../../src/annotations/index.js';
import { eventually } from './async.js';
import {
  createContainerObject,
  listContainers,
  phaseSummary,
  readObject,
  TEST_IMAGE,
  WEKA_API,
  WEKA_CONTAINERS,
} from './containers.js';
import {
  addBareNode,
  addNode,
  kubeConfig,
  operatorBundlePath,
  operatorControlPlane,
  simulatorRoot,
  temporalAddress,
  temporalNamespace,
  uniqueName,
  uniqueNamespace,
  workflowBundlePath,
} from './harness.js';
import { COMPILED_OPERATOR, spawnOperator, type OperatorProcess } from './operator-process.js';
import {
  CLUSTER_PORTS_MUTEX_ID,
  clusterWorkflowId,
  containerWorkflowId,
  deleteRequestedSignal,
  mutexTaskQueue,
  WORKFLOW,
  type LifecycleWorkflow,
} from '../../src/protocol.js';
import { POD_PRIORITY_CLASS } from '../../src/manifests/pod-resources.js';

/**
 * The image allow-list of the tests' operators: the Weka repository (TEST_IMAGE is one of its
 * tags), and `weka`, the short repository of the `weka:test` images some tests write by hand.
 */
export const TEST_ALLOWED_IMAGES: readonly string[] = [...DEFAULT_ALLOWED_IMAGES, 'weka'];

export interface TestOperator {
  client: Client;
  deps: ActivityDeps;
  operatorNamespace: string;
  stop(): Promise<void>;
}

/** What a test operator's activities get: this control plane, a new task queue and operator namespace. */
export function testOperatorDeps(client: Client, operatorNamespace: string): ActivityDeps {
  const kc = kubeConfig();
  return {
    kubeConfig: kc,
    exec: KubeExecTransport.fromKubeConfig(kc),
    temporal: client,
    taskQueue: uniqueName('weka-test'),
    logger: pino({ level: 'warn' }),
    settings: DEFAULT_ALLOCATION_SETTINGS,
    operatorNamespace,
    proxyImage: 'quay.io/weka.io/weka-in-container:test',
    allowedImages: TEST_ALLOWED_IMAGES,
    // The control plane made it, as the chart does (deploy/local/crds.ts).
    podPriorityClass: POD_PRIORITY_CLASS,
  };
}

export async function startTestOperator(
  overrides: Partial<ActivityDeps> = {},
  withActivities?: OperatorWorkerOptions['withActivities'],
): Promise<TestOperator> {
  const operatorNamespace = await uniqueNamespace('weka-operator');
  const connection = await Connection.connect({ address: temporalAddress() });
  const client = new Client({ connection, namespace: temporalNamespace() });
  const deps: ActivityDeps = { ...testOperatorDeps(client, operatorNamespace), ...overrides };
  // A cluster-ports mutex an earlier file's operator process left running on its own task queue
  // would hold this operator's port requests until it ended idle: ended here, as stop() ends ours.
  await endClusterPortsMutex(
    client,
    (queue) => queue !== mutexTaskQueue(deps.taskQueue),
    'a test operator of another task queue started it',
  );
  const workerConnection = await NativeConnection.connect({ address: temporalAddress() });
  const worker = await createOperatorWorker({
    connection: workerConnection,
    namespace: temporalNamespace(),
    deps,
    workflowBundlePath: workflowBundlePath(),
    tuning: { shutdownGraceTime: '2 seconds' },
    ...(withActivities ? { withActivities } : {}),
  });
  const running = worker.run();
  return {
    client,
    deps,
    operatorNamespace,
    async stop() {
      // The cluster-ports mutex is one per Temporal namespace, on the task queue of the operator
      // that started it: ended with its operator, so the next test's operator starts its own.
      await endClusterPortsMutex(
        client,
        (queue) => queue === mutexTaskQueue(deps.taskQueue),
        'its test operator stopped',
      );
      worker.shutdown();
      await running;
      await workerConnection.close();
      await connection.close();
    },
  };
}

/**
 * A test operator with the CR watcher running beside its worker in this process, as the operator
 * process runs them: objects are created as a user creates them, and lost pods are made again.
 */
export async function startWatchedTestOperator(
  overrides: Partial<ActivityDeps> = {},
): Promise<TestOperator & { watcher: RunningWatcher }> {
  const op = await startTestOperator(overrides);
  const watcher = startTestWatcher(op);
  await watcher.ready;
  return {
    ...op,
    watcher,
    async stop() {
      await watcher.stop();
      await op.stop();
    },
  };
}

/** A CR watcher for the test operator's task queue, as the operator process runs one beside its worker. */
export function startTestWatcher(op: TestOperator): RunningWatcher {
  return startWatcher({
    kubeConfig: kubeConfig(),
    temporal: op.client,
    taskQueue: op.deps.taskQueue,
    logger: pino({ level: 'warn' }),
    operatorNamespace: op.operatorNamespace,
  });
}

/** Terminates the running cluster-ports mutex when its task queue is one `whose` accepts. */
async function endClusterPortsMutex(client: Client, whose: (taskQueue: string) => boolean, why: string): Promise<void> {
  const ports = client.workflow.getHandle(CLUSTER_PORTS_MUTEX_ID);
  const described = await ports.describe().catch(() => undefined);
  if (described?.status.name === 'RUNNING' && whose(described.taskQueue))
    await ports.terminate(why).catch(() => undefined);
}

/** A fake node whose devices are signed for proxy and listed in its shared-drives annotation. */
export async function sharedDrivesNode(
  devices: SimulatedDevice[],
  prefix = 'weka-node',
  labels: Record<string, string> = {},
): Promise<string> {
  const node = uniqueName(prefix);
  await addNode({ name: node, devices, labels });
  await signSharedDrives({ kubeConfig: kubeConfig(), simulatorRoot: simulatorRoot(), node, devices });
  return node;
}

/** The drives the node shares, as its shared-drives annotation records them (none without one). */
export async function sharedDrivesOf(node: string): Promise<PhysicalDrive[]> {
  const read = await kubeConfig().makeApiClient(CoreV1Api).readNode({ name: node });
  const decoded = decodeSharedDrivesAnnotation(read.metadata?.annotations?.[SHARED_DRIVES_ANNOTATION] ?? '[]');
  if (!decoded.ok) throw new Error(decoded.error.message);
  return [...decoded.drives];
}

/** A Node object with two signed 3840 GiB TLC drives in its annotation; nothing runs there. */
export async function bareSharedDrivesNode(prefix: string): Promise<string> {
  const name = uniqueName(prefix);
  const drives = [0, 1].map((i) => ({
    physicalUUID: `${name}-p${i}`,
    serial: `${name}-SN${i}`,
    capacityGiB: 3840,
    type: 'TLC' as const,
    devicePath: `/dev/nvme${i}n1`,
  }));
  await addBareNode({
    metadata: { name, annotations: { [SHARED_DRIVES_ANNOTATION]: encodeSharedDrivesAnnotation(drives) } },
  });
  return name;
}

export interface ContainerSpecInput {
  nodeName: string;
  driveCores?: number;
  containerCapacity?: number;
  driveCapacity?: number;
  numDrives?: number;
  driveTypesRatio?: { tlc: number; qlc: number };
  cluster?: string;
}

/**
 * Creates a drive WekaContainer the way the watcher would see it (with the operator's finalizer),
 * sets the GUID of a standalone container's cluster, and starts its workflow.
 */
export async function createDriveContainer(
  op: TestOperator,
  ref: ObjectRef,
  spec: ContainerSpecInput,
  clusterGUID?: string,
): Promise<{ uid: string; handle: WorkflowHandle<LifecycleWorkflow> }> {
  const created = await createContainerObject(kubeConfig(), ref, spec, {
    finalizers: [FINALIZER],
    ...(clusterGUID ? { clusterGUID } : {}),
  });
  const uid = created.metadata.uid!;
  const handle = await op.client.workflow.start<LifecycleWorkflow>(WORKFLOW.driveContainer, {
    taskQueue: op.deps.taskQueue,
    workflowId: containerWorkflowId(uid),
    args: [{ namespace: ref.namespace, name: ref.name, uid }],
  });
  return { uid, handle };
}

/**
 * Creates a WekaCluster (with the operator's finalizer) whose one to few drive containers go on the
 * nodes labelled `weka.weka.io/pool: <pool>`, and starts its workflow, as the watcher would.
 */
export async function startWekaCluster(
  op: TestOperator,
  ref: ObjectRef,
  pool: string,
  dynamicTemplate: Record<string, unknown>,
  spec: Record<string, unknown> = {},
): Promise<{ uid: string; handle: WorkflowHandle<LifecycleWorkflow> }> {
  const created = (await kubeConfig()
    .makeApiClient(CustomObjectsApi)
    .createNamespacedCustomObject({
      ...WEKA_API,
      plural: 'wekaclusters',
      namespace: ref.namespace,
      body: {
        apiVersion: 'weka.weka.io/v1alpha1',
        kind: 'WekaCluster',
        metadata: { name: ref.name, finalizers: [FINALIZER] },
        spec: { image: TEST_IMAGE, nodeSelector: { 'weka.weka.io/pool': pool }, dynamicTemplate, ...spec },
      },
    })) as WekaCluster;
  const uid = created.metadata.uid!;
  const handle = await op.client.workflow.start<LifecycleWorkflow>(WORKFLOW.cluster, {
    taskQueue: op.deps.taskQueue,
    workflowId: clusterWorkflowId(uid),
    args: [{ ...ref, uid }],
  });
  return { uid, handle };
}

export async function readContainer(ref: ObjectRef): Promise<WekaContainer | null> {
  return readObject<WekaContainer>(kubeConfig(), WEKA_CONTAINERS, ref);
}

export async function waitForPhase(ref: ObjectRef, phase: string, timeoutMs = 60_000): Promise<WekaContainer> {
  return eventually(
    `${ref.namespace}/${ref.name} to reach phase ${phase}`,
    async () => {
      const c = await readContainer(ref);
      return c?.status?.phase === phase ? c : undefined;
    },
    timeoutMs,
  );
}

/**
 * A standalone drive container, 1000 GiB of TLC on one core, on a new node sharing `devices`, in a
 * new Weka cluster of its own: created, its workflow started, and Ready.
 */
export async function readyStandaloneContainer(
  op: TestOperator,
  prefix: string,
  devices: SimulatedDevice[],
): Promise<{ node: string; guid: string; ref: ObjectRef; uid: string; ready: WekaContainer }> {
  const node = await sharedDrivesNode(devices, prefix);
  const guid = await createSimulatedCluster(simulatorRoot(), node, uniqueName(prefix));
  const ref = { namespace: await uniqueNamespace(prefix), name: 'drive-0' };
  const spec = { nodeName: node, driveCores: 1, containerCapacity: 1000, driveTypesRatio: { tlc: 1, qlc: 0 } };
  const { uid } = await createDriveContainer(op, ref, spec, guid);
  const ready = await waitForPhase(ref, 'Ready', 120_000);
  return { node, guid, ref, uid, ready };
}

/** Deletes the container the way a user would, and tells its workflow (the watcher's job). */
export async function deleteDriveContainer(op: TestOperator, ref: ObjectRef, uid: string): Promise<void> {
  await kubeConfig()
    .makeApiClient(CustomObjectsApi)
    .deleteNamespacedCustomObject({ ...WEKA_CONTAINERS, ...ref });
  await op.client.workflow.getHandle(containerWorkflowId(uid)).signal(deleteRequestedSignal);
}

/**
 * Waits until none of the containers exists any more, listing their namespaces every `intervalMs`
 * (100 unless given); prints what is left every 30 s and fails with it on timeout.
 */
export async function waitGone(
  refs: ObjectRef | readonly ObjectRef[],
  timeoutMs = 60_000,
  o: { intervalMs?: number } = {},
): Promise<void> {
  const all: readonly ObjectRef[] = Array.isArray(refs) ? refs : [refs as ObjectRef];
  const kc = kubeConfig();
  const left = async () =>
    (await Promise.all([...new Set(all.map((r) => r.namespace))].map((ns) => listContainers(kc, ns))))
      .flat()
      .filter((c) => all.some((r) => r.namespace === c.metadata.namespace && r.name === c.metadata.name));
  await eventually(
    all.length === 1 ? `${all[0]!.namespace}/${all[0]!.name} to be gone` : `${all.length} containers to be gone`,
    async () => ((await left()).length === 0 ? true : undefined),
    timeoutMs,
    { ...o, progress: async () => leftSummary(await left()) },
  );
}

/** The phases of what is left, and, when only a few are, what each one is doing and why. */
function leftSummary(left: readonly WekaContainer[]): string {
  if (left.length > 3) return phaseSummary(left);
  const why = (c: WekaContainer) =>
    (c.status?.conditions ?? [])
      .filter((x) => x.status !== 'True' || x.type === 'TeardownBlocked')
      .map((x) => `${x.type}=${x.status} ${x.reason}: ${x.message}`)
      .join('; ');
  return `${phaseSummary(left)} ${left.map((c) => `[${c.metadata.name}: ${why(c)}]`).join(' ')}`;
}

/**
 * Waits until the ssdproxy containers of `nodes` are gone from the operator namespace. Scoped to the
 * test's own nodes: a watcher that runs for the whole apiserver also starts the workflows of objects
 * an earlier test file left behind (a sign-drives operation ensures its node's proxy, and keeps it).
 */
export async function waitProxiesGone(
  operatorNamespace: string,
  nodes: readonly string[],
  timeoutMs: number,
  o: { intervalMs?: number } = {},
): Promise<void> {
  const kc = kubeConfig();
  const names = new Set(nodes.map(proxyName));
  const left = async () =>
    (await listContainers(kc, operatorNamespace)).map((c) => c.metadata.name ?? '').filter((n) => names.has(n));
  await eventually(
    'the ssdproxy containers to be gone',
    async () => ((await left()).length === 0 ? true : undefined),
    timeoutMs,
    { ...o, progress: async () => (await left()).join(', ') },
  );
}

export async function podExists(namespace: string, name: string): Promise<boolean> {
  try {
    await kubeConfig().makeApiClient(CoreV1Api).readNamespacedPod({ namespace, name });
    return true;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return false;
    throw err;
  }
}

/**
 * The whole operator (watcher and worker, as configured by `env`) as a process of its own, run from
 * the sources under test (bundled for the run) or as `npm run build` compiled it, logging at info
 * to the control plane's log directory; returns once its worker runs.
 */
export async function startOperatorProcess(
  env: Record<string, string>,
  main: 'source' | 'compiled' = 'source',
): Promise<OperatorProcess> {
  const p = spawnOperator(operatorControlPlane(), {
    logName: uniqueName(`operator-${env['WEKA_TASK_QUEUE'] ?? ''}`),
    script: main === 'source' ? operatorBundlePath() : COMPILED_OPERATOR,
    env: {
      LOG_LEVEL: 'info',
      WEKA_HTTP_PORT: '0',
      WEKA_ALLOWED_IMAGES: TEST_ALLOWED_IMAGES.join(','),
      // The compiled operator loads the bundle made at build time, as the image does.
      ...(main === 'source' ? { WEKA_WORKFLOW_BUNDLE: workflowBundlePath() } : {}),
      ...env,
    },
  });
  await untilWorkerRuns(p);
  return p;
}

/** Waits until the operator process says its worker runs; fails at once if it exits first. */
export async function untilWorkerRuns(p: OperatorProcess, what = 'the operator process'): Promise<void> {
  await eventually(
    `${what} to run its worker`,
    async () => {
      if (!p.running()) throw new Error(`operator exited early:\n${p.output()}`);
      return p.output().includes('worker running') ? true : undefined;
    },
    60_000,
    // An operator that exited will not come back: say so now, not after the minute.
    { retryErrors: false },
  );
}

/**
 * The file's test operator: started before its tests and stopped after them (vitest hooks). The
 * object returned stands for it: each property read is the started operator's.
 */
export function useTestOperator(
  overrides: Partial<ActivityDeps> = {},
  withActivities?: OperatorWorkerOptions['withActivities'],
): TestOperator {
  let started: TestOperator | undefined;
  beforeAll(async () => {
    started = await startTestOperator(overrides, withActivities);
  });
  afterAll(async () => {
    await started?.stop();
  });
  return new Proxy({} as TestOperator, {
    get(_, key) {
      if (!started) throw new Error('the test operator is used before its file started it (in beforeAll)');
      const value: unknown = Reflect.get(started, key);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(started) : value;
    },
  });
}
