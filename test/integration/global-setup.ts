// Boots the local control planes of the integration suite, one per test file that may run at a
// time (test/integration/control-planes.ts), and hands their addresses to the test files through
// vitest's provide/inject (read through test/support/harness.ts, which picks the worker's own).
// It also bundles the workflow code once, beside the boots: every operator the tests start (in
// process or as a process) loads that bundle instead of bundling again, seconds of CPU each. And it
// bundles the operator's source, which every operator process a test starts runs under plain
// Node.js, as the image runs its build (deploy/operator/operator-bundle.ts says why not tsx).
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { writeWorkflowBundle } from '../../deploy/operator/workflow-bundle.js';
import { bundleOperatorSource, type SourceBundle } from '../../deploy/operator/operator-bundle.js';
import { OPERATOR_SOURCE } from '../support/operator-process.js';
import { serveControlApi, type ControlApi } from '../../deploy/local/control-api.js';
import { ControlPlane } from '../../deploy/local/control-plane.js';
import { integrationControlPlanes, type ProvidedControlPlane } from './control-planes.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Index i serves the worker whose VITEST_POOL_ID is i + 1. */
    controlPlanes: ProvidedControlPlane[];
    /** The workflow code, bundled from the sources under test (WEKA_WORKFLOW_BUNDLE). */
    workflowBundlePath: string;
    /** deploy/operator/main.ts, bundled from the sources under test (the script of operator processes). */
    operatorBundlePath: string;
    /** Where the heavy files take their slots (test/support/heavy-files.ts). */
    heavySlotsDir: string;
  }
}

const started: { plane: ControlPlane; api?: ControlApi }[] = [];
let bundleDir: string | undefined;
let operatorBundle: SourceBundle | undefined;

export async function setup(project: TestProject): Promise<void> {
  const count = integrationControlPlanes();
  bundleDir = await mkdtemp(join(tmpdir(), 'weka-workflows-'));
  const bundlePath = join(bundleDir, 'workflow-bundle.js');
  const heavySlotsDir = join(bundleDir, 'heavy-slots');
  await mkdir(heavySlotsDir);
  const bundled = writeWorkflowBundle(bundlePath);
  const operatorBundled = bundleOperatorSource(OPERATOR_SOURCE).then((b) => (operatorBundle = b));
  const booted = await Promise.allSettled(
    Array.from({ length: count }, async (_, i): Promise<ProvidedControlPlane> => {
      const plane = await ControlPlane.start({ log: (m) => console.log(`[control plane ${i + 1}] ${m}`) });
      const entry: { plane: ControlPlane; api?: ControlApi } = { plane };
      started.push(entry);
      entry.api = await serveControlApi(plane);
      console.log(
        `integration setup: control plane ${i + 1} of ${count} in ${plane.dataDir}, start-up times (ms): ${Object.entries(
          plane.timings,
        )
          .map(([k, v]) => `${k}=${v}`)
          .join(', ')}`,
      );
      return {
        kubeconfigPath: plane.kubeconfigPath,
        temporalAddress: plane.temporalAddress,
        temporalNamespace: plane.temporalNamespace,
        temporalUiUrl: plane.temporalUiUrl,
        simulatorRoot: plane.simulatorRoot,
        logDir: plane.logDir,
        controlUrl: entry.api.url,
      };
    }),
  );
  const [bundle, operator] = await Promise.allSettled([bundled, operatorBundled]);
  const failed = [...booted, bundle, operator].find((b) => b.status === 'rejected');
  if (failed) {
    await teardown();
    throw failed.reason;
  }
  const { bytes, ms } = (bundle as PromiseFulfilledResult<{ bytes: number; ms: number }>).value;
  console.log(`integration setup: workflows bundled in ${ms} ms (${(bytes / 1e6).toFixed(1)} MB) into ${bundlePath}`);
  project.provide('workflowBundlePath', bundlePath);
  project.provide('heavySlotsDir', heavySlotsDir);
  const o = (operator as PromiseFulfilledResult<SourceBundle>).value;
  console.log(`integration setup: operator bundled in ${o.ms} ms (${(o.bytes / 1e6).toFixed(1)} MB) into ${o.path}`);
  project.provide('operatorBundlePath', o.path);
  project.provide(
    'controlPlanes',
    booted.map((b) => (b as PromiseFulfilledResult<ProvidedControlPlane>).value),
  );
}

export async function teardown(): Promise<void> {
  if (bundleDir !== undefined) await rm(bundleDir, { recursive: true, force: true });
  await operatorBundle?.remove();
  await Promise.all(
    started.map(async ({ plane, api }) => {
      await api?.close();
      await plane.stop();
    }),
  );
}
