// The mutex's rules: arrival order, at most one execution per request id, answers repeated from
// the record, capacity waiters told in the order they were refused, and the state carried through
// continue-as-new bounded in bytes.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ANSWERED_MEMORY,
  complete,
  emptyMutexState,
  QUEUED_AT_FIELD,
  queuedFor,
  receive,
  stampQueuedAt,
  stateToCarry,
  takeBatch,
  utf8Bytes,
  type MutexState,
} from '../../../src/node/mutex-queue.js';
import { RELEASING_KINDS, type MutexRequest, type MutexResponse } from '../../../src/protocol.js';

const req = (id: string, kind = 'allocate', replyTo = `wf-${id}`): MutexRequest => ({
  requestId: id,
  kind,
  replyTo,
  payload: {},
});
const ok = (r: MutexRequest): MutexResponse => ({ requestId: r.requestId, kind: r.kind, ok: true });
const refusedForCapacity = (r: MutexRequest): MutexResponse => ({
  requestId: r.requestId,
  kind: r.kind,
  ok: false,
  waitForCapacity: true,
  error: { type: 'InsufficientDriveCapacity', message: 'full' },
});

function queued(state: MutexState, ...requests: MutexRequest[]): MutexState {
  for (const r of requests) state = receive(state, r, []).state;
  return state;
}

/** The next request alone: a batch of at most one. */
function takeNext(state: MutexState): { state: MutexState; next: MutexRequest | undefined } {
  const taken = takeBatch(state, 1);
  return { state: taken.state, next: taken.batch[0] };
}

describe('mutex queue', () => {
  it('hands out requests in arrival order', () => {
    let state = queued(emptyMutexState(), req('a'), req('b'), req('c'));
    const order: string[] = [];
    for (let next = takeNext(state); next.next; next = takeNext(state)) {
      order.push(next.next.requestId);
      state = complete(next.state, next.next, ok(next.next)).state;
    }
    expect(order).toEqual(['a', 'b', 'c']);
    expect(state.executed).toBe(3);
  });

  it('ignores a request that arrives again while it is queued or running', () => {
    const state = queued(emptyMutexState(), req('a'));
    expect(receive(state, req('a'), []).action).toBe('duplicate');
    const { state: afterTake, next } = takeNext(state);
    expect(receive(afterTake, req('a'), [next!.requestId]).action).toBe('duplicate');
    expect(receive(afterTake, req('b'), [next!.requestId]).action).toBe('queued');
  });

  it('answers an already executed request from the record instead of executing it again', () => {
    const a = req('a');
    let state = queued(emptyMutexState(), a);
    const taken = takeNext(state);
    state = complete(taken.state, a, { ...ok(a), result: { drives: 3 } }).state;
    const again = receive(state, a, []);
    expect(again.action).toBe('reanswer');
    if (again.action === 'reanswer') {
      expect(again.response.result).toEqual({ drives: 3 });
      expect(again.state.queue).toEqual([]);
    }
  });

  it.each(['release', 'publish-drives'])(
    'tells capacity waiters, in the order they were refused, when a %s completes',
    (kind) => {
      const [x, y, release] = [req('x', 'allocate', 'wf-x'), req('y', 'allocate', 'wf-y'), req('r', kind, 'wf-r')];
      let state = emptyMutexState();
      state = complete(state, y, refusedForCapacity(y)).state;
      state = complete(state, x, refusedForCapacity(x)).state;
      expect(state.waiters).toEqual(['wf-y', 'wf-x']);
      const done = complete(state, release, ok(release));
      expect(done.notify).toEqual(['wf-y', 'wf-x']);
      expect(done.state.waiters).toEqual([]);
    },
  );

  it('does not tell waiters when a release fails, nor list a waiter twice', () => {
    const x = req('x', 'allocate', 'wf-x');
    let state = complete(emptyMutexState(), x, refusedForCapacity(x)).state;
    state = complete(state, req('x2', 'allocate', 'wf-x'), refusedForCapacity(req('x2', 'allocate', 'wf-x'))).state;
    expect(state.waiters).toEqual(['wf-x']);
    const failedRelease = req('r', 'release');
    const done = complete(state, failedRelease, {
      ...ok(failedRelease),
      ok: false,
      error: { type: 'Error', message: 'apiserver down' },
    });
    expect(done.notify).toEqual([]);
    expect(done.state.waiters).toEqual(['wf-x']);
  });

  it('does not tell waiters when a release had nothing to let go of, and keeps them waiting', () => {
    const x = req('x', 'allocate', 'wf-x');
    const state = complete(emptyMutexState(), x, refusedForCapacity(x)).state;
    const empty = req('r', 'release', 'wf-r');
    const done = complete(state, empty, { ...ok(empty), result: { released: false } });
    expect(done.notify).toEqual([]);
    expect(done.state.waiters).toEqual(['wf-x']);
    const real = req('r2', 'release', 'wf-r2');
    expect(complete(done.state, real, { ...ok(real), result: { released: true } }).notify).toEqual(['wf-x']);
  });

  it('drops a waiter once it got what it asked for', () => {
    const x = req('x', 'allocate', 'wf-x');
    let state = complete(emptyMutexState(), x, refusedForCapacity(x)).state;
    const retry = req('x-retry', 'allocate', 'wf-x');
    state = complete(state, retry, ok(retry)).state;
    expect(state.waiters).toEqual([]);
  });

  it('keeps a requester served only in part for lack of capacity (a growth that does not fit) as a waiter', () => {
    const x = req('x', 'allocate', 'wf-x');
    const partly: MutexResponse = {
      ...ok(x),
      waitForCapacity: true,
      error: { type: 'InsufficientDriveCapacity', message: 'full' },
    };
    let state = complete(emptyMutexState(), x, partly).state;
    expect(state.waiters).toEqual(['wf-x']);
    const release = req('r', 'release', 'wf-r');
    const told = complete(state, release, ok(release));
    expect(told.notify).toEqual(['wf-x']);
    state = complete(told.state, x, partly).state;
    const retry = req('x-retry', 'allocate', 'wf-x');
    expect(complete(state, retry, ok(retry)).state.waiters).toEqual([]);
  });

  it('remembers a bounded number of answers, the newest ones', () => {
    let state = emptyMutexState();
    for (let i = 0; i < ANSWERED_MEMORY + 10; i++) state = complete(state, req(`r${i}`), ok(req(`r${i}`))).state;
    expect(state.answered).toHaveLength(ANSWERED_MEMORY);
    expect(state.answered[0]!.requestId).toBe('r10');
    expect(receive(state, req('r5'), []).action).toBe('queued');
    expect(receive(state, req(`r${ANSWERED_MEMORY + 9}`), []).action).toBe('reanswer');
  });

  it('executes every distinct request exactly once, whatever the duplicates and interleaving', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 9 }), { maxLength: 60 }),
        fc.array(fc.boolean(), { maxLength: 60 }),
        (arrivals, steps) => {
          let state = emptyMutexState();
          const executed: string[] = [];
          let i = 0;
          const drain = () => {
            const t = takeNext(state);
            if (!t.next) return;
            executed.push(t.next.requestId);
            state = complete(t.state, t.next, ok(t.next)).state;
          };
          for (const id of arrivals) {
            state = receive(state, req(`r${id}`), []).state;
            if (steps[i++]) drain();
          }
          while (state.queue.length > 0) drain();
          expect(new Set(executed).size).toBe(executed.length);
          expect(new Set(executed)).toEqual(new Set(arrivals.map((id) => `r${id}`)));
        },
      ),
    );
  });
});

describe('batches of allocations', () => {
  const ids = (rs: readonly MutexRequest[]) => rs.map((r) => r.requestId);

  it.each([
    {
      name: 'takes every queued allocation when only allocations wait',
      queue: ['a1:allocate', 'a2:allocate', 'a3:allocate'],
      batch: ['a1', 'a2', 'a3'],
      left: [],
    },
    {
      name: 'lets allocations pass requests that do not change capacity',
      queue: ['a1:allocate', 'p:ensure-proxy', 'a2:allocate', 'u:remove-proxy-if-unused', 'a3:allocate'],
      batch: ['a1', 'a2', 'a3'],
      left: ['p', 'u'],
    },
    {
      name: 'never lets an allocation pass a release queued before it',
      queue: ['a1:allocate', 'a2:allocate', 'r:release', 'a3:allocate'],
      batch: ['a1', 'a2'],
      left: ['r', 'a3'],
    },
    {
      name: 'never lets an allocation pass drives being published',
      queue: ['a1:allocate', 'd:publish-drives', 'a2:allocate'],
      batch: ['a1'],
      left: ['d', 'a2'],
    },
    {
      name: 'runs any other kind alone, in its turn',
      queue: ['u:remove-proxy-if-unused', 'a1:allocate', 'a2:allocate'],
      batch: ['u'],
      left: ['a1', 'a2'],
    },
    {
      name: 'takes the proxy requests queued on the node as one, past allocations',
      queue: ['p1:ensure-proxy', 'a1:allocate', 'p2:ensure-proxy', 'p3:ensure-proxy'],
      batch: ['p1', 'p2', 'p3'],
      left: ['a1'],
    },
    {
      name: 'never lets a proxy request pass a removal of the proxy',
      queue: ['p1:ensure-proxy', 'u:remove-proxy-if-unused', 'p2:ensure-proxy'],
      batch: ['p1'],
      left: ['u', 'p2'],
    },
    {
      name: 'never lets a proxy request pass a release',
      queue: ['p1:ensure-proxy', 'r:release', 'p2:ensure-proxy'],
      batch: ['p1'],
      left: ['r', 'p2'],
    },
    { name: 'runs a release alone', queue: ['r:release', 'r2:release'], batch: ['r'], left: ['r2'] },
    {
      name: 'stops at the size limit, leaving the rest in order',
      queue: ['a1:allocate', 'a2:allocate', 'a3:allocate', 'a4:allocate', 'a5:allocate'],
      batch: ['a1', 'a2', 'a3'],
      left: ['a4', 'a5'],
    },
  ])('$name', ({ queue, batch, left }) => {
    const state = queued(emptyMutexState(), ...queue.map((q) => req(q.split(':')[0]!, q.split(':')[1])));
    const taken = takeBatch(state, 3);
    expect(ids(taken.batch)).toEqual(batch);
    expect(ids(taken.state.queue)).toEqual(left);
  });

  it('takes as one only the proxy requests for the same node, whenever each was sent', () => {
    const proxy = (id: string, node: string, queuedAtMs: number): MutexRequest => ({
      ...req(id, 'ensure-proxy'),
      payload: { node, [QUEUED_AT_FIELD]: queuedAtMs },
    });
    const state = queued(emptyMutexState(), proxy('p1', 'n1', 1), proxy('x', 'n2', 2), proxy('p2', 'n1', 3));
    const taken = takeBatch(state, 10);
    expect(ids(taken.batch)).toEqual(['p1', 'p2']);
    expect(ids(taken.state.queue)).toEqual(['x']);
  });

  it('takes nothing from an empty queue', () => {
    const taken = takeBatch(emptyMutexState(), 10);
    expect(taken.batch).toEqual([]);
    expect(taken.state.queue).toEqual([]);
  });

  it('loses no request, keeps allocations in arrival order and never moves one past a capacity change', () => {
    const kinds = [
      'allocate',
      'allocate',
      'allocate',
      'release',
      'ensure-proxy',
      'publish-drives',
      'remove-proxy-if-unused',
    ];
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: kinds.length - 1 }), { maxLength: 40 }),
        fc.integer({ min: 1, max: 8 }),
        (picks, max) => {
          const arrivals = picks.map((k, i) => req(`r${i}`, kinds[k]));
          let state = queued(emptyMutexState(), ...arrivals);
          const order: MutexRequest[] = [];
          for (let t = takeBatch(state, max); t.batch.length > 0; t = takeBatch(state, max)) {
            expect(t.batch.length).toBeLessThanOrEqual(max);
            expect(t.batch.every((r) => r.kind === t.batch[0]!.kind)).toBe(true);
            expect(t.batch.length === 1 || ['allocate', 'ensure-proxy'].includes(t.batch[0]!.kind)).toBe(true);
            order.push(...t.batch);
            state = t.state;
          }
          expect(ids(order).sort()).toEqual(ids(arrivals).sort());
          const position = (r: MutexRequest) => order.indexOf(r);
          for (const [i, a] of arrivals.entries()) {
            for (const b of arrivals.slice(i + 1)) {
              // Allocations keep their order, and nothing moves past a release or a publish.
              if (a.kind === b.kind && a.kind === 'allocate') expect(position(a)).toBeLessThan(position(b));
              if (RELEASING_KINDS.has(a.kind)) expect(position(a)).toBeLessThan(position(b));
              // A proxy removal and the proxy requests around it keep their order.
              const proxyKinds = ['ensure-proxy', 'remove-proxy-if-unused'];
              if (proxyKinds.includes(a.kind) && proxyKinds.includes(b.kind) && a.kind !== b.kind)
                expect(position(a)).toBeLessThan(position(b));
            }
          }
        },
      ),
    );
  });
});

describe('queue wait stamps', () => {
  it('stamps plain-object payloads and reads back how long they waited', () => {
    const stamped = stampQueuedAt({ namespace: 'ns', name: 'a', node: 'n1' }, 1_000);
    expect(stamped).toEqual({ namespace: 'ns', name: 'a', node: 'n1', [QUEUED_AT_FIELD]: 1_000 });
    expect(queuedFor(stamped, 1_250)).toBe(250);
  });

  it.each([
    ['a string', 'payload'],
    ['null', null],
    ['an array', [1, 2]],
  ])('leaves %s payload unchanged and unmeasured', (_what, payload) => {
    expect(stampQueuedAt(payload, 1_000)).toBe(payload);
    expect(queuedFor(payload, 2_000)).toBeUndefined();
  });

  it.each([
    ['no stamp', { node: 'n1' }],
    ['a text stamp', { node: 'n1', [QUEUED_AT_FIELD]: '1000' }],
    ['a non-finite stamp', { node: 'n1', [QUEUED_AT_FIELD]: Number.NaN }],
  ])('measures nothing for a payload with %s', (_what, payload) => {
    expect(queuedFor(payload, 2_000)).toBeUndefined();
  });

  it('never reports a negative wait when the executing clock is behind the sending one', () => {
    expect(queuedFor(stampQueuedAt({}, 5_000), 4_000)).toBe(0);
  });
});

describe('the state carried through continue-as-new', () => {
  const json = (s: MutexState) => Buffer.byteLength(JSON.stringify(s), 'utf8');
  /** An allocation answer with `drives` virtual drives: the heavy kind of record. */
  const allocated = (id: string, drives: number): MutexResponse => ({
    requestId: id,
    kind: 'allocate',
    ok: true,
    result: {
      virtualDrives: Array.from({ length: drives }, (_, i) => ({
        virtualUUID: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
        physicalUUID: '11111111-2222-4333-8444-555555555555',
        serial: 'S6XNNA0R123456',
        capacityGiB: 384,
      })),
    },
  });
  function withAnswers(answers: MutexResponse[], o: Partial<MutexState> = {}): MutexState {
    return { ...emptyMutexState(), answered: answers, executed: answers.length, ...o };
  }

  it('counts UTF-8 bytes, as the payload holds them, not characters', () => {
    for (const text of ['', 'plain', 'é', '€uro', '𝄞 clef', 'mixé 日本 🙂']) {
      expect(utf8Bytes(text)).toBe(Buffer.byteLength(text, 'utf8'));
    }
  });

  it('carries the whole state when it is under the bound', () => {
    const state = withAnswers([allocated('a', 2), allocated('b', 2)], { queue: [req('q')], waiters: ['wf-w'] });
    const carried = stateToCarry(state, 1_000_000);
    expect(carried.state).toEqual(state);
    expect(carried).toMatchObject({ fits: true, droppedAnswers: 0, bytes: json(state) });
  });

  it('drops the oldest answers first, keeping the newest that fit under the bound', () => {
    const answers = Array.from({ length: ANSWERED_MEMORY }, (_, i) => allocated(`r${i}`, 64));
    const state = withAnswers(answers, { queue: [req('q1'), req('q2', 'release')], waiters: ['wf-a', 'wf-b'] });
    expect(json(state)).toBeGreaterThan(2 * 1024 * 1024); // 500 answers of 64 drives: past Temporal's payload limit
    const carried = stateToCarry(state, 256 * 1024);
    expect(carried.fits).toBe(true);
    expect(carried.bytes).toBe(json(carried.state));
    expect(carried.bytes).toBeLessThanOrEqual(256 * 1024);
    const kept = carried.state.answered.map((a) => a.requestId);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept).toEqual(answers.slice(-kept.length).map((a) => a.requestId));
    expect(carried.droppedAnswers).toBe(ANSWERED_MEMORY - kept.length);
    // One more (the next older) answer would not have fitted.
    const oneMore = { ...carried.state, answered: answers.slice(-kept.length - 1) };
    expect(json(oneMore)).toBeGreaterThan(256 * 1024);
    expect(carried.state.queue).toEqual(state.queue);
    expect(carried.state.waiters).toEqual(state.waiters);
    expect(carried.state.executed).toBe(state.executed);
  });

  it('answers a kept request from the record; a dropped one that comes again is executed again', () => {
    const answers = Array.from({ length: 20 }, (_, i) => allocated(`r${i}`, 8));
    const carried = stateToCarry(withAnswers(answers), 8_000);
    const kept = carried.state.answered.map((a) => a.requestId);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(20);
    expect(receive(carried.state, req('r19'), []).action).toBe('reanswer');
    expect(receive(carried.state, req('r0'), []).action).toBe('queued');
  });

  it('never drops the queue or the waiters: a state they alone make too big does not fit, and carries no answers', () => {
    const queue = Array.from({ length: 50 }, (_, i) => ({ ...req(`q${i}`), payload: { filler: 'x'.repeat(100) } }));
    const state = withAnswers([allocated('a', 1)], { queue, waiters: ['wf-a'] });
    const carried = stateToCarry(state, 1_000);
    expect(carried.fits).toBe(false);
    expect(carried.state.queue).toEqual(queue);
    expect(carried.state.waiters).toEqual(['wf-a']);
    expect(carried.state.answered).toEqual([]);
    expect(carried.droppedAnswers).toBe(1);
    expect(carried.bytes).toBe(json(carried.state));
  });

  it('keeps the newest answers that fit, whatever the answers and the bound', () => {
    const answer = fc.record({
      requestId: fc.string({ maxLength: 12 }),
      kind: fc.constantFrom('allocate', 'release', 'ensure-proxy'),
      ok: fc.boolean(),
      result: fc.option(fc.array(fc.string({ unit: 'grapheme', maxLength: 20 }), { maxLength: 6 }), {
        nil: undefined,
      }),
    });
    fc.assert(
      fc.property(
        fc.array(answer, { maxLength: 40 }),
        fc.array(fc.string({ maxLength: 30 }), { maxLength: 5 }),
        fc.integer({ min: 0, max: 6_000 }),
        (answers, waiters, bound) => {
          const state = withAnswers(answers as MutexResponse[], { queue: [req('q')], waiters });
          const carried = stateToCarry(state, bound);
          expect(carried.bytes).toBe(json(carried.state));
          const n = carried.state.answered.length;
          expect(carried.state.answered).toEqual(state.answered.slice(state.answered.length - n));
          expect(carried.droppedAnswers).toBe(state.answered.length - n);
          expect({ ...carried.state, answered: [] }).toEqual({ ...state, answered: [] });
          const base = json({ ...state, answered: [] });
          expect(carried.fits).toBe(base <= bound);
          if (carried.fits) expect(carried.bytes).toBeLessThanOrEqual(bound);
          // Maximal: the next older answer would not have fitted.
          if (n < state.answered.length && carried.fits)
            expect(json({ ...state, answered: state.answered.slice(state.answered.length - n - 1) })).toBeGreaterThan(
              bound,
            );
        },
      ),
    );
  });
});
