import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BringUpAdmission, isSettled, queuedMessage } from '../../../src/operator/bring-up-admission.js';
import type { WatchedObject } from '../../../src/operator/watch-decision.js';

function container(uid: string, status: WatchedObject['status'] = {}, deleting = false): WatchedObject {
  return {
    kind: 'WekaContainer',
    namespace: 'tenant',
    name: uid,
    uid,
    generation: 1,
    deleting,
    finalizers: [],
    labels: {},
    spec: { mode: 'drive', nodeName: 'node-a' },
    status,
  };
}

const uids = (objects: WatchedObject[]) => objects.map((o) => o.uid);

describe('bring-up admission', () => {
  it('admits up to the limit and queues the rest in the order they asked', () => {
    const a = new BringUpAdmission({ limit: 2, holdMs: 60_000 });
    expect(a.admit(container('a'), 0)).toEqual({ admitted: true });
    expect(a.admit(container('b'), 0)).toEqual({ admitted: true });
    expect(a.admit(container('c'), 0)).toEqual({ admitted: false, limit: 2, inFlight: 2, ahead: 0 });
    expect(a.admit(container('d'), 0)).toEqual({ admitted: false, limit: 2, inFlight: 2, ahead: 1 });
    // Asking again keeps a waiting container's place.
    expect(a.admit(container('c'), 1)).toMatchObject({ admitted: false, ahead: 0 });
    expect(a.inFlight()).toBe(2);
    expect(a.waitingCount()).toBe(2);
  });

  it('wakes the first waiting container when one in flight becomes Ready, and lets it go before a newcomer', () => {
    const a = new BringUpAdmission({ limit: 1, holdMs: 60_000 });
    a.admit(container('a'), 0);
    a.admit(container('b'), 0);
    a.admit(container('c'), 0);
    expect(uids(a.observe(container('a', { phase: 'Allocating', workflowID: 'w' }), 1))).toEqual([]);
    expect(uids(a.observe(container('a', { phase: 'Ready', workflowID: 'w' }), 2))).toEqual(['b']);
    expect(a.admit(container('newcomer'), 3)).toMatchObject({ admitted: false, ahead: 2 });
    expect(a.admit(container('c'), 3)).toMatchObject({ admitted: false, ahead: 1 });
    expect(a.admit(container('b'), 3)).toEqual({ admitted: true });
  });

  it.each(['Ready', 'Error', 'Deleting', 'Deleted'])('frees the place of a container in %s', (phase) => {
    const a = new BringUpAdmission({ limit: 1, holdMs: 60_000 });
    a.admit(container('a'), 0);
    a.admit(container('b'), 0);
    expect(uids(a.observe(container('a', { phase }), 1))).toEqual(['b']);
  });

  it.each(['Pending', 'Allocating', 'WaitingForCluster', 'Signing', 'AddingDrives'])(
    'keeps the place of a container in %s',
    (phase) => {
      const a = new BringUpAdmission({ limit: 1, holdMs: 60_000 });
      a.admit(container('a'), 0);
      a.admit(container('b'), 0);
      expect(a.observe(container('a', { phase }), 1)).toEqual([]);
    },
  );

  it('frees the place of a container that waits for something, as a False condition says', () => {
    const a = new BringUpAdmission({ limit: 1, holdMs: 60_000 });
    a.admit(container('a'), 0);
    a.admit(container('b'), 0);
    expect(uids(a.observe(container('a', { phase: 'Allocating', falseCondition: 'Allocated' }), 1))).toEqual(['b']);
  });

  it('frees the place of a container that is deleted or gone, and forgets a waiting one that goes', () => {
    const a = new BringUpAdmission({ limit: 1, holdMs: 60_000 });
    a.admit(container('a'), 0);
    a.admit(container('b'), 0);
    a.admit(container('c'), 0);
    expect(uids(a.observe(container('b', {}, true), 1))).toEqual([]);
    expect(a.waitingCount()).toBe(1);
    expect(uids(a.forget('a', 2))).toEqual(['c']);
  });

  it('stops counting a bring-up after the hold time, so a parked container cannot hold the others back', () => {
    const a = new BringUpAdmission({ limit: 1, holdMs: 5_000 });
    a.admit(container('stuck'), 0);
    a.admit(container('b'), 0);
    expect(a.tick(4_999)).toEqual([]);
    expect(uids(a.tick(5_000))).toEqual(['b']);
    expect(a.admit(container('b'), 5_001)).toEqual({ admitted: true });
  });

  it('lets a container whose workflow already ran through without counting it, so a restart holds no one back', () => {
    const a = new BringUpAdmission({ limit: 1, holdMs: 60_000 });
    // Seen at the first list after a restart: started by the process before, parked or still going.
    const earlier = container('earlier', { workflowID: 'w', phase: 'Allocating' });
    expect(a.observe(earlier, 0)).toEqual([]);
    expect(a.admit(earlier, 0)).toEqual({ admitted: true });
    // Started by a workflow that wrote its phase before the watcher wrote its id.
    expect(a.admit(container('phase-only', { phase: 'Pending' }), 0)).toEqual({ admitted: true });
    expect(a.inFlight()).toBe(0);
    expect(a.admit(container('new'), 1)).toEqual({ admitted: true });
  });

  it('stops keeping a place for a waiting container that another watcher started', () => {
    const a = new BringUpAdmission({ limit: 1, holdMs: 60_000 });
    a.admit(container('a'), 0);
    a.admit(container('b'), 0);
    a.admit(container('c'), 0);
    a.observe(container('b', { workflowID: 'w', phase: 'Pending' }), 1);
    expect(a.waitingCount()).toBe(1);
    expect(uids(a.observe(container('a', { phase: 'Ready', workflowID: 'w' }), 2))).toEqual(['c']);
  });

  it('never has more than the limit in flight, and every container that asks is admitted in the end', () => {
    const step = fc.oneof(
      fc.record({ op: fc.constant('admit' as const), id: fc.integer({ min: 0, max: 9 }) }),
      fc.record({ op: fc.constant('settle' as const), id: fc.integer({ min: 0, max: 9 }) }),
      fc.record({ op: fc.constant('gone' as const), id: fc.integer({ min: 0, max: 9 }) }),
      fc.record({ op: fc.constant('tick' as const), id: fc.constant(0) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4 }), fc.array(step, { maxLength: 60 }), (limit, steps) => {
        const a = new BringUpAdmission({ limit, holdMs: 10 });
        let now = 0;
        for (const s of steps) {
          now += 3;
          const id = `c${s.id}`;
          if (s.op === 'admit') a.admit(container(id), now);
          else if (s.op === 'settle') a.observe(container(id, { phase: 'Ready' }), now);
          else if (s.op === 'gone') a.forget(id, now);
          else a.tick(now);
          expect(a.inFlight()).toBeLessThanOrEqual(limit);
        }
        // Everyone still waiting gets in once the holds run out and the woken ask again.
        for (let round = 0; a.waitingCount() > 0; round++) {
          expect(round).toBeLessThan(20);
          now += 10;
          for (const w of a.tick(now)) expect(a.admit(w, now)).toEqual({ admitted: true });
        }
      }),
    );
  });
});

describe('isSettled and the queued message', () => {
  it('reads a deleting container as settled whatever its phase', () => {
    expect(isSettled(container('a', { phase: 'Signing' }, true))).toBe(true);
    expect(isSettled(container('a', {}))).toBe(false);
  });

  it('says the limit, how many run and how many wait before this one', () => {
    expect(queuedMessage({ limit: 12, inFlight: 12, ahead: 3 })).toBe(
      'waiting to start: the operator brings up at most 12 drive containers at once ' +
        '(WEKA_MAX_CONCURRENT_BRINGUPS) and 12 are in progress; 3 waiting before it',
    );
    expect(queuedMessage({ limit: 1, inFlight: 1, ahead: 0 })).toMatch(/it is next$/);
  });
});
