// The operator's worker, run inside a test file against the shared control plane, with its own
// task queue so test files never pick up each other's work.
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { pino } from 'pino';
import type { ActivityDeps } from '../../../activities/index.js';
import { KubeExecTransport } from '../../../activities/exec/kube-exec.js';
import { createOperatorWorker } from '../../../deploy/operator/worker.js';
import { encodeSharedDrivesAnnotation, SHARED_DRIVES_ANNOTATION } from '../../../src/annotations/index.js';
import { DEFAULT_ALLOCATION_SETTINGS } from '../../../src/settings/index.js';
import type { WekaContainer } from '../../../src/api/index.js';
import { FINALIZER, type ObjectRef } from '../../../src/lifecycle/names.js';
import type { SimulatedDevice } from '../../../deploy/local/fake-nodes.js';
import {
  addNode,
  eventually,
  kubeConfig,
  temporalAddress,
  temporalNamespace,
  uniqueName,
  uniqueNamespace,
} from '../harness.js';
import { showDevice, sim } from './simulator.js';
import { containerWorkflowId, deleteRequestedSignal, WORKFLOW, type LifecycleWorkflow } from '../../../src/protocol.js';

const GROUP = { group: 'weka.weka.io', version: 'v1alpha1', plural: 'wekacontainers' };

export interface TestOperator {
  client: Client;
  deps: ActivityDeps;
  operatorNamespace: string;
  stop(): Promise<void>;
}

export async function startTestOperator(overrides: Partial<ActivityDeps> = {}): Promise<TestOperator> {
  const operatorNamespace = await uniqueNamespace('weka-operator');
  const connection = await Connection.connect({ address: temporalAddress() });
  const client = new Client({ connection, namespace: temporalNamespace() });
  const kc = kubeConfig();
  const deps: ActivityDeps = {
    kubeConfig: kc,
    exec: KubeExecTransport.fromKubeConfig(kc),
    temporal: client,
    taskQueue: uniqueName('weka-test'),
    logger: pino({ level: 'warn' }),
    settings: DEFAULT_ALLOCATION_SETTINGS,
    operatorNamespace,
    proxyImage: 'quay.io/weka.io/weka-in-container:test',
    ...overrides,
  };
  const workerConnection = await NativeConnection.connect({ address: temporalAddress() });
  const worker = await createOperatorWorker({
    connection: workerConnection,
    namespace: temporalNamespace(),
    deps,
    tuning: { shutdownGraceTime: '2 seconds' },
  });
  const running = worker.run();
  return {
    client,
    deps,
    operatorNamespace,
    async stop() {
      worker.shutdown();
      await running;
      await workerConnection.close();
      await connection.close();
    },
  };
}

/** A fake node whose devices are signed for proxy and listed in its shared-drives annotation. */
export async function sharedDrivesNode(
  devices: SimulatedDevice[],
  prefix = 'weka-node',
  labels: Record<string, string> = {},
): Promise<string> {
  const node = uniqueName(prefix);
  await addNode({ name: node, devices, labels });
  const drives = [];
  for (const d of devices) {
    await sim(node, '--', 'weka-sign-drive', 'sign', 'proxy', d.path);
    const info = await showDevice(node, d.path);
    drives.push({
      physicalUUID: info.physicalUUID!,
      serial: info.serial,
      capacityGiB: info.capacityGiB,
      type: info.type,
      devicePath: d.path,
    });
  }
  const core = kubeConfig().makeApiClient(CoreV1Api);
  await core.patchNode(
    {
      name: node,
      body: { metadata: { annotations: { [SHARED_DRIVES_ANNOTATION]: encodeSharedDrivesAnnotation(drives) } } },
    },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
  return node;
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
 * Creates a drive WekaContainer object (mode drive, the test image, then `spec`) and, for a
 * standalone container, writes its cluster GUID as the cluster's administrator would: server-side
 * apply on the status with a field manager of its own. Starts nothing.
 */
export async function createContainerObject(
  ref: ObjectRef,
  spec: object,
  o: { finalizers?: string[]; clusterGUID?: string } = {},
): Promise<WekaContainer> {
  const custom = kubeConfig().makeApiClient(CustomObjectsApi);
  const created = (await custom.createNamespacedCustomObject({
    ...GROUP,
    namespace: ref.namespace,
    body: {
      apiVersion: 'weka.weka.io/v1alpha1',
      kind: 'WekaContainer',
      metadata: { name: ref.name, ...(o.finalizers?.length ? { finalizers: o.finalizers } : {}) },
      spec: { mode: 'drive', image: 'quay.io/weka.io/weka-in-container:test', ...spec },
    },
  })) as WekaContainer;
  if (o.clusterGUID) {
    await custom.patchNamespacedCustomObjectStatus(
      {
        ...GROUP,
        ...ref,
        body: {
          apiVersion: 'weka.weka.io/v1alpha1',
          kind: 'WekaContainer',
          metadata: { name: ref.name },
          status: { clusterGUID: o.clusterGUID },
        },
        fieldManager: 'test-cluster-admin',
        force: true,
      },
      setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
    );
  }
  return created;
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
  const created = await createContainerObject(ref, spec, {
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

export async function readContainer(ref: ObjectRef): Promise<WekaContainer | null> {
  try {
    return (await kubeConfig()
      .makeApiClient(CustomObjectsApi)
      .getNamespacedCustomObject({ ...GROUP, ...ref })) as WekaContainer;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return null;
    throw err;
  }
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

/** Deletes the container the way a user would, and tells its workflow (the watcher's job). */
export async function deleteDriveContainer(op: TestOperator, ref: ObjectRef, uid: string): Promise<void> {
  await kubeConfig()
    .makeApiClient(CustomObjectsApi)
    .deleteNamespacedCustomObject({ ...GROUP, ...ref });
  await op.client.workflow.getHandle(containerWorkflowId(uid)).signal(deleteRequestedSignal);
}

export async function waitGone(ref: ObjectRef, timeoutMs = 60_000): Promise<void> {
  await eventually(
    `${ref.namespace}/${ref.name} to be gone`,
    async () => ((await readContainer(ref)) === null ? true : undefined),
    timeoutMs,
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
