// The benchmark's reading of mutex histories: which consecutive decisions count as a hand-over
// (the second request was already queued when the first ended) and how long each took.
import { defaultPayloadConverter } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { allocationAskedAt, handOversOf, mutexRunOf } from '../../bench/mutex-handover.js';
import { percentile } from '../../bench/bench-env.js';

const at = (ms: number) => ({ seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1e6 });
const payloads = (value: unknown) => ({ payloads: [defaultPayloadConverter.toPayload(value)] });

let nextId = 1;
function event(ms: number, attrs: Record<string, unknown>) {
  return { eventId: nextId++, eventTime: at(ms), ...attrs };
}
const request = (ms: number, requestId: string) =>
  event(ms, {
    workflowExecutionSignaledEventAttributes: { signalName: 'mutexRequest', input: payloads({ requestId }) },
  });
function decision(
  scheduledMs: number,
  startedMs: number,
  endedMs: number,
  activity = 'allocateForContainer',
  input?: unknown,
) {
  const scheduled = event(scheduledMs, {
    activityTaskScheduledEventAttributes: {
      activityType: { name: activity },
      ...(input ? { input: payloads(input) } : {}),
    },
  });
  return [
    scheduled,
    event(startedMs, { activityTaskStartedEventAttributes: { scheduledEventId: scheduled.eventId } }),
    event(endedMs, { activityTaskCompletedEventAttributes: { scheduledEventId: scheduled.eventId } }),
  ];
}

describe('mutex hand-overs from a history', () => {
  it('counts only decisions whose request was queued before the previous one ended', () => {
    nextId = 1;
    const events = [
      event(0, { workflowExecutionStartedEventAttributes: { input: payloads({ key: 'weka-node/n1' }) } }),
      request(10, 'a'),
      request(20, 'b'),
      ...decision(30, 40, 100),
      // b was queued at 20, before a ended at 100: a hand-over of 125 - 100 ms.
      ...decision(110, 125, 200),
      // c arrives after b ended: the mutex was idle, not a hand-over.
      request(300, 'c'),
      ...decision(305, 310, 400, 'releaseAllocation'),
    ];
    const run = mutexRunOf('n1', events);
    expect(run.arrivals).toEqual([10, 20, 300]);
    expect(handOversOf(run)).toEqual([
      { node: 'n1', from: 'allocateForContainer', to: 'allocateForContainer', ms: 25, toScheduledMs: 10 },
    ]);
  });

  it('treats requests carried over by continue-as-new as queued, and a resent request once', () => {
    nextId = 1;
    const events = [
      event(0, {
        workflowExecutionStartedEventAttributes: {
          input: payloads({ key: 'weka-node/n1', state: { queue: [{ requestId: 'a' }, { requestId: 'b' }] } }),
        },
      }),
      request(5, 'a'),
      ...decision(10, 20, 50),
      ...decision(60, 70, 90),
    ];
    const run = mutexRunOf('n1', events);
    expect(run.arrivals).toEqual([Number.NEGATIVE_INFINITY, Number.NEGATIVE_INFINITY]);
    expect(handOversOf(run).map((h) => h.ms)).toEqual([20]);
  });
});

describe('mutex hand-overs when allocations are decided together', () => {
  it('counts a batch as all the requests it decided, so only a decision with work still queued is a hand-over', () => {
    nextId = 1;
    const batchOf = (n: number) => ({
      node: 'n1',
      containers: Array.from({ length: n }, (_, i) => ({ namespace: 'ns', name: `c${i}`, node: 'n1' })),
    });
    const events = [
      event(0, { workflowExecutionStartedEventAttributes: { input: payloads({ key: 'weka-node/n1' }) } }),
      request(10, 'a'),
      ...decision(20, 25, 60, 'allocateForContainers', batchOf(1)),
      request(30, 'b'),
      request(40, 'c'),
      request(50, 'p'),
      // b and c decided together after a: a hand-over of 70 - 60 ms.
      ...decision(65, 70, 120, 'allocateForContainers', batchOf(2)),
      // p (ensure-proxy) was still queued when the batch ended: 130 - 120 ms.
      ...decision(125, 130, 200, 'ensureProxy'),
      // d came after everything had been executed: the mutex was idle.
      request(300, 'd'),
      ...decision(305, 310, 400, 'allocateForContainers', batchOf(1)),
    ];
    const run = mutexRunOf('n1', events);
    expect(run.decisions.map((d) => d.requests)).toEqual([1, 2, 1, 1]);
    expect(handOversOf(run).map((h) => [h.from, h.to, h.ms])).toEqual([
      ['allocateForContainers', 'allocateForContainers', 10],
      ['allocateForContainers', 'ensureProxy', 10],
    ]);
  });
});

describe('mutex hand-overs when answers are delivered by an activity', () => {
  it('does not count the delivery of answers as a decision, even when it runs between two', () => {
    nextId = 1;
    const events = [
      event(0, { workflowExecutionStartedEventAttributes: { input: payloads({ key: 'weka-node/n1' }) } }),
      request(10, 'a'),
      request(15, 'b'),
      ...decision(20, 25, 60),
      // a's answer is delivered beside the next decision, and ends inside it.
      ...decision(70, 71, 80, 'answerMutexRequests', { mutexId: 'weka-node/n1', answers: [{}], notify: [] }),
      ...decision(70, 72, 120),
    ];
    const run = mutexRunOf('n1', events);
    expect(run.decisions.map((d) => d.activity)).toEqual(['allocateForContainer', 'allocateForContainer']);
    expect(handOversOf(run).map((h) => h.ms)).toEqual([12]);
  });

  it('records when each workflow task was scheduled, started and completed', () => {
    nextId = 1;
    const events = [
      event(0, { workflowExecutionStartedEventAttributes: { input: payloads({ key: 'weka-node/n1' }) } }),
      event(0, { workflowTaskScheduledEventAttributes: {} }),
      request(5, 'a'),
      event(40, { workflowTaskStartedEventAttributes: {} }),
      event(90, { workflowTaskCompletedEventAttributes: {} }),
      ...decision(90, 95, 150),
      event(150, { workflowTaskScheduledEventAttributes: {} }),
      event(160, { workflowTaskStartedEventAttributes: {} }),
    ];
    expect(mutexRunOf('n1', events).workflowTasks).toEqual([
      { scheduledAt: 0, startedAt: 40, completedAt: 90 },
      { scheduledAt: 150, startedAt: 160 },
    ]);
  });
});

describe('when each container asked for its allocation', () => {
  const ask = (ms: number, requestId: string, name: string, kind = 'allocate') =>
    event(ms, {
      workflowExecutionSignaledEventAttributes: {
        signalName: 'mutexRequest',
        input: payloads({ requestId, kind, payload: { namespace: 'ns', name, node: 'n1' } }),
      },
    });

  it("keeps each container's first allocate request, over every run, carried-over ones as asked before any", () => {
    nextId = 1;
    const first = mutexRunOf('n1', [
      event(0, { workflowExecutionStartedEventAttributes: { input: payloads({ key: 'weka-node/n1' }) } }),
      ask(10, 'r1', 'a'),
      // A resend of a's request, and a release of b: neither is when a container asked to be allocated.
      ask(20, 'r1-again', 'a'),
      ask(25, 'r2', 'b', 'release'),
      ask(30, 'r3', 'c'),
    ]);
    const second = mutexRunOf('n1', [
      event(100, {
        workflowExecutionStartedEventAttributes: {
          input: payloads({
            key: 'weka-node/n1',
            state: { queue: [{ requestId: 'r3', kind: 'allocate', payload: { namespace: 'ns', name: 'c' } }] },
          }),
        },
      }),
      ask(110, 'r4', 'b'),
    ]);
    expect([...first.allocationArrivals]).toEqual([
      ['ns/a', 10],
      ['ns/c', 30],
    ]);
    expect([...allocationAskedAt([first, second])].sort()).toEqual([
      ['ns/a', 10],
      ['ns/b', 110],
      ['ns/c', Number.NEGATIVE_INFINITY],
    ]);
  });
});

describe('nearest-rank percentile', () => {
  it.each([
    [[], 50, Number.NaN],
    [[7], 99, 7],
    [[1, 2, 3, 4], 50, 2],
    [[1, 2, 3, 4], 99, 4],
    [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90, 9],
  ])('of %j at p%d is %d', (values, p, expected) => {
    expect(percentile(values, p)).toEqual(expected);
  });
});
