// A keyed, coalescing work queue: one item per key (the newest replaces an older one not yet
// handled), one handler at a time per key so one object's actions never interleave, a bounded
// number of keys at once, and a failed key retried after a jittered back-off with the newest item.
// Items from a list wait behind the others: a list of thousands must not hold up a change (a
// deletion, say) that arrives behind it.
// The handling is level-based (the decision looks at the object as it is), so skipping
// intermediate versions of an object loses nothing.
import { backoffDelay, DEFAULT_BACKOFF, type Backoff } from '../../../src/backoff.js';

interface KeyState<T> {
  item: T;
  /** A newer item arrived and has not been handled yet. */
  dirty: boolean;
  /** An item not yet handled came from a change, not from a list: its key goes ahead. */
  urgent: boolean;
  running: boolean;
  failures: number;
  retry?: NodeJS.Timeout | undefined;
  /** performance.now() when the key last entered the ready list. */
  queuedAt?: number | undefined;
}

/** What the queue reports as it works, for metrics; times in seconds. */
export interface WorkQueueObserver {
  /** Keys waiting to be handled (not running, not waiting out a back-off). */
  depth(keys: number): void;
  /** A key's wait in the ready list before its handling started. */
  waited(seconds: number): void;
  /** One handling's duration, failed or not. */
  worked(seconds: number): void;
  /** A failed key was put back to be retried after a back-off. */
  retried(): void;
}

export interface WorkQueueOptions {
  concurrency?: number;
  backoff?: Backoff;
  onError?: (key: string, err: unknown, failures: number) => void;
  observer?: WorkQueueObserver;
}

type Lane = 'urgent' | 'background';
const LANES_URGENT_FIRST: readonly Lane[] = ['urgent', 'background'];
const LANES_BACKGROUND_FIRST: readonly Lane[] = ['background', 'urgent'];
/** One key in this many is taken from the background lane when it has any. */
const BACKGROUND_TURN = 10;

export class KeyedWorkQueue<T> {
  private readonly keys = new Map<string, KeyState<T>>();
  /** The keys ready to run, by the lane each waits in (a key moved to urgent leaves a stale entry behind). */
  private readonly ready = new Map<string, Lane>();
  private readonly lanes: Record<Lane, string[]> = { urgent: [], background: [] };
  private picks = 0;
  private active = 0;
  private stopped = false;
  private idleWaiters: Array<() => void> = [];
  private readonly concurrency: number;

  constructor(
    private readonly handle: (key: string, item: T) => Promise<void>,
    private readonly options: WorkQueueOptions = {},
  ) {
    this.concurrency = options.concurrency ?? 8;
  }

  /** Queues the key's newest item; `background` for an item from a list rather than a change. */
  add(key: string, item: T, { background = false } = {}): void {
    if (this.stopped) return;
    const state = this.keys.get(key);
    if (!state) {
      this.keys.set(key, { item, dirty: true, urgent: !background, running: false, failures: 0 });
      this.enqueue(key);
      return;
    }
    state.item = item;
    state.dirty = true;
    if (!background) state.urgent = true;
    // A key waiting out its back-off keeps waiting (with the newest item) so a stream of events
    // during an outage does not turn into a stream of failing calls.
    if (!state.running && state.retry === undefined) this.enqueue(key);
  }

  /**
   * Drops the key (its object is gone): nothing pending, no retry. A handler already running
   * finishes; uids are never reused, so no new item for the key is expected meanwhile.
   */
  forget(key: string): void {
    const state = this.keys.get(key);
    if (!state) return;
    if (state.retry) clearTimeout(state.retry);
    this.keys.delete(key);
    this.ready.delete(key);
    this.notifyIfIdle();
  }

  /** The keys with work: queued, running or waiting out a back-off. */
  get size(): number {
    return this.keys.size;
  }

  /** Resolves when no key is queued or running (keys waiting out a back-off do not count). */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops taking work, cancels retries, and waits for the handlers that are running. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.ready.clear();
    this.lanes.urgent.length = 0;
    this.lanes.background.length = 0;
    this.options.observer?.depth(0);
    for (const state of this.keys.values()) if (state.retry) clearTimeout(state.retry);
    await this.idle();
    this.keys.clear();
  }

  private isIdle(): boolean {
    return this.active === 0 && this.ready.size === 0;
  }

  private notifyIfIdle(): void {
    if (!this.isIdle()) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  private enqueue(key: string): void {
    const state = this.keys.get(key);
    const lane: Lane = state?.urgent ? 'urgent' : 'background';
    const waiting = this.ready.get(key);
    if (waiting !== 'urgent' && waiting !== lane) this.markReady(key, lane);
    this.pump();
  }

  private markReady(key: string, lane: Lane): void {
    const state = this.keys.get(key);
    if (state && state.queuedAt === undefined) state.queuedAt = performance.now();
    this.ready.set(key, lane);
    this.lanes[lane].push(key);
    this.options.observer?.depth(this.ready.size);
  }

  /**
   * The next ready key: urgent ones first, but every BACKGROUND_TURN-th key from the background
   * lane when it has any, so a steady stream of changes cannot hold a list's objects back for
   * ever. Entries a key left behind by moving lanes are skipped.
   */
  private next(): string | undefined {
    const backgroundTurn = ++this.picks % BACKGROUND_TURN === 0;
    for (const lane of backgroundTurn ? LANES_BACKGROUND_FIRST : LANES_URGENT_FIRST) {
      const keys = this.lanes[lane];
      while (keys.length > 0) {
        const key = keys.shift()!;
        if (this.ready.get(key) !== lane) continue;
        this.ready.delete(key);
        return key;
      }
    }
    return undefined;
  }

  private pump(): void {
    while (!this.stopped && this.active < this.concurrency && this.ready.size > 0) {
      const key = this.next();
      this.options.observer?.depth(this.ready.size);
      if (key === undefined) break;
      const state = this.keys.get(key);
      if (!state || state.running || !state.dirty) continue;
      void this.run(key, state);
    }
    this.notifyIfIdle();
  }

  private async run(key: string, state: KeyState<T>): Promise<void> {
    this.active++;
    state.running = true;
    state.dirty = false;
    const wasUrgent = state.urgent;
    state.urgent = false;
    const started = performance.now();
    if (state.queuedAt !== undefined) this.options.observer?.waited((started - state.queuedAt) / 1000);
    state.queuedAt = undefined;
    const item = state.item;
    let failed = false;
    try {
      await this.handle(key, item);
      state.failures = 0;
    } catch (err) {
      failed = true;
      state.failures++;
      state.urgent ||= wasUrgent;
      this.options.onError?.(key, err, state.failures);
    } finally {
      state.running = false;
      this.active--;
      this.options.observer?.worked((performance.now() - started) / 1000);
    }
    if (this.keys.get(key) !== state || this.stopped) {
      this.pump();
      return;
    }
    if (failed) {
      state.dirty = true;
      this.options.observer?.retried();
      state.retry = setTimeout(
        () => {
          state.retry = undefined;
          if (this.keys.get(key) === state) this.enqueue(key);
        },
        backoffDelay(state.failures, this.options.backoff ?? DEFAULT_BACKOFF),
      );
      state.retry.unref();
    } else if (state.dirty) {
      this.markReady(key, state.urgent ? 'urgent' : 'background');
    } else {
      // Handled, and nothing newer: the next item for the key starts afresh, and the queue holds
      // the keys it has work for, not every object it ever saw.
      this.keys.delete(key);
    }
    this.pump();
  }
}
