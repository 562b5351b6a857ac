// The watcher's sweep for lifecycle workflows that ended while their object still exists: every
// interval, one visibility query lists the lifecycle runs that closed since the previous one, and
// each whose object the watcher still has is handed to `restart` (src/operator/ended-workflows.ts
// says which, and paces an object whose workflow keeps ending). One query per interval, whatever
// the number of objects: the periodic re-list needs no start call per object for this.
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import {
  EndedWorkflowSweep,
  endedWorkflowsQuery,
  memoRef,
  type EndedRun,
  type RestartPacing,
} from '../../../src/operator/ended-workflows.js';
import { pause } from './pause.js';

export interface EndedWorkflowSweepOptions {
  temporal: Client;
  workflowTypes: readonly string[];
  logger: Logger;
  signal: AbortSignal;
  /** Whether the watcher still has an object with this uid. */
  isLive(uid: string): boolean;
  /** Handles one ended run of a live object; resolves true when its workflow was started again. */
  restart(run: EndedRun): Promise<boolean>;
  intervalMs?: number;
  pacing?: RestartPacing;
}

export const DEFAULT_SWEEP_INTERVAL_MS = 15_000;

/** The closed runs of these types since `since`, from visibility, with what their memo names. */
async function listEndedRuns(temporal: Client, workflowTypes: readonly string[], since: number): Promise<EndedRun[]> {
  const runs: EndedRun[] = [];
  for await (const info of temporal.workflow.list({ query: endedWorkflowsQuery(workflowTypes, since) })) {
    const ref = memoRef(info.memo);
    if (!ref) continue;
    runs.push({
      workflowId: info.workflowId,
      runId: info.runId,
      status: info.status.name,
      closedAt: info.closeTime?.getTime() ?? Date.now(),
      ...ref,
    });
  }
  return runs;
}

/** Runs until `signal` aborts. */
export async function runEndedWorkflowSweep(o: EndedWorkflowSweepOptions): Promise<void> {
  const sweep = new EndedWorkflowSweep(Date.now(), o.pacing);
  const log = o.logger.child({ component: 'ended-workflow-sweep' });
  const intervalMs = o.intervalMs ?? DEFAULT_SWEEP_INTERVAL_MS;
  while (!o.signal.aborted) {
    await pause(intervalMs, o.signal);
    if (o.signal.aborted) break;
    const queriedAt = Date.now();
    let runs: EndedRun[];
    try {
      runs = await listEndedRuns(o.temporal, o.workflowTypes, sweep.windowStart());
    } catch (err) {
      // The window stays where it was: the next query covers this one's runs too.
      log.warn({ err }, 'could not list the lifecycle workflows that ended; asking again next time');
      continue;
    }
    for (const run of sweep.take(runs, queriedAt, o.isLive)) {
      try {
        if (await o.restart(run)) sweep.restarted(run.uid, Date.now());
      } catch (err) {
        sweep.retry(run);
        log.warn(
          { err, workflowId: run.workflowId, runId: run.runId },
          'could not handle an ended workflow; trying again next time',
        );
      }
    }
    if (sweep.waitingCount() > 0)
      log.debug({ waiting: sweep.waitingCount() }, 'ended workflows whose restart waits: they ended again lately');
  }
}
