// The drive verification and a Ready drive container it tells of missing virtual drives: the
// workflows' logic alone, every activity stubbed.
import { afterAll, describe, expect, it } from 'vitest';
import {
  driveVerificationWorkflowId,
  drivesMissingSignal,
  WORKFLOW,
  type DriveVerificationInput,
} from '../../src/protocol.js';
import { eventually } from '../support/async.js';
import { ContainerWorld } from './support/container-world.js';
import { deleteContainer, phase, readyContainer } from './support/drive-container.js';
import { closeEnvironment, withWorker, workflowClient } from './support/env.js';

afterAll(closeEnvironment);

const count = (world: ContainerWorld, call: string) => world.calls.filter((c) => c === call).length;
const MISSING = ["v-1 (not on the node's devices nor in its Weka cluster)"];

describe('a Ready drive container told of missing virtual drives', () => {
  it('is not Ready while it signs and adds every drive again, then Ready with DrivesRestored', async () => {
    const world = new ContainerWorld(await workflowClient(), { spec: { cluster: 'tenant' } });
    await withWorker(world.activities(), async (taskQueue) => {
      const handle = await readyContainer(world, taskQueue);
      const added = count(world, 'signAndAddVirtualDrive');
      await handle.signal(drivesMissingSignal, { missing: MISSING });
      await eventually('the DrivesRestored Event', async () =>
        world.events.find((e) => e.startsWith('DrivesRestored')),
      );
      await phase(world, 'Ready');
      expect(world.events.find((e) => e.startsWith('DrivesMissing'))).toContain(
        "the drive verification found v-1 (not on the node's devices nor in its Weka cluster) missing",
      );
      expect(count(world, 'signAndAddVirtualDrive')).toBe(2 * added);
      expect(world.condition('Ready')).toMatchObject({ status: 'True', reason: 'Ready' });
      expect(count(world, 'startContainerPod')).toBe(1);
      await deleteContainer(world, handle);
    });
  });
});

describe('the drive verification', () => {
  it('asks every node with a proxy, tells the containers it finds missing drives, and sweeps again after its period', async () => {
    const client = await workflowClient();
    const world = new ContainerWorld(client, { spec: { cluster: 'tenant' } });
    await withWorker(world.activities(), async (taskQueue) => {
      const container = await readyContainer(world, taskQueue);
      // The first sweep finds the drive missing; the later ones find it in place.
      const found = { checked: 1, missing: [{ ref: world.ref, uid: world.container!.uid, missing: MISSING }] };
      let sweeps = 0;
      Object.defineProperty(world, 'verification', {
        get: () => (sweeps++ === 0 ? found : { checked: 1, missing: [] }),
      });
      const input: DriveVerificationInput = { periodSeconds: 1 };
      const verification = await client.workflow.start(WORKFLOW.driveVerification, {
        taskQueue,
        workflowId: driveVerificationWorkflowId(taskQueue),
        args: [input],
      });
      await eventually('the DrivesRestored Event', async () =>
        world.events.find((e) => e.startsWith('DrivesRestored')),
      );
      const firstRun = verification.firstExecutionRunId;
      await eventually('a later sweep, in a run of its own', async () => {
        const { runId } = await client.workflow.getHandle(verification.workflowId).describe();
        return runId !== firstRun && count(world, 'nodesToVerify') >= 2 ? true : undefined;
      });
      await phase(world, 'Ready');
      expect(world.events.filter((e) => e.startsWith('DrivesMissing'))).toHaveLength(1);
      await client.workflow.getHandle(verification.workflowId).terminate('test over');
      await deleteContainer(world, container);
    });
  });
});
