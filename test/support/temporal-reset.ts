// Reset of a workflow as a person does it from the Temporal UI ("Reset" to the first workflow
// task): the latest run is ended (if running) and a new run replays its history up to that task,
// then carries on as the workflow's code decides. Used by the reset tests and the chaos fault.
import type { Client } from '@temporalio/client';

/** Resets the workflow's latest run to its first completed workflow task; returns the new run's id. */
export async function resetToFirstTask(client: Client, namespace: string, workflowId: string): Promise<string> {
  const { runId } = await client.workflow.getHandle(workflowId).describe();
  const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
  const first = history.events?.find((e) => e.workflowTaskCompletedEventAttributes);
  if (!first?.eventId) throw new Error(`${workflowId} has no completed workflow task`);
  const reset = await client.workflowService.resetWorkflowExecution({
    namespace,
    workflowExecution: { workflowId, runId },
    reason: 'reset to the first workflow task, as a person does from the Temporal UI',
    workflowTaskFinishEventId: first.eventId,
    requestId: crypto.randomUUID(),
  });
  return reset.runId ?? '';
}
