// A Ready drive container that loses its pod, and a bring-up step that fails: the workflow's logic
// alone, every activity stubbed.
import { afterAll, describe, expect, it } from 'vitest';
import { ApplicationFailure } from '@temporalio/activity';
import { podLostSignal, specChangedSignal } from '../../src/protocol.js';
import { eventually } from '../support/async.js';
import { ContainerWorld } from './support/container-world.js';
import { conditionReason, deleteContainer, phase, readyContainer, startContainer } from './support/drive-container.js';
import { closeEnvironment, withWorker, workflowClient } from './support/env.js';

afterAll(closeEnvironment);

const count = (world: ContainerWorld, call: string) => world.calls.filter((c) => c === call).length;

describe('a Ready drive container told its pod was lost', () => {
  it('makes its pod and the node proxy again, checks its membership and every drive, and is Ready again', async () => {
    const world = new ContainerWorld(await workflowClient(), { spec: { cluster: 'tenant' } });
    let lost = ['pod tenant/drive-0 is gone'];
    world.overrides.set('lostPods', () => lost);
    await withWorker(world.activities(), async (taskQueue) => {
      const handle = await readyContainer(world, taskQueue);
      const before = { pods: count(world, 'startContainerPod'), joins: count(world, 'joinCluster') };
      await handle.signal(podLostSignal);
      await eventually('the PodLost Event', async () =>
        world.events.some((e) => e.startsWith('PodLost: pod tenant/drive-0 is gone')) ? true : undefined,
      );
      lost = [];
      await eventually('the PodRecovered Event', async () => world.events.find((e) => e.startsWith('PodRecovered')));
      await phase(world, 'Ready');
      expect(world.events.find((e) => e.startsWith('PodRecovered'))).toContain('every drive in place');
      expect(world.condition('Ready')).toMatchObject({ status: 'True', reason: 'Ready' });
      expect(count(world, 'startContainerPod')).toBe(before.pods + 1);
      expect(count(world, 'joinCluster')).toBe(before.joins + 1);
      expect(count(world, 'signAndAddVirtualDrive')).toBe(2);
      await deleteContainer(world, handle);
    });
  });

  it('does nothing when the pods it was told of run again', async () => {
    const world = new ContainerWorld(await workflowClient(), { spec: { cluster: 'tenant' } });
    await withWorker(world.activities(), async (taskQueue) => {
      const handle = await readyContainer(world, taskQueue);
      await handle.signal(podLostSignal);
      await eventually('the pods looked at', async () => (count(world, 'lostPods') === 1 ? true : undefined));
      await phase(world, 'Ready');
      expect(count(world, 'startContainerPod')).toBe(1);
      expect(world.events.some((e) => e.startsWith('PodLost'))).toBe(false);
    });
  });
});

describe('a bring-up step that fails for good', () => {
  it('is shown as Error with the step, and is tried again at a spec change', async () => {
    const world = new ContainerWorld(await workflowClient(), { spec: { cluster: 'tenant' } });
    world.overrides.set('signAndAddVirtualDrive', () => {
      throw ApplicationFailure.nonRetryable('the drive is refused', 'WekaCommandRefused');
    });
    await withWorker(world.activities(), async (taskQueue) => {
      const handle = await startContainer(world, taskQueue);
      await phase(world, 'Error');
      const failed = await conditionReason(world, 'Ready', 'StepFailed');
      expect(failed?.message).toContain('the drive is refused');
      world.overrides.delete('signAndAddVirtualDrive');
      world.patchSpec({ driveCores: 2 });
      await handle.signal(specChangedSignal);
      await phase(world, 'Ready');
      expect(world.wekaDrives.size).toBe(1);
    });
  });

  it('that found its pod gone is tried again at once, making the pod again', async () => {
    const world = new ContainerWorld(await workflowClient(), { spec: { cluster: 'tenant' } });
    let gone = true;
    world.overrides.set('signAndAddVirtualDrive', () => {
      if (!gone) return { driveUUID: 'drive-1' };
      gone = false;
      throw ApplicationFailure.nonRetryable('the pod does not exist', 'ExecPodMissing');
    });
    await withWorker(world.activities(), async (taskQueue) => {
      await startContainer(world, taskQueue);
      // Without the retry it would wait for a spec change that never comes: any bound tells them
      // apart, and a generous one holds on a loaded machine (10 s failed once in CI).
      await phase(world, 'Ready', 40_000);
      expect(count(world, 'signAndAddVirtualDrive')).toBe(2);
    });
  });
});
