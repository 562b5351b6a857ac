// The migrate-to-drive-sharing operation's workflow alone, its activities stubbed: one member at a
// time, in the plan's order, each between two health checks of the clusters on its node: taken
// away, waited for until it is gone, its drives signed for the proxy and published, and its slot's
// new member waited for until it is Ready on virtual drives. A failed signing stops the campaign
// there, and so does the WekaCluster's deletion; a refused plan moves nothing.
import type { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SharingMigrationPlan } from '../../activities/sharing-migration.js';
import type { SlotState } from '../../activities/types.js';
import type { MigrationMember } from '../../src/lifecycle/sharing-migration.js';
import { closeEnvironment, withWorker, workflowClient } from './support/env.js';
import { OperationWorld } from './support/operation-world.js';

let client: Client;
beforeAll(async () => {
  client = await workflowClient();
});
afterAll(closeEnvironment);

const spec = { action: 'migrate-to-drive-sharing', payload: { migrateToDriveSharingPayload: { cluster: 'stores' } } };
const member = (i: number): MigrationMember => ({
  name: `stores-drive-${i}`,
  uid: `uid-${i}`,
  node: `node-${'ab'[i]}`,
  wholeDrives: true,
  deleting: false,
  serials: [`S${i}a`, `S${i}b`],
});
const planOf = (...members: MigrationMember[]): SharingMigrationPlan => ({
  ok: true,
  clusterUid: 'stores-uid',
  driveCapacity: 1000,
  numDrives: 2,
  members,
});
const twoMembers = (world: OperationWorld) => {
  world.migrationPlan = planOf(member(0), member(1));
};
const newMember = (phase: string, wholeDrives = false): NonNullable<SlotState['replacement']> => ({
  name: 'stores-drive-0-1',
  uid: 'new-0',
  node: 'node-a',
  phase,
  wholeDrives,
});

describe('migrate-to-drive-sharing', () => {
  it('moves one member at a time: taken away, gone, its drives signed and published, its new member Ready', async () => {
    const world = new OperationWorld(client, spec);
    twoMembers(world);
    world.slots.set('uid-0', [
      { leaving: true },
      { leaving: false },
      { leaving: false, replacement: newMember('Allocating') },
      { leaving: false, replacement: newMember('Ready') },
    ]);
    await withWorker(world.activities(), async (queue) => {
      await world.start(queue);
      await world.phase('Succeeded', 60_000);
    });
    expect(world.log).toEqual([
      'look node-a',
      'remove stores-drive-0',
      'slot uid-0',
      'slot uid-0',
      'sign node-a S0a,S0b',
      'publish node-a',
      'slot uid-0',
      'slot uid-0',
      'look node-a',
      'look node-b',
      'remove stores-drive-1',
      'slot uid-1',
      'sign node-b S1a,S1b',
      'publish node-b',
      'slot uid-1',
      'look node-b',
    ]);
    expect(world.status.results?.map((r) => [r.node, r.migration, r.member])).toEqual([
      ['node-a', 'Done', 'ops/stores-drive-0-1'],
      ['node-b', 'Done', 'ops/slot-1-new'],
    ]);
    expect(world.status.results?.[0]?.drives?.map((d) => d.serial)).toEqual(['S0a', 'S0b']);
    expect(world.condition('Succeeded')).toMatchObject({ status: 'True', reason: 'Migrated' });
    expect(world.events.filter((e) => e.startsWith('MemberMigrated'))).toHaveLength(2);
    // The cluster is the planned one by its uid: one created again under its name is not it.
    expect([...world.slotClusterUids]).toEqual(['stores-uid']);
  }, 90_000);

  it('waits for a new member made on whole drives no matter its phase: only virtual drives end a move', async () => {
    const world = new OperationWorld(client, spec);
    world.migrationPlan = planOf(member(0));
    world.slots.set('uid-0', [
      { leaving: false },
      { leaving: false, replacement: newMember('Ready', true) },
      { leaving: false, replacement: newMember('Ready') },
    ]);
    await withWorker(world.activities(), async (queue) => {
      await world.start(queue);
      await world.phase('Succeeded', 60_000);
    });
    expect(world.log.filter((l) => l === 'slot uid-0')).toHaveLength(3);
  }, 90_000);

  it('signs every drive the member held as it left, a drive it grew by since the plan among them', async () => {
    const world = new OperationWorld(client, spec);
    world.migrationPlan = planOf(member(0));
    world.heldAtRemoval.set('stores-drive-0', ['S0a', 'S0b', 'S0c']);
    await withWorker(world.activities(), async (queue) => {
      await world.start(queue);
      await world.phase('Succeeded', 60_000);
    });
    expect(world.log).toContain('sign node-a S0a,S0b,S0c');
  }, 90_000);

  it('stops at a member whose drives cannot be signed, and leaves the members after it alone', async () => {
    const world = new OperationWorld(client, spec);
    twoMembers(world);
    world.signFails.add('node-a');
    await withWorker(world.activities(), async (queue) => {
      await world.start(queue);
      await world.phase('Failed');
    });
    expect(world.log).not.toContain('remove stores-drive-1');
    expect(world.condition('Succeeded')).toMatchObject({ status: 'False', reason: 'DeviceRefused' });
    expect(world.condition('Succeeded')?.message).toContain('0 members moved, 1 not started');
    expect(world.status.results?.map((r) => r.migration)).toEqual(['Failed', 'Pending']);
  });

  it("stops, on the moving member's row, when the WekaCluster is deleted while the member moves", async () => {
    const world = new OperationWorld(client, spec);
    twoMembers(world);
    world.slots.set('uid-0', [{ leaving: true }, { leaving: false, clusterGone: true }]);
    await withWorker(world.activities(), async (queue) => {
      await world.start(queue);
      await world.phase('Failed');
    });
    expect(world.log.some((l) => l.startsWith('sign '))).toBe(false);
    expect(world.log).not.toContain('remove stores-drive-1');
    expect(world.condition('Succeeded')).toMatchObject({ status: 'False', reason: 'ClusterGone' });
    expect(world.status.results?.map((r) => r.migration)).toEqual(['Failed', 'Pending']);
    expect(world.status.results?.[0]?.error).toContain('WekaCluster stores was deleted');
  });

  it('refuses a plan it cannot carry out, moving nothing', async () => {
    const world = new OperationWorld(client, spec);
    world.migrationPlan = { ok: false, reason: 'NotWholeDrive', message: 'WekaCluster stores shares drives already' };
    await withWorker(world.activities(), async (queue) => {
      await world.start(queue);
      await world.phase('Refused');
    });
    expect(world.condition('Accepted')).toMatchObject({ status: 'False', reason: 'NotWholeDrive' });
    expect(world.log).toEqual([]);
  });
});
