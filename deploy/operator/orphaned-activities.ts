// At start, the operator fails the mutex decisions that a crashed process of this host left
// started, so Temporal retries them at once instead of after their heartbeat timeout: a node's
// decision holds every other request on that node. Only the mutex workflows are looked at (one per
// node, and the cluster-ports mutex): a lifecycle's interrupted step waits for its heartbeat
// timeout as before. Which activity is orphaned is decided in src/operator/orphaned-activities.ts.
import { readFileSync } from 'node:fs';
import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { Logger } from 'pino';
import { isOrphaned, type ThisProcess } from '../../src/operator/orphaned-activities.js';
import { mapLimited } from '../../src/map-limited.js';
import { runningMutexesQuery } from '../../src/protocol.js';

/** Mutex workflows described at once. */
const DESCRIBE_CONCURRENCY = 8;
/** PendingActivityState.STARTED */
const STARTED = 2;

type Timestamp = { seconds?: number | { toNumber(): number } | null; nanos?: number | null } | null | undefined;

function timestampMs(ts: Timestamp): number {
  if (!ts?.seconds) return 0;
  const seconds = typeof ts.seconds === 'number' ? ts.seconds : ts.seconds.toNumber();
  return seconds * 1000 + Math.floor((ts.nanos ?? 0) / 1e6);
}

/** Whether a process of this pid runs here: a zombie (killed, not yet reaped) does not. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    // The state is the field after the command name, which is in parentheses and may hold spaces.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

/** Fails every orphaned mutex decision; returns how many it failed. */
export async function failOrphanedActivities(o: {
  temporal: Client;
  taskQueue: string;
  self: ThisProcess;
  logger: Logger;
}): Promise<number> {
  const ids: { workflowId: string; runId: string }[] = [];
  for await (const wf of o.temporal.workflow.list({ query: runningMutexesQuery(o.taskQueue) }))
    ids.push({ workflowId: wf.workflowId, runId: wf.runId });
  const failed = await mapLimited(ids, DESCRIBE_CONCURRENCY, async ({ workflowId, runId }) => {
    let n = 0;
    const described = await o.temporal.workflow
      .getHandle(workflowId, runId)
      .describe()
      .catch(() => undefined);
    for (const a of described?.raw.pendingActivities ?? []) {
      if (a.state !== STARTED || !a.activityId) continue;
      const started = { lastWorkerIdentity: a.lastWorkerIdentity ?? '', lastStartedMs: timestampMs(a.lastStartedTime) };
      if (!isOrphaned(started, o.self)) continue;
      const why = `the operator process ${started.lastWorkerIdentity} that ran it is gone (found by its restart)`;
      try {
        await o.temporal.activity.fail(
          { workflowId, runId, activityId: a.activityId },
          ApplicationFailure.retryable(why, 'WorkerGone'),
        );
        n++;
        o.logger.warn(
          { workflowId, activity: a.activityType?.name, attempt: a.attempt, worker: started.lastWorkerIdentity },
          'failed an activity a dead operator process left running, so it is retried now',
        );
      } catch (err) {
        // Finished, timed out or retried meanwhile: nothing is left to fail.
        o.logger.debug({ workflowId, err }, 'orphaned activity not failed');
      }
    }
    return n;
  });
  return failed.reduce((a, b) => a + b, 0);
}
