// One test file's view of the shared Temporal server (test/workflows/global-setup.ts): a client,
// and workers that run the operator's workflows with the activities a test gives them, each on a
// task queue of its own.
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { inject } from 'vitest';

let env: Promise<TestWorkflowEnvironment> | undefined;

function environment(): Promise<TestWorkflowEnvironment> {
  if (!env) {
    // The worker says only what went wrong (a workflow task that failed, an activity not stubbed).
    Runtime.install({
      logger: new DefaultLogger('WARN'),
      telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' }, forward: {} } },
      shutdownSignals: [],
    });
    const { address, namespace } = inject('workflowServer');
    env = TestWorkflowEnvironment.createFromExistingServer({ address, namespace });
  }
  return env;
}

export async function workflowClient(): Promise<Client> {
  return (await environment()).client;
}

/** Runs `test` while a worker serves the workflows with `activities` on a fresh task queue. */
export async function withWorker<T>(activities: object, test: (taskQueue: string) => Promise<T>): Promise<T> {
  const e = await environment();
  const taskQueue = `workflow-test-${randomUUID()}`;
  const worker = await Worker.create({
    connection: e.nativeConnection,
    namespace: e.namespace ?? 'default',
    taskQueue,
    workflowBundle: { codePath: inject('workflowTestBundle') },
    activities,
  });
  return worker.runUntil(test(taskQueue));
}

export async function closeEnvironment(): Promise<void> {
  if (env) await (await env).teardown();
  env = undefined;
}
