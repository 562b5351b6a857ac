// The sign-drives operation's workflow alone, its activities stubbed: a spec it cannot run is
// refused before a device is touched; no matching node fails it; one node's failure is that node's
// result only; and a deletion while it signs stops it, undoing nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import { eventually } from '../support/async.js';
import { closeEnvironment, withWorker, workflowClient } from './support/env.js';
import { OperationWorld } from './support/operation-world.js';

let client: Client;
beforeAll(async () => {
  client = await workflowClient();
});
afterAll(closeEnvironment);

const signDrives = (payload: Record<string, unknown> = {}) => ({
  action: 'sign-drives',
  payload: {
    signDrivesPayload: {
      type: 'device-paths',
      nodeSelector: { pool: 'a' },
      devicePaths: ['/dev/nvme0n1'],
      shared: true,
      ...payload,
    },
  },
});

describe('sign-drives', () => {
  it('signs the devices of every matching node and publishes them', async () => {
    const world = new OperationWorld(client, signDrives({ devicePaths: ['/dev/nvme0n1', '/dev/nvme1n1'] }), [
      'node-a',
      'node-b',
    ]);
    world.devices.set('node-a', ['/dev/nvme0n1', '/dev/nvme1n1']);
    world.devices.set('node-b', ['/dev/nvme0n1']);
    await withWorker(world.activities(), async (queue) => {
      await world.start(queue);
      await world.phase('Succeeded');
    });
    expect(world.signed.sort()).toEqual(['node-a:/dev/nvme0n1', 'node-a:/dev/nvme1n1', 'node-b:/dev/nvme0n1']);
    expect(world.condition('Succeeded')?.reason).toBe('AllNodesSigned');
    expect(world.events.filter((e) => e.startsWith('NodeSigned:'))).toHaveLength(2);
  });

  it('refuses a spec it cannot run, before any node is touched', async () => {
    const world = new OperationWorld(client, signDrives({ type: 'every-disk' }));
    world.devices.set('node-a', ['/dev/nvme0n1']);
    await withWorker(world.activities(), async (queue) => {
      await world.start(queue);
      await world.phase('Refused');
    });
    expect(world.condition('Accepted')).toMatchObject({ status: 'False', reason: 'UnknownSigningType' });
    expect(world.signed).toEqual([]);
  });

  it('fails when no node matches its selector', async () => {
    const world = new OperationWorld(client, signDrives(), []);
    await withWorker(world.activities(), async (queue) => {
      await world.start(queue);
      await world.phase('Failed');
    });
    expect(world.condition('Succeeded')).toMatchObject({ status: 'False', reason: 'NoMatchingNodes' });
  });

  it("records a node's failure as its result and still signs the other nodes", async () => {
    const world = new OperationWorld(client, signDrives(), ['node-a', 'node-b']);
    world.devices.set('node-a', ['/dev/nvme0n1']);
    await withWorker(world.activities(), async (queue) => {
      await world.start(queue);
      await world.phase('Failed');
    });
    expect(world.signed).toEqual(['node-a:/dev/nvme0n1']);
    expect(world.status.results?.find((r) => r.node === 'node-b')?.error).toContain(
      'the ssdproxy of node-b did not start',
    );
    expect(world.status.results?.find((r) => r.node === 'node-a')?.error).toBeUndefined();
    expect(world.condition('Succeeded')).toMatchObject({ reason: 'NodesFailed' });
    expect(world.events.some((e) => e.startsWith('NodeFailed: node node-b'))).toBe(true);
  });

  it('deleted while it signs, stops and lets go of its finalizer, undoing nothing', async () => {
    const world = new OperationWorld(client, signDrives());
    world.devices.set('node-a', ['/dev/nvme0n1']);
    world.unanswered = 'sign-drive';
    await withWorker(world.activities(), async (queue) => {
      const handle = await world.start(queue);
      await eventually('signing to be asked', async () => (world.unansweredRequests.length > 0 ? true : undefined));
      await world.delete(handle);
    });
    expect(world.finalizer).toBe(false);
    expect(world.signed).toEqual([]);
    expect(world.status.phase).not.toBe('Succeeded');
  });
});
