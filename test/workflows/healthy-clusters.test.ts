// A campaign's wait for healthy clusters alone, its activities stubbed: the looks run in a child
// workflow that answers only when the clusters are healthy or the reason changes, and continues as
// new past its history limit, so a long wait never grows the operation's own history.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import type { ProxyDisruptionVerdict } from '../../activities/types.js';
import {
  WORKFLOW,
  operationWorkflowId,
  type HealthyClustersAnswer,
  type HealthyClustersInput,
} from '../../src/protocol.js';
import { activityTypes } from '../support/histories.js';
import { closeEnvironment, withWorker, workflowClient } from './support/env.js';
import { OperationWorld } from './support/operation-world.js';

let client: Client;
beforeAll(async () => {
  client = await workflowClient();
});
afterAll(closeEnvironment);

const unhealthy = (reason: string): ProxyDisruptionVerdict => ({
  allowed: false,
  clusters: [{ clusterGUID: 'g-1', containers: ['t1/drive-0'], reasons: [reason] }],
});
const healthy: ProxyDisruptionVerdict = { allowed: true, clusters: [] };
const spec = { action: 'rotate-ssdproxy', payload: { rotateSsdProxyPayload: { targetImage: 'proxy:2' } } };

describe('waiting for healthy clusters', () => {
  it('continues as new past its history limit, and answers from the last run', { timeout: 60_000 }, async () => {
    const world = new OperationWorld(client, spec);
    world.verdicts.set('node-a', [unhealthy('a rebuild'), unhealthy('a rebuild'), healthy]);
    const input: HealthyClustersInput = {
      node: 'node-a',
      shown: 'Weka cluster g-1 (t1/drive-0): a rebuild',
      looks: 0,
      historyLimit: 5,
    };
    const answer = await withWorker(world.activities(), async (taskQueue) => {
      const handle = await client.workflow.start(WORKFLOW.healthyClusters, {
        taskQueue,
        workflowId: `healthy-clusters-${world.uid}`,
        args: [input],
      });
      const result = (await handle.result()) as HealthyClustersAnswer;
      const last = await client.workflow.getHandle(handle.workflowId).describe();
      expect(last.runId).not.toBe(handle.firstExecutionRunId);
      return result;
    });
    expect(answer).toEqual({ allowed: true });
    expect(world.log).toEqual(['look node-a', 'look node-a', 'look node-a']);
  });

  it('answers a new reason at once, for the operation to show it', async () => {
    const world = new OperationWorld(client, spec);
    world.verdicts.set('node-a', [unhealthy('a rebuild')]);
    const answer = await withWorker(world.activities(), async (taskQueue) =>
      client.workflow.execute(WORKFLOW.healthyClusters, {
        taskQueue,
        workflowId: `healthy-clusters-${world.uid}`,
        args: [{ node: 'node-a', shown: '', looks: 0 } satisfies HealthyClustersInput],
      }),
    );
    expect(answer).toEqual({ allowed: false, why: 'Weka cluster g-1 (t1/drive-0): a rebuild' });
  });

  it("keeps every look out of the operation's own history", { timeout: 60_000 }, async () => {
    const world = new OperationWorld(client, spec);
    world.rotationPlan = { ok: true, targetImage: 'proxy:2', proxies: [{ node: 'node-a', image: 'proxy:1' }] };
    world.verdicts.set('node-a', [unhealthy('a rebuild'), unhealthy('a rebuild'), healthy]);
    await withWorker(world.activities(), async (queue) => {
      await world.start(queue);
      await world.phase('Succeeded', 50_000);
    });
    expect(world.log.filter((l) => l === 'look node-a')).toHaveLength(4);
    const history = await client.workflow.getHandle(operationWorkflowId(world.uid)).fetchHistory();
    expect(activityTypes(history)).not.toContain('proxyDisruptionVerdict');
    const children = (history.events ?? []).filter((e) => e.startChildWorkflowExecutionInitiatedEventAttributes);
    expect(children.length).toBe(3);
  });
});
