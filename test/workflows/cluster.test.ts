// A WekaCluster's workflow alone, its activities stubbed: it forms the Weka cluster from its
// members and is Ready when they are; a refused port range waits and is asked again; a member
// whose node is lost is replaced on another node; fewer members take the highest slot away; a
// member waiting for a person holds the cluster Refused; and the deletion undoes it all in order.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import { eventually } from '../support/async.js';
import { ClusterWorld, FORMED_GUID } from './support/cluster-world.js';
import { closeEnvironment, withWorker, workflowClient } from './support/env.js';

let client: Client;
beforeAll(async () => {
  client = await workflowClient();
});
afterAll(closeEnvironment);

const names = (world: ClusterWorld) => [...world.members.keys()].sort();

/** Waits until the world has `n` members, each made by the cluster. */
const membersMade = (world: ClusterWorld, n: number) =>
  eventually(`${n} members`, async () => (world.members.size === n ? true : undefined), 30_000, { intervalMs: 50 });

/** Brings the cluster to Ready: its members made, waiting for the cluster, formed, then Ready. */
async function ready(world: ClusterWorld, n: number): Promise<void> {
  await membersMade(world, n);
  await world.membersIn('WaitingForCluster');
  await eventually('the Weka cluster to be formed', async () => (world.status.clusterGUID ? true : undefined));
  await world.membersIn('Ready');
  await world.phase('Ready');
}

describe('the cluster workflow', () => {
  it('forms the Weka cluster of its members, is Ready with them, and its deletion undoes it in order', async () => {
    const world = new ClusterWorld(client, { count: 3, nodes: ['node-a', 'node-b', 'node-c'] });
    await withWorker(world.activities(), async (queue) => {
      await world.start(queue);
      await ready(world, 3);
      expect(world.status.clusterGUID).toBe(FORMED_GUID);
      expect(world.formedOf).toEqual(['analytics-drive-0', 'analytics-drive-1', 'analytics-drive-2']);
      expect([...world.members.values()].map((m) => m.node).sort()).toEqual(['node-a', 'node-b', 'node-c']);
      expect(world.condition('Ready')).toMatchObject({ status: 'True' });
      await world.delete();
    });
    expect(world.members.size).toBe(0);
    expect(world.portsReleased).toBe(true);
    expect(world.finalizer).toBe(false);
    const order = world.calls.filter((c) =>
      ['deleteClusterContainers', 'sendMutexRequest', 'removeFinalizer'].includes(c),
    );
    expect(order.slice(-3)).toEqual(['deleteClusterContainers', 'sendMutexRequest', 'removeFinalizer']);
  });

  it('is Refused while no port range is free, and goes on once one is', async () => {
    const world = new ClusterWorld(client, { count: 1, nodes: ['node-a'] });
    world.portsRefused = 'every port range is taken';
    await withWorker(world.activities(), async (queue) => {
      await world.start(queue);
      await world.phase('Refused');
      expect(world.condition('PortsAllocated')).toMatchObject({ status: 'False', reason: 'PortRangeExhausted' });
      expect(world.members.size).toBe(0);
      world.portsRefused = undefined;
      await world.wakeUp();
      await ready(world, 1);
      await world.delete();
    });
  });

  it('replaces a member whose node is lost on another node, and says what the old one held', async () => {
    const world = new ClusterWorld(client, { count: 2, nodes: ['node-a', 'node-b', 'node-c'] });
    await withWorker(world.activities(), async (queue) => {
      await world.start(queue);
      await ready(world, 2);
      const lost = [...world.members.values()].find((m) => m.node === 'node-a')!;
      world.nodes.set('node-a', {
        name: 'node-a',
        selected: true,
        ready: false,
        lost: 'node node-a has not been Ready for 400 s',
      });
      await world.wakeUp();
      await eventually('a replacement on node-c', async () =>
        [...world.members.values()].some((m) => m.node === 'node-c') ? true : undefined,
      );
      expect(world.members.has(lost.name)).toBe(false);
      expect(world.condition('MembersReplaced')).toMatchObject({ reason: 'NodeLost' });
      expect(world.condition('MembersReplaced')?.message).toContain(`member ${lost.name} is replaced`);
      await world.membersIn('Ready');
      await world.phase('Ready');
      await world.delete();
    });
  });

  it('takes the highest slot away when it is asked for fewer members', async () => {
    const world = new ClusterWorld(client, { count: 3, nodes: ['node-a', 'node-b', 'node-c'] });
    await withWorker(world.activities(), async (queue) => {
      await world.start(queue);
      await ready(world, 3);
      await world.patchSpec({ driveContainers: 2 });
      await membersMade(world, 2);
      expect(names(world)).toEqual(['analytics-drive-0', 'analytics-drive-1']);
      await world.phase('Ready');
      await world.delete();
    });
  });

  it('is Refused, naming them, while a member waits for a person', async () => {
    const world = new ClusterWorld(client, { count: 2, nodes: ['node-a', 'node-b'] });
    await withWorker(world.activities(), async (queue) => {
      await world.start(queue);
      await ready(world, 2);
      world.members.get('analytics-drive-1')!.phase = 'Refused';
      await world.wakeUp();
      await world.phase('Refused');
      expect(world.condition('Ready')).toMatchObject({ status: 'False' });
      expect(world.condition('Stalled')).toMatchObject({ status: 'True', reason: 'MembersRefused' });
      expect(world.condition('Stalled')?.message).toContain('drive containers analytics-drive-1 are refused');
      await world.delete();
    });
  });

  it('says so when no selected node is Ready for a slot, and places it once one is', async () => {
    const world = new ClusterWorld(client, { count: 1, nodes: ['node-a'] });
    world.nodes.set('node-a', { name: 'node-a', selected: true, ready: false });
    await withWorker(world.activities(), async (queue) => {
      await world.start(queue);
      await eventually('the unplaced slot to be said', async () =>
        world.condition('ContainersPlaced')?.reason === 'NoMatchingNodes' ? true : undefined,
      );
      expect(world.members.size).toBe(0);
      world.nodes.set('node-a', { name: 'node-a', selected: true, ready: true });
      await world.wakeUp();
      await ready(world, 1);
      await world.delete();
    });
  });
});
