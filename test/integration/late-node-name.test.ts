// A drive container created without spec.nodeName (the API allows it: the field is set once)
// waits, saying why, and proceeds once a node is named; deleted before that, it goes cleanly.
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FINALIZER } from '../../src/api/names.js';
import { WorkflowNotFoundError } from '@temporalio/client';
import {
  WORKFLOW,
  containerWorkflowId,
  nodeMutexId,
  specChangedSignal,
  type LifecycleWorkflow,
} from '../../src/protocol.js';
import { eventually } from '../support/async.js';
import { createContainerObject, WEKA_CONTAINERS } from '../support/containers.js';
import { kubeConfig, uniqueName, uniqueNamespace } from '../support/harness.js';
import {
  deleteDriveContainer,
  readContainer,
  sharedDrivesNode,
  startTestOperator,
  waitForPhase,
  waitGone,
  type TestOperator,
} from '../support/operator.js';
import { createWekaCluster } from '../support/simulator.js';

let op: TestOperator;
beforeAll(async () => {
  op = await startTestOperator();
});
afterAll(async () => {
  await op?.stop();
});

const DEVICES = [{ path: '/dev/nvme0n1', capacityGiB: 7680, type: 'TLC' as const }];
const SPEC = { driveCores: 1, numDrives: 1, driveCapacity: 1000 };

async function startUnplaced(name: string, clusterGUID?: string, nodeName?: string) {
  const ref = { namespace: await uniqueNamespace('late-node'), name };
  const created = await createContainerObject(
    kubeConfig(),
    ref,
    { ...SPEC, ...(nodeName ? { nodeName } : {}) },
    {
      finalizers: [FINALIZER],
      ...(clusterGUID ? { clusterGUID } : {}),
    },
  );
  const uid = created.metadata.uid!;
  const handle = await op.client.workflow.start<LifecycleWorkflow>(WORKFLOW.driveContainer, {
    taskQueue: op.deps.taskQueue,
    workflowId: containerWorkflowId(uid),
    args: [{ ...ref, uid }],
  });
  const waiting = await eventually(
    `${name} to say it has no node`,
    async () => {
      const c = await readContainer(ref);
      return c?.status?.conditions?.find((x) => x.type === 'Placed' && x.status === 'False') ? c : undefined;
    },
    60_000,
  );
  return { ref, uid, handle, waiting };
}

describe('a drive container without a node', () => {
  it('waits with a condition, then proceeds when spec.nodeName is set', { timeout: 180_000 }, async () => {
    const node = await sharedDrivesNode(DEVICES, 'late-node');
    const guid = await createWekaCluster(node, 'late-node');
    const { ref, uid, handle, waiting } = await startUnplaced('drive-0', guid);
    expect(waiting.status?.phase).toBe('Refused');
    expect(waiting.status?.conditions?.find((c) => c.type === 'Placed')?.reason).toBe('NoNodeName');

    await kubeConfig()
      .makeApiClient(CustomObjectsApi)
      .patchNamespacedCustomObject(
        { ...WEKA_CONTAINERS, ...ref, body: { spec: { nodeName: node } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    await handle.signal(specChangedSignal);
    const ready = await waitForPhase(ref, 'Ready', 90_000);
    expect(ready.status?.allocations?.virtualDrives?.[0]?.capacityGiB).toBe(1000);
    expect(ready.status?.conditions?.find((c) => c.type === 'Placed')?.status).toBe('True');

    await deleteDriveContainer(op, ref, uid);
    await waitGone(ref);
  });

  it(
    'waits for a named node that does not exist without starting a node mutex for it, and is deleted cleanly',
    { timeout: 120_000 },
    async () => {
      const missing = uniqueName('no-such-node');
      const { ref, uid, handle, waiting } = await startUnplaced('drive-2', undefined, missing);
      const placed = waiting.status?.conditions?.find((c) => c.type === 'Placed');
      expect(placed?.reason).toBe('NodeNotFound');
      expect(placed?.message).toContain(missing);
      await deleteDriveContainer(op, ref, uid);
      await waitGone(ref);
      await handle.result();
      // No mutex was started for a made-up name, so none waits or retries for it.
      const mutex = await op.client.workflow
        .getHandle(nodeMutexId(missing))
        .describe()
        .catch((err: unknown) => err);
      expect(mutex).toBeInstanceOf(WorkflowNotFoundError);
    },
  );

  it('is deleted cleanly before any node was named', { timeout: 120_000 }, async () => {
    const { ref, uid, handle } = await startUnplaced('drive-1');
    await deleteDriveContainer(op, ref, uid);
    await waitGone(ref);
    await handle.result();
  });
});
