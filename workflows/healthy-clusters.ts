// Waiting, before a campaign disrupts a node, until every Weka cluster with a container on it is
// healthy (by its own `weka status`, proxyDisruptionVerdict): as long as it takes, never failing,
// with what it waits for on the node's result and as an Event.
import { sleep } from '@temporalio/workflow';
import { backoffDelay } from '../src/backoff.js';
import { weka } from './activities.js';
import type { OperationRun } from './manual-operation/run.js';
import type { NodeResult } from './operation-status.js';

/** How soon a node waiting for healthy clusters looks again: 10 s, doubling up to 5 minutes. */
export const HEALTH_RECHECK = { initialMs: 10_000, maxMs: 300_000, jitter: false } as const;

/**
 * Returns once every Weka cluster with a container on the node is healthy; until then the node's
 * result says what it waits for, and each new reason is an Event.
 */
export async function waitForHealthyClusters(
  run: OperationRun,
  base: NodeResult,
  when: string,
  waiting: { rotation: 'Waiting' } | { migration: 'Waiting' },
): Promise<void> {
  let shown = '';
  for (let looks = 1; ; looks++) {
    const verdict = await weka.proxyDisruptionVerdict({ node: base.node });
    // The caller's next result replaces this one, waitingFor and all.
    if (verdict.allowed) return;
    const why = verdict.clusters
      .filter((c) => c.reasons.length > 0)
      .map((c) => `Weka cluster ${c.clusterGUID} (${c.containers.join(', ')}): ${c.reasons.join('; ')}`)
      .join(' | ');
    if (why !== shown) {
      shown = why;
      looks = 1;
      await run.status.result({ ...base, ...waiting, waitingFor: why });
      await run.status.event('Warning', 'WaitingForHealthyClusters', `${when}, waiting for ${why}`);
      await run.status.enter('Running', `${when}, waiting for ${why}`);
    }
    await sleep(backoffDelay(looks, HEALTH_RECHECK));
  }
}
