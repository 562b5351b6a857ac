// Samples the node mutexes' queues for weka_drives_node_mutex_queue_depth: the queue lives in the mutex
// workflows, which cannot export metrics themselves, so every interval this lists the running
// `weka-node/*` mutex workflows of our task queue and asks each busy one for its state. A query is
// answered by a worker, which replays the whole history of a mutex it no longer caches (and evicts
// another workflow for it); an idle mutex, with no workflow task and no activity pending, has
// nothing queued (a queued request is taken at its next workflow task and run by an activity), so
// the server's description of it is enough.
import type { Client, WorkflowExecutionDescription } from '@temporalio/client';
import type { Logger } from 'pino';
import type { OperatorMetrics } from './metrics.js';
import { mutexStateQuery, runningMutexesQuery } from '../../src/protocol.js';

const NODE_MUTEX_PREFIX = 'weka-node/';
const QUERY_DEADLINE_MS = 5_000;

/** Idle as the server describes it: no workflow task and no activity pending, so nothing queued. */
export function isIdleMutex({ raw }: WorkflowExecutionDescription): boolean {
  return !raw.pendingWorkflowTask && (raw.pendingActivities ?? []).length === 0;
}

export interface MutexDepthSampler {
  /** One sample now (also what the timer runs). */
  sample(): Promise<void>;
  stop(): void;
}

export function startMutexDepthSampler(o: {
  temporal: Client;
  taskQueue: string;
  metrics: OperatorMetrics;
  logger: Logger;
  intervalMs?: number;
}): MutexDepthSampler {
  let running: Promise<void> | undefined;
  const query = runningMutexesQuery(o.taskQueue);

  async function sampleOnce(): Promise<void> {
    const seen = new Set<string>();
    for await (const wf of o.temporal.workflow.list({ query })) {
      if (!wf.workflowId.startsWith(NODE_MUTEX_PREFIX)) continue;
      const node = wf.workflowId.slice(NODE_MUTEX_PREFIX.length);
      try {
        const handle = o.temporal.workflow.getHandle(wf.workflowId);
        const view = isIdleMutex(await handle.describe())
          ? { queued: 0, running: 0 }
          : await o.temporal
              .withDeadline(Date.now() + QUERY_DEADLINE_MS, () => handle.query(mutexStateQuery))
              .then((v) => ({ queued: v.queue.length, running: v.running.length }));
        o.metrics.mutexQueueDepth.set({ node }, view.queued);
        o.metrics.mutexBusy.set({ node }, view.running > 0 ? 1 : 0);
        seen.add(node);
      } catch (err) {
        // Closed since the list, or no worker answered in time: no sample this round.
        o.logger.debug({ node, err }, 'mutex not sampled');
      }
    }
    // A mutex that ended (idle) has nothing queued: drop its series instead of keeping a stale value.
    for (const { labels } of (await o.metrics.mutexQueueDepth.get()).values) {
      const node = String(labels.node);
      if (!seen.has(node)) {
        o.metrics.mutexQueueDepth.remove({ node });
        o.metrics.mutexBusy.remove({ node });
      }
    }
  }

  const sample = (): Promise<void> => {
    running ??= sampleOnce()
      .catch((err: unknown) => o.logger.warn({ err }, 'sampling the node mutexes failed'))
      .finally(() => (running = undefined));
    return running;
  };
  const timer = setInterval(() => void sample(), o.intervalMs ?? 15_000);
  timer.unref();
  return { sample, stop: () => clearInterval(timer) };
}
