// The clean-stale-virtual-drives operation's workflow alone, its activities stubbed: what it
// reports, when it removes (two passes that agree, or a confirmed fingerprint) and when it never
// does (report only, a set that changed, a fingerprint that differs, a node that failed, a
// deletion between the passes).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import { staleFingerprint, type StaleVirtualDrive } from '../../src/node/stale-virtual-drives.js';
import { closeEnvironment, withWorker, workflowClient } from './support/env.js';
import { OperationWorld, staleDrive } from './support/operation-world.js';
import { eventually } from '../support/async.js';

let client: Client;
beforeAll(async () => {
  client = await workflowClient();
});
afterAll(closeEnvironment);

const spec = (payload: Record<string, unknown>) => ({
  action: 'clean-stale-virtual-drives',
  payload: { cleanStaleVirtualDrivesPayload: { nodeSelector: { pool: 'a' }, ...payload } },
});
const found = (...stale: StaleVirtualDrive[]) => ({ stale, kept: [] });
const fingerprintOf = (node: string, ...drives: StaleVirtualDrive[]) => staleFingerprint(new Map([[node, drives]]));

describe('clean-stale-virtual-drives', () => {
  it('reports the stale drives and their fingerprint, and removes nothing unless asked', async () => {
    const world = new OperationWorld(client, spec({}));
    world.finds.set('node-a', [found(staleDrive(1), staleDrive(2))]);
    await withWorker(world.activities(), async (queue) => {
      await world.start(queue);
      await world.phase('Succeeded');
    });
    expect(world.condition('Succeeded')?.reason).toBe('StaleReported');
    expect(world.status.fingerprint).toBe(fingerprintOf('node-a', staleDrive(1), staleDrive(2)));
    expect(world.status.results).toEqual([{ node: 'node-a', staleVirtualDrives: [staleDrive(1), staleDrive(2)] }]);
    expect(world.events.some((e) => e.startsWith('StaleVirtualDrivesFound: 2 stale virtual drives (300 GiB)'))).toBe(
      true,
    );
    expect(world.removals).toEqual([]);
  });

  it('removes them once a second pass finds the same set', async () => {
    const world = new OperationWorld(client, spec({ deleteStaleVids: true, secondPassAfterSeconds: 5 }));
    world.finds.set('node-a', [found(staleDrive(1))]);
    await withWorker(world.activities(), async (queue) => {
      await world.start(queue);
      await world.phase('Succeeded');
    });
    expect(world.findCount.get('node-a')).toBe(2);
    expect(world.removals).toEqual([{ node: 'node-a', drives: [staleDrive(1)] }]);
    expect(world.condition('Succeeded')?.reason).toBe('StaleRemoved');
    expect(world.status.results?.[0]?.removed).toEqual([staleDrive(1).virtualUUID]);
  });

  it('removes nothing while the set changes between passes, then what two passes agree on', async () => {
    const world = new OperationWorld(client, spec({ deleteStaleVids: true, secondPassAfterSeconds: 5 }));
    world.finds.set('node-a', [found(staleDrive(1), staleDrive(2)), found(staleDrive(2))]);
    await withWorker(world.activities(), async (queue) => {
      await world.start(queue);
      await world.phase('Succeeded', 40_000);
    });
    expect(world.findCount.get('node-a')).toBe(3);
    expect(world.removals).toEqual([{ node: 'node-a', drives: [staleDrive(2)] }]);
  });

  it('removes at the first pass the set a person confirmed, and nothing when the set found is another', async () => {
    const confirmed = fingerprintOf('node-a', staleDrive(1));
    const world = new OperationWorld(client, spec({ deleteStaleVids: true, confirmFingerprint: confirmed }));
    world.finds.set('node-a', [found(staleDrive(1))]);
    const other = new OperationWorld(client, spec({ deleteStaleVids: true, confirmFingerprint: confirmed }));
    other.finds.set('node-a', [found(staleDrive(1), staleDrive(3))]);
    await withWorker({ ...world.activities() }, async (queue) => {
      await world.start(queue);
      await world.phase('Succeeded');
    });
    await withWorker({ ...other.activities() }, async (queue) => {
      await other.start(queue);
      await other.phase('Failed');
    });
    expect(world.findCount.get('node-a')).toBe(1);
    expect(world.removals).toEqual([{ node: 'node-a', drives: [staleDrive(1)] }]);
    expect(other.condition('Succeeded')).toMatchObject({ status: 'False', reason: 'FingerprintMismatch' });
    expect(other.removals).toEqual([]);
  });

  it('says so when nothing is stale', async () => {
    const world = new OperationWorld(client, spec({ deleteStaleVids: true, secondPassAfterSeconds: 5 }));
    await withWorker(world.activities(), async (queue) => {
      await world.start(queue);
      await world.phase('Succeeded');
    });
    expect(world.condition('Succeeded')?.reason).toBe('NothingStale');
    expect(world.findCount.get('node-a')).toBe(1);
  });

  it('removes nothing on any node when one node failed, and names it', async () => {
    const world = new OperationWorld(client, spec({ deleteStaleVids: true, secondPassAfterSeconds: 5 }), [
      'node-a',
      'node-b',
    ]);
    world.finds.set('node-a', [found(staleDrive(1))]);
    const activities = world.activities();
    const send = activities['sendMutexRequest']!;
    activities['sendMutexRequest'] = async (input: never) => {
      const { request } = input as {
        request: { kind: string; payload: { node: string }; requestId: string; replyTo: string };
      };
      if (request.payload.node !== 'node-b') return send(input);
      await client.workflow.getHandle(request.replyTo).signal('mutexResponse', {
        requestId: request.requestId,
        kind: request.kind,
        ok: false,
        error: { type: 'ExecFailed', message: 'the proxy did not answer' },
      });
    };
    await withWorker(activities, async (queue) => {
      await world.start(queue);
      await world.phase('Failed');
    });
    expect(world.condition('Succeeded')).toMatchObject({ reason: 'NodesFailed' });
    expect(world.condition('Succeeded')?.message).toContain('node-b: the proxy did not answer');
    expect(world.removals).toEqual([]);
  });

  it('deleted between its passes, removes nothing and lets go of its finalizer', async () => {
    const world = new OperationWorld(client, spec({ deleteStaleVids: true, secondPassAfterSeconds: 60 }));
    world.finds.set('node-a', [found(staleDrive(1))]);
    await withWorker(world.activities(), async (queue) => {
      const handle = await world.start(queue);
      await eventually('the first pass', async () => (world.findCount.get('node-a') === 1 ? true : undefined));
      await world.delete(handle);
    });
    expect(world.removals).toEqual([]);
    expect(world.finalizer).toBe(false);
  });

  it('says which drives it keeps although no ledger or status claims them', async () => {
    const world = new OperationWorld(client, spec({}));
    world.finds.set('node-a', [
      {
        stale: [],
        kept: [{ virtualUUID: staleDrive(4).virtualUUID, why: 'Weka cluster g lists it as one of its drives' }],
      },
    ]);
    await withWorker(world.activities(), async (queue) => {
      await world.start(queue);
      await world.phase('Succeeded');
    });
    expect(
      world.events.some((e) => e.startsWith('VirtualDrivesKept: node node-a: kept') && e.includes('lists it')),
    ).toBe(true);
  });
});
