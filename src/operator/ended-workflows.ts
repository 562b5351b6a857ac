// Lifecycle workflows that ended while their object still exists: terminated from the Temporal UI
// or `temporal workflow terminate`, failed, timed out. The watcher asks Temporal's visibility
// store now and then which lifecycle workflows closed since it last asked, and starts the ones
// whose object is still there again (watch-decision says what to do; this module says which, and
// when). A workflow that keeps ending is started again less and less often, so one broken object
// costs the workers little; a deleted object's workflow, which ends after its teardown, is no
// longer watched and is left alone.

/** Closing statuses that leave an object without a workflow (ContinuedAsNew has a next run). */
export const ENDED_STATUSES = ['Completed', 'Failed', 'Canceled', 'Terminated', 'TimedOut'] as const;

/**
 * Visibility can list a closed workflow a little after it closed; each query reaches this far back
 * before the previous one, and runs already handled are skipped by run id.
 */
export const VISIBILITY_OVERLAP_MS = 60_000;

/** A closed run as the sweep needs it: from its memo (set at start) and its listing. */
export interface EndedRun {
  workflowId: string;
  runId: string;
  /** The visibility status name, e.g. TERMINATED. */
  status: string;
  closedAt: number;
  kind: string;
  namespace: string;
  name: string;
  uid: string;
}

/** A string value in a visibility query; a quote in it could only come from a bug, and is dropped. */
const quote = (value: string): string => `'${value.replace(/'/g, '')}'`;

/** The visibility query for runs of these workflow types that closed at or after `since`. */
export function endedWorkflowsQuery(workflowTypes: readonly string[], since: number): string {
  if (workflowTypes.length === 0) throw new Error('no workflow types to ask about');
  const quoted = (values: readonly string[]) => values.map(quote).join(', ');
  return (
    `WorkflowType IN (${quoted(workflowTypes)}) AND ExecutionStatus IN (${quoted(ENDED_STATUSES)}) ` +
    `AND CloseTime >= '${new Date(since).toISOString()}'`
  );
}

/** The visibility query for the running workflows of one type, on one task queue or on any. */
export function runningWorkflowsQuery(workflowType: string, taskQueue?: string): string {
  const queue = taskQueue === undefined ? '' : ` AND TaskQueue = ${quote(taskQueue)}`;
  return `WorkflowType = ${quote(workflowType)}${queue} AND ExecutionStatus = 'Running'`;
}

/** The memo the watcher gives every lifecycle workflow it starts, or undefined when it is not one. */
export function memoRef(memo: unknown): { kind: string; namespace: string; name: string; uid: string } | undefined {
  if (typeof memo !== 'object' || memo === null) return undefined;
  const m = memo as Record<string, unknown>;
  const { kind, namespace, name, uid } = m;
  if (typeof kind !== 'string' || typeof namespace !== 'string' || typeof name !== 'string' || typeof uid !== 'string')
    return undefined;
  return { kind, namespace, name, uid };
}

export interface RestartPacing {
  /** The wait before a second restart within `resetMs`; it doubles with each further one. */
  firstDelayMs: number;
  maxDelayMs: number;
  /** A uid not restarted for this long starts over with no wait. */
  resetMs: number;
}

export const DEFAULT_RESTART_PACING: RestartPacing = {
  firstDelayMs: 30_000,
  maxDelayMs: 10 * 60_000,
  resetMs: 30 * 60_000,
};

interface Restarts {
  count: number;
  last: number;
}

/**
 * The sweep's memory, plain data: which runs it handled, which restarts wait for their turn, and
 * how often each uid was restarted lately.
 */
export class EndedWorkflowSweep {
  /** The start of the window the next query covers. */
  private since: number;
  /** Workflow id and run id -> when it closed, for runs already handled (pruned once out of every window). */
  private readonly handled = new Map<string, number>();
  /** uid -> the newest ended run waiting for its restart to be due. */
  private readonly deferred = new Map<string, EndedRun>();
  private readonly restarts = new Map<string, Restarts>();

  constructor(
    startedAt: number,
    private readonly pacing: RestartPacing = DEFAULT_RESTART_PACING,
  ) {
    this.since = startedAt - VISIBILITY_OVERLAP_MS;
  }

  /** Where the next query starts: asked at `now`, with the previous window's overlap. */
  windowStart(): number {
    return this.since;
  }

  /**
   * The runs a query begun at `queriedAt` returned: moves the window on, and returns the runs
   * whose object should be started again now (at most one per uid, newest first wins), deferred
   * ones that came due included. `isLive(uid)` says whether the watcher still has the object.
   */
  take(runs: readonly EndedRun[], queriedAt: number, isLive: (uid: string) => boolean): EndedRun[] {
    this.since = queriedAt - VISIBILITY_OVERLAP_MS;
    for (const [key, closedAt] of this.handled) if (closedAt < this.since) this.handled.delete(key);
    for (const run of runs) {
      const key = `${run.workflowId}/${run.runId}`;
      if (this.handled.has(key)) continue;
      this.handled.set(key, run.closedAt);
      this.retry(run);
    }
    const due: EndedRun[] = [];
    for (const [uid, run] of this.deferred) {
      if (!isLive(uid)) {
        this.deferred.delete(uid);
        continue;
      }
      if (queriedAt < this.dueAt(uid)) continue;
      this.deferred.delete(uid);
      due.push(run);
    }
    return due;
  }

  /** Keeps the run (the newest of its uid) until it is due; after a failed handling, due again at the next query. */
  retry(run: EndedRun): void {
    const waiting = this.deferred.get(run.uid);
    if (!waiting || waiting.closedAt <= run.closedAt) this.deferred.set(run.uid, run);
  }

  /** Records that the uid's workflow was started again at `now`. */
  restarted(uid: string, now: number): void {
    const before = this.restarts.get(uid);
    const count = before && now - before.last < this.pacing.resetMs ? before.count + 1 : 1;
    this.restarts.set(uid, { count, last: now });
    for (const [other, r] of this.restarts) if (now - r.last >= this.pacing.resetMs) this.restarts.delete(other);
  }

  /** Ended runs seen but not yet restarted, because their uid was restarted lately. */
  waitingCount(): number {
    return this.deferred.size;
  }

  private dueAt(uid: string): number {
    const r = this.restarts.get(uid);
    if (!r) return Number.NEGATIVE_INFINITY;
    const delay = Math.min(this.pacing.maxDelayMs, this.pacing.firstDelayMs * 2 ** (r.count - 1));
    return r.last + delay;
  }
}
