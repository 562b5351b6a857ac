// The baseline's lock, for the benchmark only: a coordination.k8s.io/v1 Lease per node, acquired,
// renewed and released the way client-go's leaderelection package does it (which is what the
// seed's per-node leader election uses: 15 s lease duration, 10 s renew deadline, 2 s retry).
//
// - tryAcquireOrRenew: get the Lease (create it when missing); if another identity holds it and
//   it has not expired, give up this round; otherwise write ourselves as holder with the
//   resourceVersion we read (a conflict means somebody else won).
// - Expiry is judged like client-go: from when *we* last saw the record change, plus its
//   leaseDurationSeconds (clocks are never compared across clients).
// - Non-holders retry every retryPeriod plus up to 1.2 x retryPeriod of jitter (wait.JitterUntil
//   with JitterFactor 1.2); a holder renews every retryPeriod and loses the lock if it cannot
//   within renewDeadline.
// - release() writes an empty holder with leaseDurationSeconds 1, so the next try by anyone wins.
import { CoordinationV1Api, V1MicroTime, type V1Lease, type V1LeaseSpec } from '@kubernetes/client-node';
import { sleep } from '../support/async.js';

export interface LeaseTimings {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

/** The seed's settings (../shared/seeds/002_…). */
export const SEED_LEASE_TIMINGS: LeaseTimings = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
};
/** client-go's leaderelection.JitterFactor. */
const JITTER_FACTOR = 1.2;

const codeOf = (err: unknown): number | undefined => (err as { code?: number } | null)?.code;

export class LeaseLock {
  private lease?: V1Lease;
  /** When tryAcquireOrRenew last succeeded: the holder's last write. */
  lastWriteAt?: number;
  private observed?: { raw: string; spec: V1LeaseSpec; at: number };

  constructor(
    private readonly api: CoordinationV1Api,
    readonly namespace: string,
    readonly name: string,
    readonly identity: string,
    private readonly timings: LeaseTimings = SEED_LEASE_TIMINGS,
  ) {}

  isHolder(): boolean {
    return this.observed?.spec.holderIdentity === this.identity;
  }

  private leaseValid(now: number): boolean {
    return (
      this.observed !== undefined && this.observed.at + (this.observed.spec.leaseDurationSeconds ?? 0) * 1000 > now
    );
  }

  private observe(spec: V1LeaseSpec): void {
    this.observed = { raw: JSON.stringify(spec), spec, at: Date.now() };
  }

  private record(
    holderIdentity: string,
    leaseDurationSeconds: number,
    acquireTime: Date,
    leaseTransitions: number,
  ): V1LeaseSpec {
    return {
      holderIdentity,
      leaseDurationSeconds,
      acquireTime: new V1MicroTime(acquireTime),
      renewTime: new V1MicroTime(),
      leaseTransitions,
    };
  }

  /** One round of client-go's tryAcquireOrRenew; true when we hold the lease afterwards. */
  async tryAcquireOrRenew(): Promise<boolean> {
    const durationSeconds = Math.round(this.timings.leaseDurationMs / 1000);
    const now = new Date();
    let current: V1Lease;
    try {
      current = await this.api.readNamespacedLease({ name: this.name, namespace: this.namespace });
    } catch (err) {
      if (codeOf(err) !== 404) return false;
      try {
        this.lease = await this.api.createNamespacedLease({
          namespace: this.namespace,
          body: {
            metadata: { name: this.name, namespace: this.namespace },
            spec: this.record(this.identity, durationSeconds, now, 0),
          },
        });
      } catch {
        return false; // somebody created it first
      }
      this.observe(this.lease.spec!);
      this.lastWriteAt = Date.now();
      return true;
    }
    this.lease = current;
    const spec = current.spec ?? {};
    if (JSON.stringify(spec) !== this.observed?.raw) this.observe(spec);
    if ((spec.holderIdentity ?? '') !== '' && this.leaseValid(now.getTime()) && !this.isHolder()) return false;
    const holding = this.isHolder();
    const next = this.record(
      this.identity,
      durationSeconds,
      holding && spec.acquireTime ? spec.acquireTime : now,
      (spec.leaseTransitions ?? 0) + (holding ? 0 : 1),
    );
    try {
      // replace with the resourceVersion we read: 409 if the Lease changed since.
      this.lease = await this.api.replaceNamespacedLease({
        name: this.name,
        namespace: this.namespace,
        body: { ...current, spec: next },
      });
    } catch {
      return false;
    }
    this.observe(this.lease.spec!);
    this.lastWriteAt = Date.now();
    return true;
  }

  /** Blocks until we hold the lease (client-go's acquire loop). */
  async acquire(): Promise<void> {
    for (;;) {
      if (await this.tryAcquireOrRenew()) return;
      await sleep(this.timings.retryPeriodMs * (1 + Math.random() * JITTER_FACTOR));
    }
  }

  /**
   * Renews every retryPeriod while held (client-go's renew loop); `onLost` runs when a renewal
   * does not succeed within renewDeadline. Returns the function that stops renewing.
   */
  startRenewing(onLost: () => void): () => void {
    let stopped = false;
    const loop = async (): Promise<void> => {
      while (!stopped) {
        await sleep(this.timings.retryPeriodMs);
        const deadline = Date.now() + this.timings.renewDeadlineMs;
        let renewed = false;
        while (!stopped && !renewed && Date.now() < deadline) {
          renewed = await this.tryAcquireOrRenew();
          if (!renewed) await sleep(this.timings.retryPeriodMs);
        }
        if (!stopped && !renewed) {
          onLost();
          return;
        }
      }
    };
    void loop();
    return () => {
      stopped = true;
    };
  }

  /** Gives the lease up at once: empty holder, 1 s duration (client-go's release). */
  async release(): Promise<void> {
    if (!this.isHolder() || !this.lease) return;
    const now = new Date();
    const spec = this.record('', 1, now, this.observed?.spec.leaseTransitions ?? 0);
    this.lease = await this.api.replaceNamespacedLease({
      name: this.name,
      namespace: this.namespace,
      body: { ...this.lease, spec },
    });
    this.observe(this.lease.spec!);
  }
}
