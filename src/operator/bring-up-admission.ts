// How many drive containers the operator brings up at once. A bring-up is busy work for the
// workers (allocation, pod, signing, adding drives, each a workflow task with local activities);
// a parked container costs nothing. With more bring-ups in flight than the workers cache, every
// workflow task replays a history and evicts another workflow, often one whose local activities
// are still running, and their results are thrown away and redone: throughput falls as the burst
// grows (docs/performance.md, "5. Scale"). So the watcher starts at most `limit` new lifecycles
// at a time, first come first served, and the rest wait with a condition saying so.
//
// A bring-up stops counting when its container settles (Ready, Error, Refused, deleting), when it says with
// a False condition that it waits for something (capacity, a node name, its pod), when it is gone,
// and in any case after `holdMs`: a parked container is not busy, and must never hold back another
// tenant's containers. WaitingForCluster is no settled phase: every container passes through it.
// Each watcher process counts its own: two replicas admit up to twice the limit, which only
// loosens a bound on load.
import type { WatchedObject } from './watch-decision.js';

/** Phases in which a drive container's workflow is no longer bringing it up. */
export const SETTLED_CONTAINER_PHASES: readonly string[] = ['Ready', 'Error', 'Refused', 'Deleting', 'Deleted'];

/** The condition the watcher sets on a container that waits for its turn to start. */
export const QUEUED_CONDITION = 'Queued';

export interface AdmissionLimits {
  /** Bring-ups in flight at once. */
  limit: number;
  /** How long one bring-up counts at most. */
  holdMs: number;
}

export type AdmissionDecision =
  { admitted: true } | { admitted: false; limit: number; inFlight: number; ahead: number };

/** What the Queued condition and Event say to someone looking at a waiting container. */
export function queuedMessage(d: { limit: number; inFlight: number; ahead: number }): string {
  const before = d.ahead === 0 ? 'it is next' : `${d.ahead} waiting before it`;
  return (
    `waiting to start: the operator brings up at most ${d.limit} drive containers at once ` +
    `(WEKA_MAX_CONCURRENT_BRINGUPS) and ${d.inFlight} are in progress; ${before}`
  );
}

/**
 * Done with its bring-up, or parked: Ready, Error, deleting, or waiting for something with a
 * condition False that says what (Placed, ProxyReady, Allocated, PodCreated, PodScheduled, Ready
 * while a failed step waits to be tried again).
 */
export function isSettled(obj: WatchedObject): boolean {
  return (
    obj.deleting ||
    obj.status.falseCondition !== undefined ||
    (obj.status.phase !== undefined && SETTLED_CONTAINER_PHASES.includes(obj.status.phase))
  );
}

/**
 * Whether the object's workflow has run: the watcher wrote its id, or the workflow wrote a phase.
 * Such a container is never held back (starting it again changes nothing).
 */
export function hasStarted(obj: WatchedObject): boolean {
  return obj.status.workflowID !== undefined || obj.status.phase !== undefined;
}

/**
 * The admission state of one watcher process: plain data, driven by what the watch sees. It counts
 * the bring-ups this process started; after a restart, the ones the process before started are
 * not counted, so for a while up to twice the limit may run (counting them would hold every new
 * container back behind each parked one after every restart).
 */
export class BringUpAdmission {
  /** uid -> when it began to count. */
  private readonly holding = new Map<string, number>();
  /** uid -> the newest sighting, in the order they first asked. */
  private readonly waiting = new Map<string, WatchedObject>();

  constructor(private readonly limits: AdmissionLimits) {}

  /** A sighting from the watch. Returns the waiting objects that may start now. */
  observe(obj: WatchedObject, now: number): WatchedObject[] {
    if (isSettled(obj)) {
      this.holding.delete(obj.uid);
      this.waiting.delete(obj.uid);
    } else if (hasStarted(obj)) {
      // Started while it waited here: by another replica's watcher.
      this.waiting.delete(obj.uid);
    } else if (this.waiting.has(obj.uid)) {
      this.waiting.set(obj.uid, obj);
    }
    return this.admissible(now);
  }

  /** The object is gone from the apiserver. Returns the waiting objects that may start now. */
  forget(uid: string, now: number): WatchedObject[] {
    this.holding.delete(uid);
    this.waiting.delete(uid);
    return this.admissible(now);
  }

  /**
   * Whether `obj`'s workflow may start now. One already started always may. Otherwise it takes a
   * free place if no earlier one waits for it, and else waits its turn.
   */
  admit(obj: WatchedObject, now: number): AdmissionDecision {
    if (this.holding.has(obj.uid)) return { admitted: true };
    if (hasStarted(obj)) {
      this.waiting.delete(obj.uid);
      return { admitted: true };
    }
    this.expire(now);
    const free = this.limits.limit - this.holding.size;
    const ahead = this.positionOf(obj.uid);
    if (ahead < free) {
      this.waiting.delete(obj.uid);
      this.holding.set(obj.uid, now);
      return { admitted: true };
    }
    // Map.set keeps a waiting object's place and appends a new one.
    this.waiting.set(obj.uid, obj);
    return { admitted: false, limit: this.limits.limit, inFlight: this.holding.size, ahead };
  }

  /** Called now and then: holds that ran out free their places. Returns who may start now. */
  tick(now: number): WatchedObject[] {
    return this.admissible(now);
  }

  inFlight(): number {
    return this.holding.size;
  }

  waitingCount(): number {
    return this.waiting.size;
  }

  /**
   * The waiting objects, oldest first, that fit in the free places. They stay in `waiting` until
   * they ask again through admit(), which the watcher does by handling them again.
   */
  private admissible(now: number): WatchedObject[] {
    this.expire(now);
    const free = this.limits.limit - this.holding.size;
    if (free <= 0 || this.waiting.size === 0) return [];
    const out: WatchedObject[] = [];
    for (const obj of this.waiting.values()) {
      if (out.length >= free) break;
      out.push(obj);
    }
    return out;
  }

  /** How many waiting objects go before `uid`: all of them when it does not wait yet. */
  private positionOf(uid: string): number {
    let position = 0;
    for (const waiting of this.waiting.keys()) {
      if (waiting === uid) return position;
      position++;
    }
    return position;
  }

  private expire(now: number): void {
    for (const [uid, since] of this.holding) if (now - since >= this.limits.holdMs) this.holding.delete(uid);
  }
}
