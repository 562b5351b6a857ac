// The operator's Temporal workers: every workflow in workflows/ and every activity of
// createActivities(deps), polled on two task queues by two workers in one process. The main queue
// carries the lifecycles (drive containers, clusters, operations); the mutex queue carries the
// mutex workflows and their decisions, so a node's hand-over from one allocation to the next has
// its own pollers, slots and workflow thread instead of queueing behind a rollout's Weka calls.
// Both workers register everything: a mutex started on the main queue before the split keeps
// running there.
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import {
  bundleWorkflowCode,
  NativeConnection,
  Worker,
  type ActivityInterceptorsFactory,
  type State,
  type WorkerOptions,
} from '@temporalio/worker';
import { createActivities, type Activities, type ActivityDeps } from '../../activities/index.js';
import { prebuiltBundlePath, quietBundlerLogger, workflowsPath } from './workflow-bundle.js';
import { workerIdentity } from '../../src/operator/orphaned-activities.js';
import { mutexTaskQueue } from '../../src/protocol.js';

/**
 * The workflow code the workers run: the bundle at `given` (WEKA_WORKFLOW_BUNDLE: one the sandbox
 * or the test harness made from these same sources, once for many operator starts), else the one
 * made at build time when the operator runs compiled, else one made now.
 */
async function workflowBundle(given?: string): Promise<{
  bundle: NonNullable<WorkerOptions['workflowBundle']>;
  source: BundleSource;
}> {
  // run-operator.ts has checked that the file is there, before connecting.
  if (given !== undefined) return { bundle: { codePath: given }, source: 'prebuilt' };
  const codePath = prebuiltBundlePath();
  const workflows = workflowsPath();
  if (workflows.endsWith('.js') && existsSync(codePath)) return { bundle: { codePath }, source: 'prebuilt' };
  const bundle = await bundleWorkflowCode({ workflowsPath: workflows, logger: quietBundlerLogger });
  return { bundle, source: 'bundled at start' };
}

/** Where the workers' workflow code came from, for the start-up log line. */
export type BundleSource = 'prebuilt' | 'bundled at start';

export interface OperatorWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  deps: ActivityDeps;
  /** A bundle of the workflow code made beforehand (WEKA_WORKFLOW_BUNDLE); see workflowBundle. */
  workflowBundlePath?: string;
  /** Overrides for tuning and tests (concurrency, shutdown grace); applied to both workers. */
  tuning?: Partial<
    Pick<
      WorkerOptions,
      | 'maxConcurrentActivityTaskExecutions'
      | 'maxConcurrentWorkflowTaskExecutions'
      | 'shutdownGraceTime'
      | 'maxCachedWorkflows'
    >
  >;
  /** Tests only: the activities as the workers get them, from those createActivities made. */
  withActivities?: (activities: Activities) => Activities;
}

/** The two workers as one: run, shut down and report state together. */
export interface OperatorWorker {
  run(): Promise<void>;
  shutdown(): void;
  /** The main worker's state; the mutex worker follows it. */
  getState(): State;
  /** What each worker still has in flight: said while a shutdown waits for them to drain. */
  drainStatus(): Record<'main' | 'mutex', DrainStatus> & { running: (RunningActivity & { forMs: number })[] };
  bundleSource: BundleSource;
}

export async function createOperatorWorker(o: OperatorWorkerOptions): Promise<OperatorWorker> {
  // One bundle for both workers: bundling is seconds of CPU and tens of MB.
  const { bundle, source } = await workflowBundle(o.workflowBundlePath);
  const made = createActivities(o.deps);
  const activities = o.withActivities ? o.withActivities(made) : made;
  const running = new Set<RunningActivity>();
  const common = {
    connection: o.connection,
    namespace: o.namespace,
    workflowBundle: bundle,
    activities,
    interceptors: { activity: [trackIn(running)] },
    // Said explicitly: a restart on this host finds what a dead process left running by it.
    identity: workerIdentity(process.pid, hostname()),
    // In-flight activities get this long to finish on SIGTERM before they are cancelled.
    shutdownGraceTime: '20 seconds',
  };
  const main = await Worker.create({
    ...common,
    taskQueue: o.deps.taskQueue,
    maxConcurrentActivityTaskExecutions: 100,
    ...o.tuning,
  });
  // One decision at a time per mutex: a few slots serve every node's mutex. A rollout wakes every
  // node's mutex at once, and each one's first workflow task comes through the normal (non-sticky)
  // queue: half of the pollers wait there instead of the default fifth (2 of 10), so ten mutexes
  // starting together are not handed out two at a time.
  const mutex = await Worker.create({
    ...common,
    taskQueue: mutexTaskQueue(o.deps.taskQueue),
    maxConcurrentActivityTaskExecutions: 50,
    nonStickyToStickyPollRatio: 0.5,
    ...o.tuning,
  });
  return {
    async run() {
      const runs = [main.run(), mutex.run()];
      try {
        await Promise.all(runs);
      } catch (err) {
        // One failed: stop the other too, so the process never runs half a worker.
        for (const w of [main, mutex]) if (w.getState() === 'RUNNING') w.shutdown();
        await Promise.allSettled(runs);
        throw err;
      }
    },
    shutdown() {
      for (const w of [main, mutex]) if (w.getState() === 'RUNNING') w.shutdown();
    },
    getState: () => main.getState(),
    drainStatus: () => ({
      main: drainStatusOf(main),
      mutex: drainStatusOf(mutex),
      running: [...running].slice(0, 10).map((a) => ({ ...a, forMs: Date.now() - a.since })),
    }),
    bundleSource: source,
  };
}

interface RunningActivity {
  activity: string;
  workflowId: string;
  since: number;
}

/** Keeps the activities running in this process in `running`, for a drain to say what it waits for. */
function trackIn(running: Set<RunningActivity>): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      async execute(input, next) {
        const entry = {
          activity: ctx.info.activityType,
          workflowId: ctx.info.workflowExecution?.workflowId ?? '',
          since: Date.now(),
        };
        running.add(entry);
        try {
          return await next(input);
        } finally {
          running.delete(entry);
        }
      },
    },
  });
}

export interface DrainStatus {
  state: State;
  workflowPoller: string;
  activityPoller: string;
  workflowActivations: number;
  activities: number;
  cachedWorkflows: number;
}

function drainStatusOf(w: Worker): DrainStatus {
  const s = w.getStatus();
  return {
    state: s.runState,
    workflowPoller: s.workflowPollerState,
    activityPoller: s.activityPollerState,
    workflowActivations: s.numInFlightWorkflowActivations,
    activities: s.numInFlightActivities,
    cachedWorkflows: s.numCachedWorkflows,
  };
}
