// How many integration test files run at a time, each on a control plane of its own. The suite
// waits far more than it computes (on two cores a single file leaves the CPU idle about 60 % of the
// time), so two files side by side take much less than twice as long as one.
// WEKA_TEST_CONTROL_PLANES=1 runs the files one after another on a single control plane.
export const DEFAULT_CONTROL_PLANES = 2;

export function integrationControlPlanes(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.WEKA_TEST_CONTROL_PLANES;
  if (raw === undefined || raw === '') return DEFAULT_CONTROL_PLANES;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 8)
    throw new Error(`WEKA_TEST_CONTROL_PLANES must be a whole number from 1 to 8, not ${JSON.stringify(raw)}`);
  return n;
}

/** What a test file needs to reach one control plane. */
export interface ProvidedControlPlane {
  kubeconfigPath: string;
  temporalAddress: string;
  temporalNamespace: string;
  temporalUiUrl: string;
  simulatorRoot: string;
  /** The control plane's log directory, where the tests' operator processes log too. */
  logDir: string;
  controlUrl: string;
}
