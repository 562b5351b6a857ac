// Waiting, before a campaign disrupts a node, until every Weka cluster with a container on it is
// healthy (by its own `weka status`, proxyDisruptionVerdict): as long as it takes, never failing,
// with what it waits for on the node's result and as an Event.
//
// The looks run in a child workflow that continues as new when its history grows long and answers
// only when the clusters are healthy or the reason changes: a cluster degraded for weeks, looked at
// every 5 minutes, would otherwise fill the operation's own history up to Temporal's hard limit,
// where Temporal ends the workflow.
import { continueAsNew, executeChild, patched, sleep } from '@temporalio/workflow';
import type { ProxyDisruptionVerdict } from '../activities/types.js';
import { backoffDelay } from '../src/backoff.js';
import { healthyClustersWorkflowId, type HealthyClustersAnswer, type HealthyClustersInput } from '../src/protocol.js';
import { weka } from './activities.js';
import { pastHistoryLimit } from './lifecycle.js';
import type { OperationRun } from './manual-operation/run.js';
import type { NodeResult } from './operation-status.js';

/** How soon a node waiting for healthy clusters looks again: 10 s, doubling up to 5 minutes. */
export const HEALTH_RECHECK = { initialMs: 10_000, maxMs: 300_000, jitter: false } as const;

/** Workflows that 1.0.0-rc.1 started look in the operation's own history (see the top of this file). */
const LOOKS_IN_A_CHILD = 'healthy-clusters-child';

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
  const show = async (why: string) => {
    await run.status.result({ ...base, ...waiting, waitingFor: why });
    await run.status.event('Warning', 'WaitingForHealthyClusters', `${when}, waiting for ${why}`);
    await run.status.enter('Running', `${when}, waiting for ${why}`);
  };
  if (!patched(LOOKS_IN_A_CHILD)) return lookInOwnHistory(base.node, show);
  const workflowId = healthyClustersWorkflowId(run.uid, base.node);
  const limit = run.life.historyLimit;
  let next: HealthyClustersInput = { node: base.node, shown: '', looks: 0, ...(limit ? { historyLimit: limit } : {}) };
  for (;;) {
    const answer = await executeChild(healthyClustersWorkflow, { workflowId, args: [next] });
    // The caller's next result replaces the waiting one, waitingFor and all.
    if (answer.allowed) return;
    await show(answer.why);
    next = { ...next, shown: answer.why, looks: 1 };
  }
}

/** The child: looks until the clusters are healthy or the reason differs from the one shown. */
export async function healthyClustersWorkflow(input: HealthyClustersInput): Promise<HealthyClustersAnswer> {
  for (let looks = input.looks; ; looks++) {
    if (looks > 0) await sleep(backoffDelay(looks, HEALTH_RECHECK));
    const verdict = await weka.proxyDisruptionVerdict({ node: input.node });
    if (verdict.allowed) return { allowed: true };
    const why = unhealthy(verdict);
    if (why !== input.shown) return { allowed: false, why };
    if (pastHistoryLimit(input)) await continueAsNew<typeof healthyClustersWorkflow>({ ...input, looks: looks + 1 });
  }
}

/** The wait as 1.0.0-rc.1 made it, every look in the operation's own history. */
async function lookInOwnHistory(node: string, show: (why: string) => Promise<void>): Promise<void> {
  let shown = '';
  for (let looks = 1; ; looks++) {
    const verdict = await weka.proxyDisruptionVerdict({ node });
    if (verdict.allowed) return;
    const why = unhealthy(verdict);
    if (why !== shown) {
      shown = why;
      looks = 1;
      await show(why);
    }
    await sleep(backoffDelay(looks, HEALTH_RECHECK));
  }
}

function unhealthy(verdict: ProxyDisruptionVerdict): string {
  return verdict.clusters
    .filter((c) => c.reasons.length > 0)
    .map((c) => `Weka cluster ${c.clusterGUID} (${c.containers.join(', ')}): ${c.reasons.join('; ')}`)
    .join(' | ');
}
