// The rotate-ssdproxy operation's workflow alone, its activities stubbed: one node at a time, each
// restart between two health checks of the clusters on the node; a wait (never a failure) while a
// cluster is unhealthy; a stop at a node whose new proxy does not run; a refused plan.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import type { ProxyDisruptionVerdict } from '../../activities/types.js';
import { closeEnvironment, withWorker, workflowClient } from './support/env.js';
import { OperationWorld } from './support/operation-world.js';
import { eventually } from '../support/async.js';

let client: Client;
beforeAll(async () => {
  client = await workflowClient();
});
afterAll(closeEnvironment);

const spec = { action: 'rotate-ssdproxy', payload: { rotateSsdProxyPayload: { targetImage: 'proxy:2' } } };
const threeNodes = (world: OperationWorld, images = ['proxy:1', 'proxy:1', 'proxy:1']) => {
  world.rotationPlan = {
    ok: true,
    targetImage: 'proxy:2',
    proxies: images.map((image, i) => ({ node: `node-${'abc'[i]}`, image })),
  };
};
const rebuilding: ProxyDisruptionVerdict = {
  allowed: false,
  clusters: [{ clusterGUID: 'g-1', containers: ['t1/drive-0'], reasons: ['a rebuild is moving data (40% done)'] }],
};

describe('rotate-ssdproxy', () => {
  it('restarts one node at a time, each between two health checks, and skips a proxy that runs the image', async () => {
    const world = new OperationWorld(client, spec);
    threeNodes(world, ['proxy:1', 'proxy:2', 'proxy:1']);
    await withWorker(world.activities(), async (queue) => {
      await world.start(queue);
      await world.phase('Succeeded');
    });
    expect(world.log).toEqual([
      'look node-a',
      'rotate node-a proxy:2',
      'look node-a',
      'look node-c',
      'rotate node-c proxy:2',
      'look node-c',
    ]);
    expect(world.status.results).toEqual([
      { node: 'node-a', rotation: 'Done', proxyImage: 'proxy:2', previousProxyImage: 'proxy:1' },
      { node: 'node-b', rotation: 'Skipped', proxyImage: 'proxy:2' },
      { node: 'node-c', rotation: 'Done', proxyImage: 'proxy:2', previousProxyImage: 'proxy:1' },
    ]);
    expect(world.condition('Succeeded')).toMatchObject({ status: 'True', reason: 'Rotated' });
    expect(world.events.filter((e) => e.startsWith('SsdProxyRotated'))).toHaveLength(2);
  });

  it('waits, never failing, while a cluster on the node is unhealthy, and says what it waits for', async () => {
    const world = new OperationWorld(client, spec);
    threeNodes(world);
    world.verdicts.set('node-b', [rebuilding, { allowed: true, clusters: [] }]);
    await withWorker(world.activities(), async (queue) => {
      await world.start(queue);
      const waiting = await eventually('node-b to wait', async () =>
        world.status.results?.find((r) => r.node === 'node-b' && r.rotation === 'Waiting'),
      );
      expect(waiting.waitingFor).toContain('Weka cluster g-1 (t1/drive-0): a rebuild is moving data');
      expect(world.status.phase).toBe('Running');
      expect(world.log).not.toContain('rotate node-b proxy:2');
      await world.phase('Succeeded', 40_000);
    });
    const order = world.log.filter((l) => l.startsWith('rotate'));
    expect(order).toEqual(['rotate node-a proxy:2', 'rotate node-b proxy:2', 'rotate node-c proxy:2']);
    expect(world.log.filter((l) => l === 'look node-b')).toHaveLength(3);
    expect(world.events.filter((e) => e.startsWith('WaitingForHealthyClusters'))).toHaveLength(1);
  }, 60_000);

  it('stops at a node whose new ssdproxy does not run, and leaves the nodes after it alone', async () => {
    const world = new OperationWorld(client, spec);
    threeNodes(world);
    world.proxyFails.add('node-b');
    await withWorker(world.activities(), async (queue) => {
      await world.start(queue);
      await world.phase('Failed');
    });
    expect(world.log.filter((l) => l.startsWith('rotate'))).toEqual(['rotate node-a proxy:2', 'rotate node-b proxy:2']);
    expect(world.condition('Succeeded')).toMatchObject({ status: 'False', reason: 'ProxyNotRunning' });
    expect(world.condition('Succeeded')?.message).toContain('1 nodes rotated, 1 not started');
    expect(world.status.results?.find((r) => r.node === 'node-b')).toMatchObject({
      rotation: 'Failed',
      error: 'node node-b: it does not run',
    });
    expect(world.status.results?.find((r) => r.node === 'node-c')?.rotation).toBe('Pending');
  });

  it('refuses to run beside another campaign, restarting nothing', async () => {
    const world = new OperationWorld(client, spec);
    world.rotationPlan = {
      ok: false,
      reason: 'AnotherCampaignRunning',
      message: 'rotate-ssdproxy ops/first has not ended',
    };
    await withWorker(world.activities(), async (queue) => {
      await world.start(queue);
      await world.phase('Refused');
    });
    expect(world.condition('Accepted')).toMatchObject({ status: 'False', reason: 'AnotherCampaignRunning' });
    expect(world.log).toEqual([]);
  });

  it('restarts nothing more once it is deleted while it waits', async () => {
    const world = new OperationWorld(client, spec);
    threeNodes(world);
    world.verdicts.set('node-a', [rebuilding]);
    await withWorker(world.activities(), async (queue) => {
      const handle = await world.start(queue);
      await eventually('node-a to wait', async () =>
        world.status.results?.find((r) => r.node === 'node-a' && r.rotation === 'Waiting'),
      );
      await world.delete(handle);
    });
    expect(world.finalizer).toBe(false);
    expect(world.log.filter((l) => l.startsWith('rotate'))).toEqual([]);
  });
});
