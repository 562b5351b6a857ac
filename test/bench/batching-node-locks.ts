// One in-memory lock per node, in one process, with nothing durable: the least any design can
// spend to serialize a node's decisions. Like the node mutex, a decision takes every request
// queued on the node when it starts (up to a bound) and decides them together: a request that
// finds the node free is decided at once, alone; the ones that arrive while a decision runs wait
// and go together into the next one, which starts as soon as the previous one has ended.

/** Now, in ms since the epoch to the microsecond (the hand-over between two decisions is that short). */
export const preciseNow = (): number => performance.timeOrigin + performance.now();

/** One decision on a node: how many requests it took, and when (ms since the epoch). */
export interface LockedDecision {
  node: string;
  requests: number;
  /** When the first of its requests was made. */
  firstAskedAt: number;
  startedAt: number;
  endedAt: number;
}

interface Waiting<A, R> {
  ask: A;
  askedAt: number;
  resolve: (outcome: R) => void;
  reject: (err: unknown) => void;
}

export class BatchingNodeLocks<A, R> {
  private readonly queues = new Map<string, Waiting<A, R>[]>();
  private readonly busy = new Set<string>();
  /** Every decision made so far, in the order they ended. */
  readonly decisions: LockedDecision[] = [];

  /** `decide` answers a batch of one node's asks, one outcome per ask, in the same order. */
  constructor(
    private readonly decide: (node: string, asks: A[]) => Promise<R[]>,
    private readonly maxBatch: number,
  ) {}

  /** Resolves with this ask's outcome once the decision that took it has ended. */
  request(node: string, ask: A): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const queue = this.queues.get(node) ?? [];
      queue.push({ ask, askedAt: preciseNow(), resolve, reject });
      this.queues.set(node, queue);
      if (!this.busy.has(node)) void this.drain(node);
    });
  }

  /** Decides the node's queue batch after batch until it is empty, then lets the node go. */
  private async drain(node: string): Promise<void> {
    this.busy.add(node);
    const queue = this.queues.get(node)!;
    while (queue.length > 0) {
      const batch = queue.splice(0, this.maxBatch);
      const startedAt = preciseNow();
      try {
        const outcomes = await this.decide(
          node,
          batch.map((w) => w.ask),
        );
        const firstAskedAt = Math.min(...batch.map((w) => w.askedAt));
        this.decisions.push({ node, requests: batch.length, firstAskedAt, startedAt, endedAt: preciseNow() });
        batch.forEach((w, i) =>
          i < outcomes.length ? w.resolve(outcomes[i]!) : w.reject(new Error(`no outcome for ask ${i} on ${node}`)),
        );
      } catch (err) {
        batch.forEach((w) => w.reject(err));
      }
    }
    this.busy.delete(node);
  }
}

/**
 * Per node, from a decision's end to the next decision's start, for every next decision one of
 * whose requests was already waiting when the previous one ended (the same pairs the mutex's and
 * the Lease's hand-overs count).
 */
export function lockHandOvers(decisions: readonly LockedDecision[]): number[] {
  const byNode = new Map<string, LockedDecision[]>();
  for (const d of decisions) byNode.set(d.node, [...(byNode.get(d.node) ?? []), d]);
  const gaps: number[] = [];
  for (const nodeDecisions of byNode.values()) {
    const ordered = [...nodeDecisions].sort((a, b) => a.startedAt - b.startedAt);
    for (let i = 0; i + 1 < ordered.length; i++) {
      const [prev, next] = [ordered[i]!, ordered[i + 1]!];
      if (next.firstAskedAt <= prev.endedAt) gaps.push(next.startedAt - prev.endedAt);
    }
  }
  return gaps;
}
