// The block-drives operation's workflow alone, its activities stubbed: after the node's mutex blocked
// the drives and gave replacements, it waits until every replaced drive is out of the ledger (its
// container removed it), shows each drive's state, names the drives that stay with their
// containers for lack of room, and refuses what the mutex refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import type { BlockDrivesResult } from '../../activities/types.js';
import { closeEnvironment, withWorker, workflowClient } from './support/env.js';
import { OperationWorld } from './support/operation-world.js';

let client: Client;
beforeAll(async () => {
  client = await workflowClient();
});
afterAll(closeEnvironment);

const spec = { action: 'block-drives', payload: { blockDrivesPayload: { node: 'node-a', physicalUUIDs: ['p1'] } } };
const decided: BlockDrivesResult = {
  serials: [],
  physicalUUIDs: ['p1'],
  containers: [
    {
      container: 't1/drive-0',
      uid: 'u1',
      replaced: [{ old: 'a', replacement: 'a2' }],
      unplaced: [],
      removing: ['a'],
      wholeDrives: [],
    },
    {
      container: 't2/drive-0',
      uid: 'u2',
      replaced: [{ old: 'b', replacement: 'b2' }],
      unplaced: ['c'],
      removing: ['b'],
      wholeDrives: [],
    },
  ],
};

describe('block-drives', () => {
  it('waits until every replaced drive is removed, and names the drives kept for lack of room', async () => {
    const world = new OperationWorld(client, spec);
    world.blockAnswer = { ok: true, result: decided };
    world.replacedLeft.set('u1', [['a'], []]);
    world.replacedLeft.set('u2', [['b'], []]);
    await withWorker(world.activities(), async (queue) => {
      await world.start(queue);
      await world.phase('Succeeded', 60_000);
    });
    const [result] = world.status.results!;
    expect(result).toEqual({
      node: 'node-a',
      blocked: ['physical UUID p1'],
      replacements: [
        { container: 't1/drive-0', virtualUUID: 'a', replacement: 'a2', state: 'Replaced' },
        { container: 't2/drive-0', virtualUUID: 'b', replacement: 'b2', state: 'Replaced' },
        { container: 't2/drive-0', virtualUUID: 'c', state: 'NoCapacity' },
      ],
    });
    expect(world.ledgerReads.filter((u) => u === 'u2').length).toBeGreaterThanOrEqual(2);
    expect(world.condition('Succeeded')).toMatchObject({ status: 'True', reason: 'BlockedWithDrivesKept' });
    expect(world.events.some((e) => e.startsWith('NoReplacementCapacity') && e.includes('t2/drive-0'))).toBe(true);
  });

  it('refuses what the mutex refused, and a payload that names no drive', async () => {
    const world = new OperationWorld(client, spec);
    world.blockAnswer = {
      ok: false,
      error: { type: 'UnknownDrive', message: 'node node-a has no signed drive with physical UUID p1' },
    };
    const empty = new OperationWorld(client, {
      action: 'unblock-drives',
      payload: { blockDrivesPayload: { node: 'node-a' } },
    });
    await withWorker({ ...world.activities() }, async (queue) => {
      await world.start(queue);
      await world.phase('Refused');
    });
    await withWorker(empty.activities(), async (queue) => {
      await empty.start(queue);
      await empty.phase('Refused');
    });
    expect(world.condition('Accepted')).toMatchObject({ status: 'False', reason: 'UnknownDrive' });
    expect(world.ledgerReads).toEqual([]);
    expect(empty.condition('Accepted')).toMatchObject({ status: 'False', reason: 'InvalidPayload' });
  });
});
