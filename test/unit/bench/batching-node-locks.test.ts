// The floor's per-node in-memory locks: one decision at a time per node, the requests that queued
// meanwhile decided together next, nodes independent, and hand-overs counted only for requests
// that were waiting.
import { describe, expect, it } from 'vitest';
import { BatchingNodeLocks, lockHandOvers, type LockedDecision } from '../../bench/batching-node-locks.js';

/** A decider whose decisions end only when the test says so. */
function controlledDecider() {
  const batches: { node: string; asks: string[]; finish: () => void }[] = [];
  const running = new Map<string, number>();
  let overlapped = false;
  const decide = (node: string, asks: string[]): Promise<string[]> =>
    new Promise((resolve) => {
      running.set(node, (running.get(node) ?? 0) + 1);
      if (running.get(node)! > 1) overlapped = true;
      batches.push({
        node,
        asks,
        finish: () => {
          running.set(node, running.get(node)! - 1);
          resolve(asks.map((a) => `${a}:done`));
        },
      });
    });
  return { decide, batches, overlapped: () => overlapped };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('BatchingNodeLocks', () => {
  it('decides a request at once when the node is free, and the ones queued meanwhile together next', async () => {
    const d = controlledDecider();
    const locks = new BatchingNodeLocks(d.decide, 50);
    const outcomes = ['a', 'b', 'c'].map((a) => locks.request('n1', a));
    await settle();
    expect(d.batches.map((b) => b.asks)).toEqual([['a']]);
    d.batches[0]!.finish();
    await settle();
    expect(d.batches.map((b) => b.asks)).toEqual([['a'], ['b', 'c']]);
    d.batches[1]!.finish();
    expect(await Promise.all(outcomes)).toEqual(['a:done', 'b:done', 'c:done']);
    expect(d.overlapped()).toBe(false);
    expect(locks.decisions.map((x) => x.requests)).toEqual([1, 2]);
  });

  it('takes at most the bound in one decision', async () => {
    const d = controlledDecider();
    const locks = new BatchingNodeLocks(d.decide, 2);
    const outcomes = ['a', 'b', 'c', 'd'].map((a) => locks.request('n1', a));
    for (let i = 0; i < 3; i++) {
      await settle();
      d.batches[i]!.finish();
    }
    await Promise.all(outcomes);
    expect(d.batches.map((b) => b.asks)).toEqual([['a'], ['b', 'c'], ['d']]);
  });

  it('runs different nodes at the same time', async () => {
    const d = controlledDecider();
    const locks = new BatchingNodeLocks(d.decide, 50);
    const outcomes = [locks.request('n1', 'a'), locks.request('n2', 'b')];
    await settle();
    expect(d.batches.map((b) => b.node)).toEqual(['n1', 'n2']);
    d.batches.forEach((b) => b.finish());
    expect(await Promise.all(outcomes)).toEqual(['a:done', 'b:done']);
  });

  it('rejects every request of a decision that throws, and goes on with the next', async () => {
    let calls = 0;
    const locks = new BatchingNodeLocks(async (_node: string, asks: string[]) => {
      calls++;
      if (calls === 1) throw new Error('apiserver down');
      return asks;
    }, 50);
    const first = locks.request('n1', 'a');
    const second = locks.request('n1', 'b');
    await expect(first).rejects.toThrow('apiserver down');
    expect(await second).toBe('b');
  });
});

describe('lockHandOvers', () => {
  const decision = (node: string, firstAskedAt: number, startedAt: number, endedAt: number): LockedDecision => ({
    node,
    requests: 1,
    firstAskedAt,
    startedAt,
    endedAt,
  });

  it('counts, per node, end to next start when the next was already waiting', () => {
    expect(
      lockHandOvers([
        decision('n1', 0, 0, 10),
        decision('n1', 5, 10.5, 20),
        // Asked after the node went idle: not a hand-over.
        decision('n1', 30, 30, 40),
        decision('n2', 0, 1, 12),
        decision('n2', 2, 12.25, 15),
      ]),
    ).toEqual([0.5, 0.25]);
  });
});
