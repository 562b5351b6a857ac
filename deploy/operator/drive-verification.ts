// Starts the drive verification workflow (workflows/drive-verification) if it is not running, and
// tells a running one the period this operator is configured with: signal-with-start, so every
// watcher replica may do it at its start and one workflow runs. Tried again on a back-off until it
// is done: the watcher runs meanwhile, and a verification started late loses nothing. Done again
// every 10 minutes, so that one terminated by hand comes back.
import { WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import { backoffDelay, DEFAULT_BACKOFF } from '../../src/backoff.js';
import {
  driveVerificationWorkflowId,
  verificationSettingsSignal,
  WORKFLOW,
  type DriveVerificationInput,
} from '../../src/protocol.js';
import type { Logger } from 'pino';

/** How often a running operator makes sure the verification runs. */
const ENSURE_EVERY_MS = 10 * 60_000;

export function startDriveVerification(o: {
  temporal: Client;
  taskQueue: string;
  periodSeconds: number;
  logger: Logger;
}): { stop(): void } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const settings: DriveVerificationInput = { periodSeconds: o.periodSeconds };
  const attempt = async (failures: number): Promise<void> => {
    if (stopped) return;
    try {
      await o.temporal.workflow.signalWithStart(WORKFLOW.driveVerification, {
        workflowId: driveVerificationWorkflowId(o.taskQueue),
        taskQueue: o.taskQueue,
        args: [settings],
        signal: verificationSettingsSignal,
        signalArgs: [settings],
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
      });
      if (failures >= 0) o.logger.info({ periodSeconds: o.periodSeconds }, 'drive verification running');
      // Looked at again now and then: a verification terminated by hand is started again.
      timer = setTimeout(() => void attempt(-1), ENSURE_EVERY_MS);
    } catch (err) {
      const delay = backoffDelay(Math.max(failures, 0) + 1, DEFAULT_BACKOFF);
      o.logger.warn({ err, retryInMs: delay }, 'could not start the drive verification; trying again');
      timer = setTimeout(() => void attempt(Math.max(failures, 0) + 1), delay);
    }
  };
  void attempt(0);
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
