// A Ready drive container whose drives were blocked (block-drives), on its own: told of it, it asks
// its node's mutex again, signs and adds each replacement before it takes the old drive out of its
// Weka cluster and off the device, and has the mutex forget it; when no replacement fits, it keeps
// its drives, says why, and says so again once nothing of it is on a blocked drive any more.
import { afterAll, describe, expect, it } from 'vitest';
import type { ContainerAllocation } from '../../src/allocation/types.js';
import { capacityReleasedSignal, drivesBlockedSignal, nodeMutexId } from '../../src/protocol.js';
import { ContainerWorld, ONE_DRIVE, refused } from './support/container-world.js';
import { conditionReason, phase, readyContainer } from './support/drive-container.js';
import { closeEnvironment, withWorker, workflowClient } from './support/env.js';

afterAll(closeEnvironment);

const OLD = ONE_DRIVE.virtualDrives[0]!;
const NEW = { ...OLD, virtualUUID: '44444444-4444-4444-8444-444444444444', physicalUUID: 'p-other', serial: 'S-1' };
const REPLACED: ContainerAllocation = { ...ONE_DRIVE, virtualDrives: [NEW], replacedVirtualDrives: [OLD] };

describe('a drive container whose drive was blocked', () => {
  it('adds the replacement first, then removes the old drive from its cluster and the device', async () => {
    const world = new ContainerWorld(await workflowClient(), { spec: { cluster: 'tenant' } });
    await withWorker(world.activities(), async (taskQueue) => {
      const handle = await readyContainer(world, taskQueue);
      // What the node's mutex decided when the drive was blocked.
      world.ledger.set(world.uid, REPLACED);
      world.calls.length = 0;
      await handle.signal(drivesBlockedSignal);
      await conditionReason(world, 'DrivesReplaced', 'Replaced');
      await phase(world, 'Ready');
    });
    const order = world.calls.filter((c) =>
      ['signAndAddVirtualDrive', 'removeDriveFromCluster', 'unsignVirtualDrive'].includes(c),
    );
    expect(order).toEqual(['signAndAddVirtualDrive', 'removeDriveFromCluster', 'unsignVirtualDrive']);
    expect([...world.wekaDrives]).toEqual([NEW.virtualUUID]);
    expect(world.ledger.get(world.uid)).toEqual({ ...ONE_DRIVE, virtualDrives: [NEW] });
    expect(world.container?.status.addedVirtualDrives).toEqual([NEW.virtualUUID]);
    expect(world.events.some((e) => e.startsWith('DrivesReplaced'))).toBe(true);
  });

  it(
    'waits, still Ready and saying so, while Weka phases the old drive out, then removes it',
    { timeout: 60_000 },
    async () => {
      const world = new ContainerWorld(await workflowClient(), { spec: { cluster: 'tenant' } });
      let looks = 0;
      world.overrides.set('removeDriveFromCluster', (input) => {
        const { virtualUUID } = input as { virtualUUID: string };
        if (++looks === 1) refused('DrivePhasingOut', `drive ${virtualUUID} is PHASING_OUT`);
        world.wekaDrives.delete(virtualUUID);
      });
      await withWorker(world.activities(), async (taskQueue) => {
        const handle = await readyContainer(world, taskQueue);
        world.ledger.set(world.uid, REPLACED);
        await handle.signal(drivesBlockedSignal);
        const waiting = await conditionReason(world, 'DrivesPhasingOut', 'PhasingOut');
        expect(waiting.message).toContain('PHASING_OUT');
        expect(world.condition('Ready')?.status).toBe('True');
        await conditionReason(world, 'DrivesReplaced', 'Replaced', 30_000);
      });
      expect(looks).toBe(2);
      expect(world.condition('DrivesPhasingOut')).toMatchObject({ status: 'False', reason: 'PhasedOut' });
      expect([...world.wekaDrives]).toEqual([NEW.virtualUUID]);
    },
  );

  it('keeps its drives and says why while no replacement fits, and stops saying so once none is needed', async () => {
    const world = new ContainerWorld(await workflowClient(), { spec: { cluster: 'tenant' } });
    await withWorker(world.activities(), async (taskQueue) => {
      const handle = await readyContainer(world, taskQueue);
      world.noReplacement = 'virtual drive 1111 is on a blocked drive and no other drive has the room';
      await handle.signal(drivesBlockedSignal);
      const kept = await conditionReason(world, 'DrivesReplaced', 'NoReplacementCapacity');
      expect(kept.status).toBe('False');
      expect(world.container?.status.phase).toBe('Ready');
      expect(world.wekaDrives.has(OLD.virtualUUID)).toBe(true);
      expect(world.events.some((e) => e.startsWith('NoReplacementCapacity'))).toBe(true);
      // The drive is unblocked: the mutex says capacity was released, and nothing is to be replaced.
      world.noReplacement = undefined;
      await handle.signal(capacityReleasedSignal, { mutexId: nodeMutexId('node-a') });
      const now = await conditionReason(world, 'DrivesReplaced', 'NothingToReplace');
      expect(now.status).toBe('True');
    });
    expect(world.calls).not.toContain('removeDriveFromCluster');
  });
});
