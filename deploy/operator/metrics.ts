// The operator's Prometheus metrics: one registry per process, served on /metrics (see
// docs/observability.md). Workflows cannot touch prom-client (they are replayed in a sandbox), so
// everything is measured where it runs: activities through ActivityDeps.instrument, Weka CLI calls
// through a counting ExecTransport, the watcher's actions in the watcher, the nodes' books from the
// node watch, and mutex queues by querying the mutex workflows (mutex-depth.ts).
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ActivityDeps } from '../../activities/deps.js';
import { EXEC_TRANSPORT_ERROR, type ExecTransport } from '../../activities/exec/transport.js';
import type { BooksDriveType, NodeBooksResult } from '../../src/node/ledger-books.js';
import { queuedFor } from '../../src/node/mutex-queue.js';
import { classifyExit } from '../../src/weka/call.js';
import type { WorkQueueObserver } from './watcher/work-queue.js';
import { ALLOCATION_ACTIVITIES, BATCH_ACTIVITY, MUTEX_REQUEST_ACTIVITIES } from '../../src/protocol.js';

const SECONDS_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

export class OperatorMetrics {
  readonly registry = new Registry();
  readonly allocationDuration = new Histogram({
    name: 'weka_drives_allocation_duration_seconds',
    help: "Time to decide a container's allocation inside its node mutex, by result: allocated, refused, error. Allocations queued together are decided in one allocateForContainers activity; each container is observed with that activity's time.",
    labelNames: ['result'] as const,
    buckets: SECONDS_BUCKETS,
    registers: [this.registry],
  });
  readonly stepDuration = new Histogram({
    name: 'weka_drives_workflow_step_duration_seconds',
    help: 'Time of each workflow step, that is each activity attempt, by activity and result: ok, refused (a mutex decision said no), error.',
    labelNames: ['activity', 'result'] as const,
    buckets: SECONDS_BUCKETS,
    registers: [this.registry],
  });
  readonly cliCalls = new Counter({
    name: 'weka_drives_cli_calls_total',
    help: 'Weka CLI calls (weka, weka-sign-drive) run in pods, by command and result: success, refused, transient (non-zero exit), transport-error (no exit code came back).',
    labelNames: ['command', 'result'] as const,
    registers: [this.registry],
  });
  readonly mutexQueueDepth = new Gauge({
    name: 'weka_drives_node_mutex_queue_depth',
    help: 'Requests waiting in a node mutex (not counting the one running), sampled by querying the running mutex workflows.',
    labelNames: ['node'] as const,
    registers: [this.registry],
  });
  readonly mutexBusy = new Gauge({
    name: 'weka_drives_node_mutex_busy',
    help: '1 while a node mutex is running a request, sampled with weka_drives_node_mutex_queue_depth.',
    labelNames: ['node'] as const,
    registers: [this.registry],
  });
  readonly mutexWait = new Histogram({
    name: 'weka_drives_node_mutex_wait_seconds',
    help: 'Time a request waited in its mutex, from being sent to the start of the activity that executes it, by activity (allocateForContainers, releaseAllocation, ensureProxy, ...).',
    labelNames: ['activity'] as const,
    buckets: SECONDS_BUCKETS,
    registers: [this.registry],
  });
  readonly watcherActions = new Counter({
    name: 'weka_drives_watcher_actions_total',
    help: 'Actions the CR watcher took, by kind, action (addFinalizer, startWorkflow, signalSpecChanged, signalDelete, writeWorkflowId) and result: ok, error.',
    labelNames: ['kind', 'action', 'result'] as const,
    registers: [this.registry],
  });
  readonly workflowsRestarted = new Counter({
    name: 'weka_drives_workflows_restarted_total',
    help: 'Lifecycle workflows the CR watcher started again because they ended (terminated, failed, timed out, completed) while their object still existed, by kind and how the run ended.',
    labelNames: ['kind', 'status'] as const,
    registers: [this.registry],
  });
  readonly nodeWarnings = new Counter({
    name: 'weka_drives_node_warnings_total',
    help: 'Warning Events the operator recorded on Nodes, by reason (WekaContainerLeftBehind: a drive container torn down without its pod may remain in its Weka cluster). The Events expire; alert on an increase of this.',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  /** ActivityDeps.onNodeWarning. */
  readonly nodeWarningRecorded = (reason: string): void => {
    this.nodeWarnings.inc({ reason });
  };
  /** What the watcher's bring-up admission holds, read at every scrape (unset: no watcher here). */
  private bringUps: (() => { inFlight: number; waiting: number }) | undefined;
  readonly bringUpsInFlight = new Gauge({
    name: 'weka_drives_bringups_in_flight',
    help: 'Drive containers this watcher counts as being brought up (WEKA_MAX_CONCURRENT_BRINGUPS bounds them).',
    registers: [this.registry],
    collect: () => {
      if (this.bringUps) this.bringUpsInFlight.set(this.bringUps().inFlight);
    },
  });
  readonly bringUpsWaiting = new Gauge({
    name: 'weka_drives_bringups_waiting',
    help: 'New drive containers waiting for their turn to start (condition Queued).',
    registers: [this.registry],
    collect: () => {
      if (this.bringUps) this.bringUpsWaiting.set(this.bringUps().waiting);
    },
  });

  /** The watcher's bring-up admission, for the two gauges above. */
  readBringUpsFrom(source: () => { inFlight: number; waiting: number }): void {
    this.bringUps = source;
  }

  readonly nodeCapacity = new Gauge({
    name: 'weka_drives_node_capacity_bytes',
    help: "A node's shared drives per drive type, by state: signed for sharing, allocated by the node's ledger to drive containers, found on the devices with no container (stale virtual drives), and free. allocated + found + free = signed unless a GiB is lost or booked twice (drive_type unknown: drives listed without a type, or claims on drives the node no longer lists).",
    labelNames: ['node', 'drive_type', 'state'] as const,
    registers: [this.registry],
  });
  readonly nodeBooksReadable = new Gauge({
    name: 'weka_drives_node_books_readable',
    help: "1 when the node's shared-drives and allocation-ledger annotations can be read, 0 when one is malformed (nothing is allocated on the node then).",
    labelNames: ['node'] as const,
    registers: [this.registry],
  });
  /** The drive types each node's capacity series were last set for. */
  private readonly booksTypes = new Map<string, string[]>();

  /** NodeWatchOptions.onBooks: a node's books as read from it, or undefined once it is gone. */
  readonly nodeBooksRead = (node: string, books: NodeBooksResult | undefined): void => {
    for (const type of this.booksTypes.get(node) ?? [])
      for (const state of BOOK_STATES) this.nodeCapacity.remove({ node, drive_type: type, state });
    this.booksTypes.delete(node);
    if (books === undefined) {
      this.nodeBooksReadable.remove({ node });
      return;
    }
    this.nodeBooksReadable.set({ node }, books.ok ? 1 : 0);
    if (!books.ok) return;
    const types = Object.keys(books.books) as BooksDriveType[];
    this.booksTypes.set(node, types);
    for (const type of types) {
      const { signedGiB, allocatedGiB, foundGiB, freeGiB } = books.books[type]!;
      const gib = { signed: signedGiB, allocated: allocatedGiB, found: foundGiB, free: freeGiB };
      for (const state of BOOK_STATES) this.nodeCapacity.set({ node, drive_type: type, state }, gib[state] * GIB);
    }
  };

  readonly buildInfo = new Gauge({
    name: 'weka_drives_build_info',
    help: "Always 1; the operator's version and the Node.js version it runs on, as labels.",
    labelNames: ['version', 'node_version'] as const,
    registers: [this.registry],
  });
  readonly workQueueDepth = new Gauge({
    name: 'weka_drives_workqueue_depth',
    help: "Objects waiting in the CR watcher's work queue to be handled (not counting those being handled or waiting out a retry back-off).",
    registers: [this.registry],
  });
  readonly workQueueWait = new Histogram({
    name: 'weka_drives_workqueue_queue_duration_seconds',
    help: "Time an object waited in the CR watcher's work queue, from being queued (a new event, or the end of its retry back-off) to the start of its handling.",
    buckets: SECONDS_BUCKETS,
    registers: [this.registry],
  });
  readonly workQueueWork = new Histogram({
    name: 'weka_drives_workqueue_work_duration_seconds',
    help: 'Time the CR watcher took to handle one object (its actions: finalizer, workflow start or signal, status write).',
    buckets: SECONDS_BUCKETS,
    registers: [this.registry],
  });
  readonly workQueueRetries = new Counter({
    name: 'weka_drives_workqueue_retries_total',
    help: "Objects the CR watcher's work queue put back after a failed handling, to be retried after a back-off.",
    registers: [this.registry],
  });

  readonly sdkMetricsLost = new Gauge({
    name: 'weka_drives_sdk_metrics_lost',
    help: "1 once the Temporal SDK's metric buffer overflowed: its temporal_* metrics are gone until the operator restarts (raise WEKA_SDK_METRICS_BUFFER_SIZE); 0 otherwise.",
    registers: [this.registry],
  });

  constructor(options: { processMetrics?: boolean; version?: string } = {}) {
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry });
    this.buildInfo.set({ version: options.version ?? 'unknown', node_version: process.version }, 1);
  }

  /** What the watcher's work queue reports (WorkQueueObserver). */
  readonly workQueueObserver: WorkQueueObserver = {
    depth: (n) => this.workQueueDepth.set(n),
    waited: (seconds) => this.workQueueWait.observe(seconds),
    worked: (seconds) => this.workQueueWork.observe(seconds),
    retried: () => this.workQueueRetries.inc(),
  };

  /** ActivityDeps.instrument: times every activity; the allocation activities also per container allocated. */
  readonly instrument: NonNullable<ActivityDeps['instrument']> = (name, fn) => {
    return async (...args) => {
      const now = Date.now();
      for (const request of MUTEX_EXECUTED.has(name) ? requestsOf(name, args[0]) : []) {
        const waited = queuedFor(request, now);
        if (waited !== undefined) this.mutexWait.observe({ activity: name }, waited / 1000);
      }
      const end = this.stepDuration.startTimer({ activity: name });
      const started = performance.now();
      const allocations = (results: readonly string[]) => {
        // The allocating activities' time is also observed per container (weka_drives_allocation_duration_seconds).
        if (!ALLOCATION_ACTIVITIES.has(name)) return;
        for (const result of results) this.allocationDuration.observe({ result }, (performance.now() - started) / 1000);
      };
      try {
        const value = await fn(...args);
        // A batch answers one outcome per container; it is "refused" only when every one was.
        const outcomes = Array.isArray(value) ? value : [value];
        end({ result: outcomes.length > 0 && outcomes.every(isRefusal) ? 'refused' : 'ok' });
        allocations(outcomes.map((o) => (isRefusal(o) ? 'refused' : 'allocated')));
        return value;
      } catch (err) {
        end({ result: 'error' });
        allocations(requestsOf(name, args[0]).map(() => 'error'));
        throw err;
      }
    };
  };

  /** Counts every command the transport runs, by command and result. */
  countingExec(inner: ExecTransport): ExecTransport {
    return {
      run: async (target, argv, opts) => {
        const command = cliCommandLabel(argv);
        try {
          const result = await inner.run(target, argv, opts);
          this.cliCalls.inc({ command, result: classifyExit(result.exitCode) });
          return result;
        } catch (err) {
          this.cliCalls.inc({
            command,
            result: (err as Error | null)?.name === EXEC_TRANSPORT_ERROR ? 'transport-error' : 'error',
          });
          throw err;
        }
      },
    };
  }
}

/**
 * The activities a mutex runs for its queued requests. A retried attempt is observed again, with
 * the wait up to that attempt (what the requester experienced).
 */
const MUTEX_EXECUTED: ReadonlySet<string> = new Set([...Object.values(MUTEX_REQUEST_ACTIVITIES), BATCH_ACTIVITY]);

/** The requests (payloads) an activity executes: the batch's containers, or its one input. */
function requestsOf(name: string, input: unknown): unknown[] {
  if (name !== BATCH_ACTIVITY) return [input];
  const containers = (input as { containers?: unknown } | null)?.containers;
  return Array.isArray(containers) ? containers : [];
}

/** A mutex-executed activity answers a refusal as data ({ ok: false }), not as an exception. */
function isRefusal(value: unknown): boolean {
  return typeof value === 'object' && value !== null && (value as { ok?: unknown }).ok === false;
}

const BOOK_STATES = ['signed', 'allocated', 'found', 'free'] as const;
const GIB = 1024 ** 3;

const VERBS = new Set(['add', 'remove', 'list', 'show', 'create', 'delete', 'sign', 'join', 'status', 'update']);

/**
 * The command without its arguments, as a label of bounded cardinality: the tool and its
 * sub-commands up to the verb, e.g. "weka cluster drive add", "weka-sign-drive virtual add".
 */
export function cliCommandLabel(argv: readonly string[]): string {
  const words: string[] = [];
  for (const word of argv) {
    if (!/^[a-z][a-z-]*$/.test(word) || words.length === 4) break;
    words.push(word);
    if (words.length > 1 && VERBS.has(word)) break;
  }
  return words.length > 0 ? words.join(' ') : 'unknown';
}
