// A drive container's teardown when its own pod cannot be used, and a teardown asked for while
// the object is not being deleted: the workflow's logic alone, every activity stubbed.
import { afterAll, describe, expect, it } from 'vitest';
import { ApplicationFailure } from '@temporalio/activity';
import { TEARDOWN_WITHOUT_POD_ANNOTATION } from '../../src/api/names.js';
import { deleteRequestedSignal } from '../../src/protocol.js';
import { eventually } from '../support/async.js';
import { CLUSTER_GUID, ContainerWorld, ONE_DRIVE } from './support/container-world.js';
import {
  conditionReason,
  deleteContainer,
  phase,
  readyContainer,
  runsOf,
  startContainer,
} from './support/drive-container.js';
import { closeEnvironment, withWorker, workflowClient } from './support/env.js';

afterAll(closeEnvironment);

const VIRTUAL_UUID = ONE_DRIVE.virtualDrives[0]!.virtualUUID;

/** Its pod cannot be reached once its deletion started, as when its node's kubelet is gone. */
function podUnreachableInTeardown(world: ContainerWorld, type = 'ExecUnreachable'): void {
  world.overrides.set('startContainerPod', () => {
    if (!world.container?.deleting) return { namespace: world.ref.namespace, pod: world.ref.name, container: 'weka' };
    throw ApplicationFailure.nonRetryable(`pod ${world.ref.namespace}/${world.ref.name} cannot be reached`, type);
  });
}

describe('a teardown that cannot reach its pod on a node that is down', () => {
  it('takes the container out of its cluster from a peer, keeps the allocation, and finishes at the annotation', async () => {
    const world = new ContainerWorld(await workflowClient(), { spec: { cluster: 'tenant' } });
    podUnreachableInTeardown(world);
    world.overrides.set('nodeReady', () => false);
    await withWorker(world.activities(), async (taskQueue) => {
      const handle = await readyContainer(world, taskQueue);
      world.markDeleted();
      await handle.signal(deleteRequestedSignal);
      const blocked = await conditionReason(world, 'TeardownBlocked', 'PodUnreachable');
      expect(blocked?.message).toContain(TEARDOWN_WITHOUT_POD_ANNOTATION);
      // The cluster stops counting on it at once; the node's capacity stays held until the devices are reached.
      expect(world.events.some((e) => e.startsWith('LeftClusterViaPeer'))).toBe(true);
      expect(world.wekaDrives.size).toBe(0);
      expect(world.wekaContainerId).toBeUndefined();
      expect(world.ledger.get(world.uid)).toEqual(ONE_DRIVE);
      expect(world.container?.finalizer).toBe(true);

      world.container!.annotations[TEARDOWN_WITHOUT_POD_ANNOTATION] = 'true';
      await handle.result();
    });
    const left = world.events.find((e) => e.startsWith('TeardownWithoutPod'));
    expect(left).toContain(VIRTUAL_UUID);
    expect(left).toContain(CLUSTER_GUID);
    expect(world.ledger.size).toBe(0);
    expect(world.container).toBeNull();
    expect(world.calls).not.toContain('unsignVirtualDrive');
  }, 60_000);
});

describe('a teardown that cannot reach its pod, with a low history limit', () => {
  it('continues as new while it waits, stays blocked holding its allocation, and finishes from the status', async () => {
    // Low enough that each run continues as new at its first pause (10 s) of the teardown.
    const limit = 20;
    const world = new ContainerWorld(await workflowClient(), { spec: { cluster: 'tenant' } });
    podUnreachableInTeardown(world);
    await withWorker(world.activities(), async (taskQueue) => {
      const handle = await startContainer(world, taskQueue, limit);
      await phase(world, 'Ready');
      const runsBefore = (await runsOf(handle.workflowId)).length;
      world.markDeleted();
      await handle.signal(deleteRequestedSignal);
      const strayed: string[] = [];
      await eventually(
        'the teardown to continue as new twice while it waits for the pod',
        async () => {
          const blocked = world.condition('TeardownBlocked');
          const shown = `${world.container?.status.phase} ${blocked?.status}/${blocked?.reason} ${world.ledger.size}`;
          if (blocked && shown !== 'Deleting True/PodUnreachable 1') strayed.push(shown);
          return (await runsOf(handle.workflowId)).length >= runsBefore + 2 ? true : undefined;
        },
        60_000,
        { intervalMs: 200 },
      );
      // It stayed blocked, holding the allocation, and said so with one Event, not one per run.
      expect(strayed).toEqual([]);
      expect(world.events.filter((e) => e.startsWith('PodUnreachable'))).toHaveLength(1);

      world.container!.annotations[TEARDOWN_WITHOUT_POD_ANNOTATION] = 'true';
      await handle.result();
      const chain = await runsOf(handle.workflowId);
      const client = await workflowClient();
      for (const runId of chain.slice(1, -1)) {
        const history = await client.workflow.getHandle(handle.workflowId, runId).fetchHistory();
        expect(history.events!.at(-1)?.workflowExecutionContinuedAsNewEventAttributes).toBeTruthy();
        expect(history.events!.length).toBeLessThan(limit + 60);
      }
    });
    expect(world.events.find((e) => e.startsWith('TeardownWithoutPod'))).toContain(VIRTUAL_UUID);
    expect(world.ledger.size).toBe(0);
    expect(world.container).toBeNull();
  }, 90_000);
});

describe('a teardown whose namespace is being deleted', () => {
  it('removes its drives through the node proxy after a peer took it out of the cluster', async () => {
    const world = new ContainerWorld(await workflowClient(), { spec: { cluster: 'tenant' } });
    podUnreachableInTeardown(world, 'NamespaceTerminating');
    await withWorker(world.activities(), async (taskQueue) => {
      const handle = await readyContainer(world, taskQueue);
      await deleteContainer(world, handle);
    });
    expect(world.events.some((e) => e.startsWith('LeftClusterViaPeer'))).toBe(true);
    expect(world.calls).toContain('unsignVirtualDrive');
    expect(world.calls).not.toContain('recordNodeEvent');
    expect(world.wekaDrives.size).toBe(0);
    expect(world.ledger.size).toBe(0);
    expect(world.container).toBeNull();
  });

  it('with no peer to reach its cluster, records on the Node what may remain there', async () => {
    const world = new ContainerWorld(await workflowClient(), { spec: { cluster: 'tenant' } });
    podUnreachableInTeardown(world, 'NamespaceTerminating');
    world.overrides.set('findPeerPod', () => null);
    await withWorker(world.activities(), async (taskQueue) => {
      const handle = await readyContainer(world, taskQueue);
      await deleteContainer(world, handle);
    });
    expect(world.nodeEvents).toEqual(['WekaContainerLeftBehind']);
    expect(world.calls).toContain('unsignVirtualDrive');
    expect(world.ledger.size).toBe(0);
    expect(world.container).toBeNull();
  });
});

describe('a cancel or a stray deleteRequested signal without a deletion', () => {
  it('is refused on the object, starts a new run, and undoes nothing; the deletion still tears down', async () => {
    const world = new ContainerWorld(await workflowClient(), { spec: { cluster: 'tenant' } });
    await withWorker(world.activities(), async (taskQueue) => {
      const handle = await readyContainer(world, taskQueue);
      await handle.cancel();
      const refused = await conditionReason(world, 'TeardownRefused', 'NotDeleting');
      expect(refused?.message).toMatch(/not being deleted/);
      await eventually('a second run', async () => ((await runsOf(handle.workflowId)).length === 2 ? true : undefined));
      await handle.signal(deleteRequestedSignal);
      await eventually('a third run', async () => ((await runsOf(handle.workflowId)).length === 3 ? true : undefined));
      expect(world.events.filter((e) => e.startsWith('TeardownRefused'))).toHaveLength(2);
      await phase(world, 'Ready');
      for (const undo of ['removeDriveFromCluster', 'unsignVirtualDrive', 'removeWekaContainer', 'deleteContainerPod'])
        expect(world.calls).not.toContain(undo);
      expect(world.ledger.get(world.uid)).toEqual(ONE_DRIVE);
      expect(world.wekaDrives.size).toBe(1);

      await deleteContainer(world, handle);
    });
    expect(world.container).toBeNull();
    expect(world.ledger.size).toBe(0);
    expect(world.wekaDrives.size).toBe(0);
  });
});

describe('a teardown whose object was replaced before it learnt its Weka container', () => {
  it("never takes the successor's Weka container of the same name out of the cluster", async () => {
    const world = new ContainerWorld(await workflowClient(), { spec: { cluster: 'tenant' } });
    // The join reached the cluster (container 9), but its answer never came back.
    world.loseJoinAnswers(9);
    await withWorker(world.activities(), async (taskQueue) => {
      const handle = await startContainer(world, taskQueue);
      await phase(world, 'Error');
      // Its finalizer removed by hand, the name created again: the successor joined under the
      // same Weka name and now holds container 9.
      const old = world.replaceObject();
      world.container!.status.containerID = 9;
      await handle.signal(deleteRequestedSignal);
      await handle.result();
      expect(world.ledger.has(old.uid)).toBe(false);
    });
    expect(world.wekaContainerId).toBe(9);
    expect(world.calls).not.toContain('removeWekaContainer');
    expect(world.calls).toContain('unsignVirtualDrive');
    expect(world.nodeEvents).toEqual(['WekaContainerLeftBehind']);
  });
});
