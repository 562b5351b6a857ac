// WekaManualOperations for integration tests: create one the way the watcher would see it (with
// the operator's finalizer) and start its workflow; read it; delete it and tell the workflow.
import { CoreV1Api, CustomObjectsApi, type V1Node } from '@kubernetes/client-node';
import type { WorkflowHandle } from '@temporalio/client';
import type { WekaManualOperation } from '../../src/api/index.js';
import { FINALIZER, type ObjectRef } from '../../src/api/names.js';
import { eventually } from './async.js';
import { readObject, WEKA_API } from './containers.js';
import { kubeConfig } from './harness.js';
import type { TestOperator } from './operator.js';
import { operationWorkflowId, deleteRequestedSignal, WORKFLOW, type LifecycleWorkflow } from '../../src/protocol.js';

const GROUP = { ...WEKA_API, plural: 'wekamanualoperations' };

export interface SignDrivesPayloadInput {
  type: string;
  nodeSelector: Record<string, string>;
  devicePaths?: string[];
  shared?: boolean;
  options?: {
    allowEraseWekaPartitions?: boolean;
    allowEraseNonWekaPartitions?: boolean;
    allowNonEmptyDevice?: boolean;
    skipTrimFormat?: boolean;
  };
}

/** Creates the operation the way the watcher would see it: with the operator's finalizer. */
export function createSignDrivesOperation(ref: ObjectRef, payload: SignDrivesPayloadInput): Promise<{ uid: string }> {
  return createOperation(ref, 'sign-drives', { signDrivesPayload: payload }, { finalizer: true });
}

export async function startSignDrivesWorkflow(
  op: TestOperator,
  ref: ObjectRef,
  uid: string,
): Promise<WorkflowHandle<LifecycleWorkflow>> {
  return op.client.workflow.start<LifecycleWorkflow>(WORKFLOW.manualOperation, {
    taskQueue: op.deps.taskQueue,
    workflowId: operationWorkflowId(uid),
    args: [{ namespace: ref.namespace, name: ref.name, uid }],
  });
}

export async function startSignDrivesOperation(
  op: TestOperator,
  ref: ObjectRef,
  payload: SignDrivesPayloadInput,
): Promise<{ uid: string; handle: WorkflowHandle<LifecycleWorkflow> }> {
  const { uid } = await createSignDrivesOperation(ref, payload);
  return { uid, handle: await startSignDrivesWorkflow(op, ref, uid) };
}

export async function readOperation(ref: ObjectRef): Promise<WekaManualOperation | null> {
  return readObject<WekaManualOperation>(kubeConfig(), GROUP, ref);
}

/** Waits until the operation has finished (Succeeded, Failed or Refused) and returns it. */
export async function waitFinished(ref: ObjectRef, timeoutMs = 90_000): Promise<WekaManualOperation> {
  return eventually(
    `${ref.namespace}/${ref.name} to finish`,
    async () => {
      const o = await readOperation(ref);
      return o && ['Succeeded', 'Failed', 'Refused'].includes(o.status?.phase ?? '') ? o : undefined;
    },
    timeoutMs,
  );
}

/** Deletes the operation the way a user would; the finalizer keeps it until the workflow is done. */
export async function deleteOperationObject(ref: ObjectRef): Promise<void> {
  await kubeConfig()
    .makeApiClient(CustomObjectsApi)
    .deleteNamespacedCustomObject({ ...GROUP, ...ref });
}

/** Deletes the operation and tells its workflow (the watcher's job). */
export async function deleteOperation(op: TestOperator, ref: ObjectRef, uid: string): Promise<void> {
  await deleteOperationObject(ref);
  await op.client.workflow.getHandle(operationWorkflowId(uid)).signal(deleteRequestedSignal);
}

export async function readNode(name: string): Promise<V1Node> {
  return kubeConfig().makeApiClient(CoreV1Api).readNode({ name });
}

export async function eventReasons(namespace: string, name: string): Promise<string[]> {
  const events = await kubeConfig().makeApiClient(CoreV1Api).listNamespacedEvent({ namespace });
  return events.items.filter((e) => e.involvedObject.name === name).map((e) => `${e.type ?? ''}/${e.reason ?? ''}`);
}

/**
 * Creates an operation as a person does: the operator's watcher adds its finalizer and starts its
 * workflow. With `finalizer`, as the watcher would see it, finalizer added.
 */
export async function createOperation(
  ref: ObjectRef,
  action: string,
  payload: Record<string, unknown>,
  o: { finalizer?: boolean } = {},
): Promise<{ uid: string }> {
  const created = (await kubeConfig()
    .makeApiClient(CustomObjectsApi)
    .createNamespacedCustomObject({
      ...GROUP,
      namespace: ref.namespace,
      body: {
        apiVersion: 'weka.weka.io/v1alpha1',
        kind: 'WekaManualOperation',
        metadata: { name: ref.name, ...(o.finalizer ? { finalizers: [FINALIZER] } : {}) },
        spec: { action, payload },
      },
    })) as WekaManualOperation;
  return { uid: created.metadata.uid! };
}
