// The operator's Temporal worker: every workflow in workflows/ and every activity of
// createActivities(deps), on one task queue.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '../../activities/index.js';

/** workflows/index as source (tsx, tests) or compiled (the image). */
export function workflowsPath(): string {
  for (const candidate of ['../../workflows/index.ts', '../../workflows/index.js']) {
    const path = fileURLToPath(new URL(candidate, import.meta.url));
    if (existsSync(path)) return path;
  }
  throw new Error('cannot find workflows/index.ts or workflows/index.js next to the operator');
}

export interface OperatorWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  deps: ActivityDeps;
  /** Overrides for tuning and tests (concurrency, shutdown grace). */
  tuning?: Partial<Pick<WorkerOptions, 'maxConcurrentActivityTaskExecutions' | 'maxConcurrentWorkflowTaskExecutions' | 'shutdownGraceTime' | 'maxCachedWorkflows'>>;
}

export async function createOperatorWorker(o: OperatorWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: o.connection,
    namespace: o.namespace,
    taskQueue: o.deps.taskQueue,
    workflowsPath: workflowsPath(),
    activities: createActivities(o.deps),
    // In-flight activities get this long to finish on SIGTERM before they are cancelled.
    shutdownGraceTime: '20 seconds',
    maxConcurrentActivityTaskExecutions: 100,
    ...o.tuning,
  });
}
