// Samples the node mutexes' queues for weka_drives_node_mutex_queue_depth: the queue lives in the mutex
// workflows, which cannot export metrics themselves, so every interval this lists the running
// `weka-node/*` mutex workflows of our task queue and asks each for its state.
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { OperatorMetrics } from './metrics.js';
import { mutexStateQuery, runningMutexesQuery } from '../../src/protocol.js';

const NODE_MUTEX_PREFIX = 'weka-node/';
const QUERY_DEADLINE_MS = 5_000;

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
        const view = await o.temporal.withDeadline(Date.now() + QUERY_DEADLINE_MS, () =>
          o.temporal.workflow.getHandle(wf.workflowId).query(mutexStateQuery),
        );
        o.metrics.mutexQueueDepth.set({ node }, view.queue.length);
        o.metrics.mutexBusy.set({ node }, view.running.length > 0 ? 1 : 0);
        seen.add(node);
      } catch (err) {
        // Closed between list and query, or no worker answered in time: no sample this round.
        o.logger.debug({ node, err }, 'mutex state query failed');
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
