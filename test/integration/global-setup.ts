// Boots one local control plane for the whole integration suite and hands its addresses to the
// test files through vitest's provide/inject (read through test/support/harness.ts).
import type { TestProject } from 'vitest/node';
import { serveControlApi, type ControlApi } from '../../deploy/local/control-api.js';
import { ControlPlane } from '../../deploy/local/control-plane.js';

declare module 'vitest' {
  export interface ProvidedContext {
    kubeconfigPath: string;
    temporalAddress: string;
    temporalNamespace: string;
    temporalUiUrl: string;
    simulatorRoot: string;
    /** The control plane's log directory, where the tests' operator processes log too. */
    logDir: string;
    controlUrl: string;
  }
}

let controlPlane: ControlPlane | undefined;
let controlApi: ControlApi | undefined;

export async function setup(project: TestProject): Promise<void> {
  controlPlane = await ControlPlane.start({ log: (m) => console.log(m) });
  controlApi = await serveControlApi(controlPlane);
  console.log(
    `integration setup: start-up times (ms): ${Object.entries(controlPlane.timings)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')}`,
  );
  project.provide('kubeconfigPath', controlPlane.kubeconfigPath);
  project.provide('temporalAddress', controlPlane.temporalAddress);
  project.provide('temporalNamespace', controlPlane.temporalNamespace);
  project.provide('temporalUiUrl', controlPlane.temporalUiUrl);
  project.provide('simulatorRoot', controlPlane.simulatorRoot);
  project.provide('logDir', controlPlane.logDir);
  project.provide('controlUrl', controlApi.url);
}

export async function teardown(): Promise<void> {
  await controlApi?.close();
  await controlPlane?.stop();
}
