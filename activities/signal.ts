// Signals from activities to other workflows, which may have finished or never started.
import { WorkflowNotFoundError, type Client, type WorkflowHandle } from '@temporalio/client';

/**
 * Sends to the workflow with `send`; says whether it was delivered. A workflow that finished or
 * never existed has nobody waiting for the signal: skipped, not an error.
 */
export async function signalIfRunning(
  temporal: Client,
  workflowId: string,
  send: (h: WorkflowHandle) => Promise<void>,
): Promise<boolean> {
  try {
    await send(temporal.workflow.getHandle(workflowId));
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}
