// The drive container's lifecycle on its own: every activity stubbed over a world of plain data
// (support/container-world.ts), so each edge case of the workflow's logic runs in a second or two
// without a control plane. What the workflow does between the real parts (pods, the simulator, the
// apiserver) is proven in test/integration/.
import { afterAll, describe, expect, it } from 'vitest';
import { capacityReleasedSignal, nodeMutexId, deleteRequestedSignal, specChangedSignal } from '../../src/protocol.js';
import { eventually } from '../support/async.js';
import { ContainerWorld, ONE_DRIVE } from './support/container-world.js';
import { deleteContainer, phase, readyContainer, runsOf, startContainer } from './support/drive-container.js';
import { closeEnvironment, withWorker, workflowClient } from './support/env.js';

afterAll(closeEnvironment);

describe('a drive container', () => {
  it('comes up Ready, then its deletion undoes everything and removes the finalizer', async () => {
    const world = new ContainerWorld(await workflowClient(), { spec: { cluster: 'tenant' } });
    await withWorker(world.activities(), async (taskQueue) => {
      const handle = await readyContainer(world, taskQueue);
      expect(world.ledger.get(world.uid)).toEqual(ONE_DRIVE);
      expect(world.wekaDrives.size).toBe(1);
      await deleteContainer(world, handle);
    });
    expect(world.container).toBeNull();
    expect(world.ledger.size).toBe(0);
    expect(world.wekaDrives.size).toBe(0);
    expect(world.wekaContainerId).toBeUndefined();
  });
});

describe('a drive container without spec.nodeName', () => {
  it('is Refused saying so, and comes up once a node is named', async () => {
    const world = new ContainerWorld(await workflowClient(), { node: null, spec: { cluster: 'tenant' } });
    world.nodes.add('node-b');
    await withWorker(world.activities(), async (taskQueue) => {
      const handle = await startContainer(world, taskQueue);
      await phase(world, 'Refused');
      expect(world.condition('Placed')).toMatchObject({ status: 'False', reason: 'NoNodeName' });
      expect(world.condition('Stalled')).toMatchObject({ status: 'True', reason: 'NoNodeName' });
      expect(world.calls).not.toContain('sendMutexRequest');
      world.patchSpec({ nodeName: 'node-b' });
      await handle.signal(specChangedSignal);
      await phase(world, 'Ready');
      expect(world.condition('Placed')).toMatchObject({ status: 'True', message: 'on node node-b' });
    });
  });

  it('deleted before a node is named, asks no mutex anything and goes', async () => {
    const world = new ContainerWorld(await workflowClient(), { node: null });
    await withWorker(world.activities(), async (taskQueue) => {
      const handle = await startContainer(world, taskQueue);
      await phase(world, 'Refused');
      await deleteContainer(world, handle);
    });
    expect(world.container).toBeNull();
    expect(world.calls).not.toContain('sendMutexRequest');
    expect(world.calls).not.toContain('deleteContainerPod');
  });
});

describe('a drive container whose named node does not exist', () => {
  it('waits saying so, starts no mutex for the made-up name, and is deleted cleanly', async () => {
    const world = new ContainerWorld(await workflowClient(), { node: 'no-such-node' });
    world.nodes.delete('no-such-node');
    await withWorker(world.activities(), async (taskQueue) => {
      const handle = await startContainer(world, taskQueue);
      await phase(world, 'Pending');
      await eventually('the Placed condition', async () => world.condition('Placed'), 20_000, { intervalMs: 50 });
      expect(world.condition('Placed')).toMatchObject({ status: 'False', reason: 'NodeNotFound' });
      expect(world.condition('Placed')?.message).toContain('no-such-node');
      // Waiting for a node that may register is work in progress, not a wait for a person.
      expect(world.condition('Reconciling')).toMatchObject({ status: 'True', reason: 'NodeNotFound' });
      await deleteContainer(world, handle);
    });
    expect(world.container).toBeNull();
    expect(world.calls).not.toContain('sendMutexRequest');
  });
});

describe('a drive container waiting for capacity', () => {
  it('continues as new while it waits, keeps saying why, and is allocated once capacity is freed', async () => {
    const limit = 60;
    const world = new ContainerWorld(await workflowClient(), { spec: { cluster: 'tenant' } });
    world.noCapacity = 'not enough TLC capacity: need 1000 GiB, 0 GiB free';
    await withWorker(world.activities(), async (taskQueue) => {
      const handle = await startContainer(world, taskQueue, limit);
      await eventually('the refusal', async () => world.condition('Allocated'), 20_000, { intervalMs: 50 });
      expect(world.condition('Allocated')).toMatchObject({ status: 'False', reason: 'InsufficientDriveCapacity' });
      // Each release on the node makes it ask again: history grows until it continues as new.
      const client = await workflowClient();
      const firstRun = (await handle.describe()).runId;
      await eventually(
        'two continues-as-new',
        async () => {
          await client.workflow
            .getHandle(handle.workflowId)
            .signal(capacityReleasedSignal, { mutexId: nodeMutexId('node-a') });
          return (await runsOf(handle.workflowId)).length >= 3 ? true : undefined;
        },
        40_000,
        { intervalMs: 100 },
      );
      const runs = await runsOf(handle.workflowId);
      expect(runs[0]).toBe(firstRun);
      for (const runId of runs.slice(0, -1)) {
        const history = await client.workflow.getHandle(handle.workflowId, runId).fetchHistory();
        expect(history.events!.length).toBeLessThan(limit + 40);
      }
      expect(world.container?.status.phase).toBe('Allocating');
      // Said once, not at every ask or every run.
      expect(world.events.filter((e) => e.startsWith('InsufficientDriveCapacity'))).toHaveLength(1);

      world.noCapacity = undefined;
      await client.workflow
        .getHandle(handle.workflowId)
        .signal(capacityReleasedSignal, { mutexId: nodeMutexId('node-a') });
      await phase(world, 'Ready');
      expect(world.ledger.get(world.uid)).toEqual(ONE_DRIVE);
      expect(world.calls.filter((c) => c === 'signAndAddVirtualDrive')).toHaveLength(1);
    });
  });
});

describe('a join whose answer was lost', () => {
  it('is undone by the teardown: the Weka container of the name is found and leaves the cluster', async () => {
    const world = new ContainerWorld(await workflowClient(), { spec: { cluster: 'tenant' } });
    // The join reached the cluster, but its answer never came back; every later attempt fails.
    world.loseJoinAnswers(9);
    await withWorker(world.activities(), async (taskQueue) => {
      const handle = await startContainer(world, taskQueue);
      await phase(world, 'Error');
      expect(world.container?.status.containerID).toBeUndefined();
      await deleteContainer(world, handle);
    });
    expect(world.calls).toContain('findWekaContainer');
    expect(world.wekaContainerId).toBeUndefined();
    expect(world.ledger.size).toBe(0);
    expect(world.container).toBeNull();
  });
});

describe('a workflow whose object was replaced', () => {
  it('frees its own allocation and touches nothing of the new object of the same name', async () => {
    const world = new ContainerWorld(await workflowClient(), { spec: { cluster: 'tenant' } });
    await withWorker(world.activities(), async (taskQueue) => {
      const handle = await readyContainer(world, taskQueue);
      const old = world.replaceObject();
      const renewed = world.container!;
      world.ledger.set(renewed.uid, { ...ONE_DRIVE, wekaPort: 15000, agentPort: 15100 });
      // A late watcher, or a stray signal, tells the old workflow to tear down.
      await handle.signal(deleteRequestedSignal);
      await handle.result();
      expect(world.ledger.has(old.uid)).toBe(false);
      expect(world.ledger.has(renewed.uid)).toBe(true);
      expect(world.container).toBe(renewed);
      expect(renewed.finalizer).toBe(true);
      expect(renewed.status.phase).toBe('Ready');
      // Its pod is named like the new object's: the old workflow deletes it only if it is its own.
      expect(world.podDeletions).toEqual([{ uid: old.uid }]);
    });
  });
});
