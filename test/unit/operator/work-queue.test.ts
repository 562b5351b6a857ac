import { describe, expect, it } from 'vitest';
import { KeyedWorkQueue } from '../../../deploy/operator/watcher/work-queue.js';
import { cliCommandLabel } from '../../../deploy/operator/metrics.js';

const FAST = { initialMs: 5, maxMs: 20 };

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('KeyedWorkQueue', () => {
  it('hands a busy key only its newest item once the running one finishes', async () => {
    const seen: string[] = [];
    const gate = deferred();
    const q = new KeyedWorkQueue<string>(async (_k, item) => {
      seen.push(item);
      if (item === 'v1') await gate.promise;
    });
    q.add('a', 'v1');
    q.add('a', 'v2');
    q.add('a', 'v3');
    gate.resolve();
    await q.idle();
    expect(seen).toEqual(['v1', 'v3']);
  });

  it('runs a change ahead of the keys a list queued before it, and a listed key that changes moves ahead too', async () => {
    const seen: string[] = [];
    const gate = deferred();
    const q = new KeyedWorkQueue<string>(
      async (key, item) => {
        seen.push(`${key}:${item}`);
        if (key === 'first') await gate.promise;
      },
      { concurrency: 1 },
    );
    q.add('first', 'listed', { background: true });
    for (let i = 0; i < 5; i++) q.add(`k${i}`, 'listed', { background: true });
    q.add('deleted', 'change');
    q.add('k3', 'change');
    q.add('k1', 'listed again', { background: true });
    gate.resolve();
    await q.idle();
    expect(seen).toEqual([
      'first:listed',
      'deleted:change',
      'k3:change',
      'k0:listed',
      'k1:listed again',
      'k2:listed',
      'k4:listed',
    ]);
  });

  it('gives a list its turn under a steady stream of changes: one key in ten from the list', async () => {
    const seen: string[] = [];
    const q = new KeyedWorkQueue<number>(
      async (key, n) => {
        seen.push(key);
        // Every change handled brings another: the urgent lane is never empty.
        if (key.startsWith('change') && n < 40) q.add(`change-${n + 1}`, n + 1);
      },
      { concurrency: 1 },
    );
    for (let i = 0; i < 3; i++) q.add(`listed-${i}`, 0, { background: true });
    q.add('change-0', 0);
    await q.idle();
    const listed = seen.flatMap((key, at) => (key.startsWith('listed') ? [at] : []));
    expect(listed).toHaveLength(3);
    expect(listed[2]).toBeLessThan(35);
  });

  it('forgets a queued key at once: it is not run, and the queue is idle without it', async () => {
    const seen: string[] = [];
    const gate = deferred();
    const q = new KeyedWorkQueue<string>(
      async (key) => {
        seen.push(key);
        await gate.promise;
      },
      { concurrency: 1 },
    );
    q.add('running', 'v1');
    q.add('gone', 'v1', { background: true });
    q.forget('gone');
    gate.resolve();
    await q.idle();
    expect(seen).toEqual(['running']);
  });

  it('holds only the keys it has work for: a handled key is dropped, a failed one kept for its retry', async () => {
    let fail = true;
    const q = new KeyedWorkQueue<number>(
      async (key) => {
        if (key === 'flaky' && fail) {
          fail = false;
          throw new Error('apiserver down');
        }
      },
      { backoff: { initialMs: 50, maxMs: 50 } },
    );
    for (let i = 0; i < 100; i++) q.add(`k${i}`, i);
    q.add('flaky', 0);
    await q.idle();
    expect(q.size).toBe(1);
    await new Promise((r) => setTimeout(r, 200));
    await q.idle();
    expect(fail).toBe(false);
    expect(q.size).toBe(0);
  });

  it('never runs one key twice at once, but runs different keys side by side', async () => {
    let running = 0;
    let most = 0;
    const perKey = new Map<string, number>();
    const q = new KeyedWorkQueue<number>(
      async (key) => {
        running++;
        most = Math.max(most, running);
        perKey.set(key, (perKey.get(key) ?? 0) + 1);
        expect(perKey.get(key)).toBe(1);
        await new Promise((r) => setTimeout(r, 5));
        perKey.set(key, perKey.get(key)! - 1);
        running--;
      },
      { concurrency: 3 },
    );
    for (let i = 0; i < 20; i++) q.add(`k${i % 5}`, i);
    await q.idle();
    expect(most).toBe(3);
  });

  it('retries a failed key after a back-off, with the newest item', async () => {
    const seen: string[] = [];
    let failures = 0;
    const q = new KeyedWorkQueue<string>(
      async (_k, item) => {
        seen.push(item);
        if (item === 'v1') {
          failures++;
          throw new Error('apiserver down');
        }
      },
      { backoff: FAST, onError: () => q.add('a', 'v2') },
    );
    q.add('a', 'v1');
    await q.idle(); // a key waiting out its back-off does not count as busy
    expect(seen).toEqual(['v1']);
    await new Promise((r) => setTimeout(r, 60));
    await q.idle();
    expect(seen).toEqual(['v1', 'v2']);
    expect(failures).toBe(1);
  });

  it('keeps retrying a failing key until it succeeds', async () => {
    let calls = 0;
    const q = new KeyedWorkQueue<string>(
      async () => {
        if (++calls < 4) throw new Error('not yet');
      },
      { backoff: FAST },
    );
    q.add('a', 'x');
    await new Promise((r) => setTimeout(r, 200));
    expect(calls).toBe(4);
    await q.stop();
  });

  it('drops a forgotten key: no retry', async () => {
    let calls = 0;
    const q = new KeyedWorkQueue<string>(
      async () => {
        calls++;
        throw new Error('fails');
      },
      { backoff: FAST },
    );
    q.add('a', 'x');
    await q.idle();
    q.forget('a');
    await new Promise((r) => setTimeout(r, 60));
    expect(calls).toBe(1);
  });

  it('stops taking work and waits for the handlers that run', async () => {
    const gate = deferred();
    const finished: string[] = [];
    const q = new KeyedWorkQueue<string>(async (_k, item) => {
      await gate.promise;
      finished.push(item);
    });
    q.add('a', 'x');
    const stopped = q.stop();
    q.add('b', 'y');
    setTimeout(gate.resolve, 10);
    await stopped;
    expect(finished).toEqual(['x']);
  });
});

describe('cliCommandLabel', () => {
  it('keeps the tool and sub-commands up to the verb, never the arguments', () => {
    expect(cliCommandLabel(['weka', 'cluster', 'drive', 'add', '3', '0b1c', '--json'])).toBe('weka cluster drive add');
    expect(cliCommandLabel(['weka-sign-drive', 'virtual', 'add', '/dev/nvme0n1', '--virtual-uuid', 'u'])).toBe(
      'weka-sign-drive virtual add',
    );
    expect(cliCommandLabel(['weka-sign-drive', 'sign', 'proxy', '/dev/nvme0n1'])).toBe('weka-sign-drive sign');
    expect(cliCommandLabel(['weka', 'cluster', 'create', 'my-cluster', '--json'])).toBe('weka cluster create');
    expect(cliCommandLabel(['weka-sign-drive', 'show', '--json', '/dev/nvme0n1'])).toBe('weka-sign-drive show');
    expect(cliCommandLabel(['/usr/bin/weka'])).toBe('unknown');
  });

  it('reports its depth, each wait and handling, and each retry to its observer', async () => {
    const depths: number[] = [];
    const waits: number[] = [];
    const works: number[] = [];
    let retries = 0;
    const gate = deferred();
    let calls = 0;
    const q = new KeyedWorkQueue<string>(
      async (key) => {
        calls++;
        if (key === 'a') await gate.promise;
        if (key === 'b' && calls === 2) throw new Error('apiserver down');
      },
      {
        concurrency: 1,
        backoff: FAST,
        observer: {
          depth: (n) => depths.push(n),
          waited: (s) => waits.push(s),
          worked: (s) => works.push(s),
          retried: () => retries++,
        },
      },
    );
    q.add('a', 'x');
    q.add('b', 'x');
    q.add('c', 'x');
    expect(depths.at(-1)).toBe(2);
    await new Promise((r) => setTimeout(r, 30));
    gate.resolve();
    await q.idle();
    await new Promise((r) => setTimeout(r, 60));
    await q.idle();
    expect(depths.at(-1)).toBe(0);
    expect(retries).toBe(1);
    // a, b (failed), c, then b again after its back-off.
    expect(works).toHaveLength(4);
    expect(waits).toHaveLength(4);
    // b waited behind a, which held the only slot for 30 ms.
    expect(Math.max(...waits)).toBeGreaterThanOrEqual(0.025);
  });
});
