// Only an object's deletion tears it down. Cancelling its workflow (the Temporal UI's "Request
// Cancellation", `temporal workflow cancel`) or a stray deleteRequested signal, while nobody
// deleted the object, changes nothing it holds: it is recorded as an Event and a condition, and
// the lifecycle starts again from its recorded state.
import { CustomObjectsApi } from '@kubernetes/client-node';
import type { WorkflowHandle } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import type { WekaCluster } from '../../src/api/index.js';
import {
  CLUSTER_PORTS_MUTEX_ID,
  deleteRequestedSignal,
  mutexRequestSignal,
  mutexTaskQueue,
  nodeMutexId,
  WORKFLOW,
  type LifecycleWorkflow,
  type MutexInput,
  type MutexRequest,
  type MutexWorkflow,
  type ObjectWorkflowInput,
} from '../../src/protocol.js';
import { replyCollector } from './fixtures/reply-collector-client.js';
import { eventually } from '../support/async.js';
import { listContainers, readObject, WEKA_API } from '../support/containers.js';
import { kubeConfig, uniqueName, uniqueNamespace } from '../support/harness.js';
import { eventReasons, readOperation, startSignDrivesOperation, waitFinished } from '../support/manual-operation.js';
import {
  createDriveContainer,
  deleteDriveContainer,
  readContainer,
  sharedDrivesNode,
  startWekaCluster,
  useTestOperator,
  waitForPhase,
  waitGone,
} from '../support/operator.js';
import { changeCounts, createWekaCluster, simulatorLog } from '../support/simulator.js';
import { recordHistory } from '../support/histories.js';

const op = useTestOperator();

const DEVICES = [
  { path: '/dev/nvme0n1', capacityGiB: 7680, type: 'TLC' as const },
  { path: '/dev/nvme1n1', capacityGiB: 15360, type: 'QLC' as const },
];

/** Waits until the workflow id's latest run is a new one, still running. */
async function restarted(handle: WorkflowHandle<LifecycleWorkflow>, previousRunId: string): Promise<string> {
  const latest = op.client.workflow.getHandle(handle.workflowId);
  return eventually(
    `${handle.workflowId} to start again`,
    async () => {
      const d = await latest.describe();
      return d.runId !== previousRunId && d.status.name === 'RUNNING' ? d.runId : undefined;
    },
    60_000,
  );
}

async function waitForEvent(namespace: string, name: string, reason: string, count: number): Promise<void> {
  await eventually(
    `${count} ${reason} Event(s) on ${namespace}/${name}`,
    async () => ((await eventReasons(namespace, name)).filter((r) => r === reason).length >= count ? true : undefined),
    60_000,
  );
}

describe('a cancel without a deletion', () => {
  it('leaves a Ready drive container its drives, allocation and pod', { timeout: 300_000 }, async () => {
    const node = await sharedDrivesNode(DEVICES);
    const guid = await createWekaCluster(node, 'cancel-a');
    const ref = { namespace: await uniqueNamespace('cancel'), name: 'drive-0' };
    const { uid, handle } = await createDriveContainer(
      op,
      ref,
      { nodeName: node, driveCores: 1, containerCapacity: 3000, driveTypesRatio: { tlc: 1, qlc: 1 } },
      guid,
    );
    const ready = await waitForPhase(ref, 'Ready');
    const drives = ready.status!.allocations!.virtualDrives!.map((d) => d.virtualUUID).sort();
    const firstRun = (await handle.describe()).runId;

    await handle.cancel();
    await waitForEvent(ref.namespace, ref.name, 'Warning/TeardownRefused', 1);
    const secondRun = await restarted(handle, firstRun);
    await recordHistory(handle.workflowId, 'drive-container-teardown-refused', firstRun);
    const again = await waitForPhase(ref, 'Ready');
    expect(again.status!.allocations!.virtualDrives!.map((d) => d.virtualUUID).sort()).toEqual(drives);
    expect(again.status!.addedVirtualDrives!.slice().sort()).toEqual(drives);
    const refused = again.status!.conditions!.find((c) => c.type === 'TeardownRefused');
    expect(refused?.status).toBe('True');
    expect(refused?.message).toMatch(/not being deleted/);

    // A stray deleteRequested signal is no deletion either.
    await op.client.workflow.getHandle(handle.workflowId).signal(deleteRequestedSignal);
    await waitForEvent(ref.namespace, ref.name, 'Warning/TeardownRefused', 2);
    await restarted(handle, secondRun);
    await waitForPhase(ref, 'Ready');

    const log = await simulatorLog(node);
    for (const kind of ['virtual-remove', 'drive-remove']) {
      expect([...changeCounts(log, kind, 'virtualUUID').keys()].filter((u) => drives.includes(u))).toEqual([]);
    }
    expect((await readContainer(ref))?.status?.allocations?.virtualDrives).toHaveLength(drives.length);

    // The deletion still tears it all down.
    await deleteDriveContainer(op, ref, uid);
    await waitGone(ref);
    const after = await simulatorLog(node);
    for (const d of drives) expect(changeCounts(after, 'virtual-remove', 'virtualUUID').get(d)).toBe(1);
  });

  it('leaves a finished sign-drives operation Succeeded', { timeout: 180_000 }, async () => {
    const node = await sharedDrivesNode(DEVICES, 'cancel-sign');
    const ref = { namespace: await uniqueNamespace('cancel-op'), name: 'sign' };
    const { handle } = await startSignDrivesOperation(op, ref, {
      type: 'device-paths',
      nodeSelector: { 'kubernetes.io/hostname': node },
      devicePaths: DEVICES.map((d) => d.path),
      shared: true,
    });
    expect((await waitFinished(ref)).status?.phase).toBe('Succeeded');
    const firstRun = (await handle.describe()).runId;
    await handle.cancel();
    await waitForEvent(ref.namespace, ref.name, 'Warning/TeardownRefused', 1);
    await restarted(handle, firstRun);
    await eventually(
      'the operation Succeeded again',
      async () => ((await readOperation(ref))?.status?.phase === 'Succeeded' ? true : undefined),
      90_000,
    );
    expect((await readOperation(ref))?.metadata.deletionTimestamp).toBeUndefined();
  });

  it('leaves a Ready cluster its members', { timeout: 300_000 }, async () => {
    const pool = uniqueName('pool');
    await sharedDrivesNode(DEVICES, 'cancel-cluster', { 'weka.weka.io/pool': pool });
    const namespace = await uniqueNamespace('cancel-cluster');
    const template = {
      driveContainers: 1,
      driveCores: 1,
      containerCapacity: 2200,
      driveTypesRatio: { tlc: 1, qlc: 1 },
    };
    const { uid, handle } = await startWekaCluster(op, { namespace, name: 'tenant' }, pool, template);
    const input: ObjectWorkflowInput = { namespace, name: 'tenant', uid };
    const read = () => readObject<WekaCluster>(kubeConfig(), { ...WEKA_API, plural: 'wekaclusters' }, input);
    await eventually(
      'the cluster Ready',
      async () => ((await read())?.status?.phase === 'Ready' ? true : undefined),
      240_000,
    );
    const members = (await listContainers(kubeConfig(), namespace)).map((c) => c.metadata.uid).sort();
    expect(members).toHaveLength(1);
    const firstRun = (await handle.describe()).runId;

    await handle.cancel();
    await waitForEvent(namespace, 'tenant', 'Warning/TeardownRefused', 1);
    await restarted(handle, firstRun);
    await eventually(
      'the cluster Ready again',
      async () => ((await read())?.status?.phase === 'Ready' ? true : undefined),
      120_000,
    );
    const now = await listContainers(kubeConfig(), namespace);
    expect(now.map((c) => c.metadata.uid).sort()).toEqual(members);
    expect(now.every((c) => c.metadata.deletionTimestamp === undefined && c.status?.phase === 'Ready')).toBe(true);

    // Stray releases of what only the cluster's deletion may release, with its own uid: refused.
    const ports = (await read())?.status?.ports;
    expect(ports?.basePort).toBeDefined();
    const collector = await replyCollector(op);
    try {
      const node = now[0]!.spec.nodeName!;
      const stray: Array<[MutexInput, string, unknown]> = [
        [{ key: CLUSTER_PORTS_MUTEX_ID }, 'release-cluster-ports', { namespace, name: 'tenant', uid }],
        [
          { key: nodeMutexId(node), node },
          'release-device-set',
          { node, cluster: { namespace, name: 'tenant', uid }, set: 'fast' },
        ],
      ];
      for (const [i, [mutex, kind, payload]] of stray.entries()) {
        // As any client of the namespace could send it: to the running mutex, or starting one.
        await op.client.workflow.signalWithStart<MutexWorkflow, [MutexRequest]>(WORKFLOW.mutex, {
          workflowId: mutex.key,
          taskQueue: mutexTaskQueue(op.deps.taskQueue),
          args: [mutex],
          signal: mutexRequestSignal,
          signalArgs: [{ requestId: uniqueName('stray'), kind, replyTo: collector.workflowId, payload }],
        });
        const answers = await eventually(`the answer to a stray ${kind}`, async () => {
          const got = await collector.answers();
          return got.length > i ? got : undefined;
        });
        expect(answers[i], kind).toMatchObject({ ok: false, error: { type: 'NotDeleting' } });
      }
    } finally {
      await collector.stop();
    }
    expect((await read())?.status?.ports).toEqual(ports);

    await kubeConfig()
      .makeApiClient(CustomObjectsApi)
      .deleteNamespacedCustomObject({ ...WEKA_API, plural: 'wekaclusters', namespace, name: 'tenant' });
    await op.client.workflow.getHandle(handle.workflowId).signal(deleteRequestedSignal);
    await eventually('the cluster gone', async () => ((await read()) === null ? true : undefined), 180_000);
    await waitGone(now.map((c) => ({ namespace, name: c.metadata.name! })));
  });
});
