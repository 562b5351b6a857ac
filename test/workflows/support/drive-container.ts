// Starting a drive container's workflow over a world (container-world.ts), and waiting on what its
// status says.
import type { WorkflowHandle } from '@temporalio/client';
import { WORKFLOW, containerWorkflowId, deleteRequestedSignal, type LifecycleWorkflow } from '../../../src/protocol.js';
import { eventually } from '../../support/async.js';
import type { ContainerWorld } from './container-world.js';
import { workflowClient } from './env.js';

export async function startContainer(
  world: ContainerWorld,
  taskQueue: string,
  historyLimit?: number,
): Promise<WorkflowHandle<LifecycleWorkflow>> {
  return (await workflowClient()).workflow.start<LifecycleWorkflow>(WORKFLOW.driveContainer, {
    taskQueue,
    workflowId: containerWorkflowId(world.uid),
    args: [{ ...world.ref, uid: world.uid, ...(historyLimit ? { historyLimit } : {}) }],
  });
}

/** Starts the workflow and waits until the container is Ready. */
export async function readyContainer(
  world: ContainerWorld,
  taskQueue: string,
): Promise<WorkflowHandle<LifecycleWorkflow>> {
  const handle = await startContainer(world, taskQueue);
  await phase(world, 'Ready');
  return handle;
}

/** The object's deletion as the watcher passes it on, and the workflow's end. */
export async function deleteContainer(world: ContainerWorld, handle: WorkflowHandle<LifecycleWorkflow>): Promise<void> {
  world.markDeleted();
  await handle.signal(deleteRequestedSignal);
  await handle.result();
}

/** Waits until the container's status shows `wanted` as its phase. */
export const phase = (world: ContainerWorld, wanted: string, timeoutMs = 20_000): Promise<true> =>
  eventually(
    `the container to be ${wanted}`,
    async () => (world.container?.status.phase === wanted ? true : undefined),
    timeoutMs,
    { intervalMs: 50 },
  );

/** Waits until the container's condition of `type` has `reason`. */
export const conditionReason = (world: ContainerWorld, type: string, reason: string, timeoutMs = 20_000) =>
  eventually(
    `the ${type} condition to say ${reason}`,
    async () => (world.condition(type)?.reason === reason ? world.condition(type) : undefined),
    timeoutMs,
    { intervalMs: 50 },
  );

/** Every run of the workflow, oldest first, through the continue-as-new chain. */
export async function runsOf(workflowId: string): Promise<string[]> {
  const client = await workflowClient();
  const chain: string[] = [];
  for (let runId: string | undefined = (await client.workflow.getHandle(workflowId).describe()).runId; runId;) {
    chain.unshift(runId);
    const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    runId = history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId ?? undefined;
  }
  return chain;
}
