// The mutex's rules: arrival order, at most one execution per request id, answers repeated from
// the record, and capacity waiters told in the order they were refused.
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
  takeNext,
  type MutexRequest,
  type MutexResponse,
  type MutexState,
} from '../../../src/lifecycle/mutex-queue.js';

const req = (id: string, kind = 'allocate', replyTo = `wf-${id}`): MutexRequest => ({ requestId: id, kind, replyTo, payload: {} });
const ok = (r: MutexRequest): MutexResponse => ({ requestId: r.requestId, kind: r.kind, ok: true });
const refusedForCapacity = (r: MutexRequest): MutexResponse => ({ requestId: r.requestId, kind: r.kind, ok: false, waitForCapacity: true, error: { type: 'InsufficientDriveCapacity', message: 'full' } });

function queued(state: MutexState, ...requests: MutexRequest[]): MutexState {
  for (const r of requests) state = receive(state, r, undefined).state;
  return state;
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
    expect(receive(state, req('a'), undefined).action).toBe('duplicate');
    const { state: afterTake, next } = takeNext(state);
    expect(receive(afterTake, req('a'), next!.requestId).action).toBe('duplicate');
    expect(receive(afterTake, req('b'), next!.requestId).action).toBe('queued');
  });

  it('answers an already executed request from the record instead of executing it again', () => {
    const a = req('a');
    let state = queued(emptyMutexState(), a);
    const taken = takeNext(state);
    state = complete(taken.state, a, { ...ok(a), result: { drives: 3 } }).state;
    const again = receive(state, a, undefined);
    expect(again.action).toBe('reanswer');
    if (again.action === 'reanswer') {
      expect(again.response.result).toEqual({ drives: 3 });
      expect(again.state.queue).toEqual([]);
    }
  });

  it.each(['release', 'publish-drives'])('tells capacity waiters, in the order they were refused, when a %s completes', (kind) => {
    const [x, y, release] = [req('x', 'allocate', 'wf-x'), req('y', 'allocate', 'wf-y'), req('r', kind, 'wf-r')];
    let state = emptyMutexState();
    state = complete(state, y, refusedForCapacity(y)).state;
    state = complete(state, x, refusedForCapacity(x)).state;
    expect(state.waiters).toEqual(['wf-y', 'wf-x']);
    const done = complete(state, release, ok(release));
    expect(done.notify).toEqual(['wf-y', 'wf-x']);
    expect(done.state.waiters).toEqual([]);
  });

  it('does not tell waiters when a release fails, nor list a waiter twice', () => {
    const x = req('x', 'allocate', 'wf-x');
    let state = complete(emptyMutexState(), x, refusedForCapacity(x)).state;
    state = complete(state, req('x2', 'allocate', 'wf-x'), refusedForCapacity(req('x2', 'allocate', 'wf-x'))).state;
    expect(state.waiters).toEqual(['wf-x']);
    const failedRelease = req('r', 'release');
    const done = complete(state, failedRelease, { ...ok(failedRelease), ok: false, error: { type: 'Error', message: 'apiserver down' } });
    expect(done.notify).toEqual([]);
    expect(done.state.waiters).toEqual(['wf-x']);
  });

  it('drops a waiter once it got what it asked for', () => {
    const x = req('x', 'allocate', 'wf-x');
    let state = complete(emptyMutexState(), x, refusedForCapacity(x)).state;
    const retry = req('x-retry', 'allocate', 'wf-x');
    state = complete(state, retry, ok(retry)).state;
    expect(state.waiters).toEqual([]);
  });

  it('remembers a bounded number of answers, the newest ones', () => {
    let state = emptyMutexState();
    for (let i = 0; i < ANSWERED_MEMORY + 10; i++) state = complete(state, req(`r${i}`), ok(req(`r${i}`))).state;
    expect(state.answered).toHaveLength(ANSWERED_MEMORY);
    expect(state.answered[0]!.requestId).toBe('r10');
    expect(receive(state, req('r5'), undefined).action).toBe('queued');
    expect(receive(state, req(`r${ANSWERED_MEMORY + 9}`), undefined).action).toBe('reanswer');
  });

  it('executes every distinct request exactly once, whatever the duplicates and interleaving', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 9 }), { maxLength: 60 }), fc.array(fc.boolean(), { maxLength: 60 }), (arrivals, steps) => {
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
          state = receive(state, req(`r${id}`), undefined).state;
          if (steps[i++]) drain();
        }
        while (state.queue.length > 0) drain();
        expect(new Set(executed).size).toBe(executed.length);
        expect(new Set(executed)).toEqual(new Set(arrivals.map((id) => `r${id}`)));
      }),
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
