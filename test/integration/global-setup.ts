// Boots the local control planes of the integration suite, one per test file that may run at a
// time (test/integration/control-planes.ts), and hands their addresses to the test files through
// vitest's provide/inject (read through test/support/harness.ts, which picks the worker's own).
import type { TestProject } from 'vitest/node';
import { serveControlApi, type ControlApi } from '../../deploy/local/control-api.js';
import { ControlPlane } from '../../deploy/local/control-plane.js';
import { integrationControlPlanes, type ProvidedControlPlane } from './control-planes.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Index i serves the worker whose VITEST_POOL_ID is i + 1. */
    controlPlanes: ProvidedControlPlane[];
  }
}

const started: { plane: ControlPlane; api?: ControlApi }[] = [];

export async function setup(project: TestProject): Promise<void> {
  const count = integrationControlPlanes();
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
  const failed = booted.find((b) => b.status === 'rejected');
  if (failed) {
    await teardown();
    throw failed.reason;
  }
  project.provide(
    'controlPlanes',
    booted.map((b) => (b as PromiseFulfilledResult<ProvidedControlPlane>).value),
  );
}

export async function teardown(): Promise<void> {
  await Promise.all(
    started.map(async ({ plane, api }) => {
      await api?.close();
      await plane.stop();
    }),
  );
}
