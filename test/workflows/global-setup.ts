// Boots the one Temporal server the workflow tests share: the dev server binary the tool builds
// make (build-tools.sh), started through @temporalio/testing's existing-path option; nothing is
// downloaded. No apiserver, no kwok, no simulator: each test file runs the workflows under test on
// a task queue of its own, with their activities stubbed (test/workflows/support/).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { TestProject } from 'vitest/node';
import { ensureTools } from '../../deploy/local/tools.js';
import { SEARCH_ATTRIBUTES } from '../../deploy/local/temporal.js';
import { writeWorkflowBundle } from '../../deploy/operator/workflow-bundle.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The shared Temporal server of the workflow tests. */
    workflowServer: { address: string; namespace: string };
    /** The workflow code, bundled from the sources under test. */
    workflowTestBundle: string;
  }
}

let env: TestWorkflowEnvironment | undefined;
let dir: string | undefined;

export async function setup(project: TestProject): Promise<void> {
  const { temporal } = await ensureTools(['temporal']);
  dir = await mkdtemp(join(tmpdir(), 'weka-workflow-tests-'));
  const bundle = join(dir, 'workflow-bundle.js');
  const [started] = await Promise.all([
    TestWorkflowEnvironment.createLocal({
      server: {
        executable: { type: 'existing-path', path: temporal },
        ip: '127.0.0.1',
        namespace: 'default',
        searchAttributes: SEARCH_ATTRIBUTES.map((name) => defineSearchAttributeKey(name, SearchAttributeType.KEYWORD)),
        extraArgs: ['--headless', '--log-level', 'warn'],
      },
    }),
    writeWorkflowBundle(bundle),
  ]);
  env = started;
  project.provide('workflowServer', { address: env.address, namespace: env.namespace ?? 'default' });
  project.provide('workflowTestBundle', bundle);
}

export async function teardown(): Promise<void> {
  await env?.teardown();
  if (dir) await rm(dir, { recursive: true, force: true });
}
