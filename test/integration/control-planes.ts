// How many integration test files run at a time, each on a control plane of its own. The suite
// waits far more than it computes (on two cores a single file leaves the CPU idle about 60 % of the
// time), so files side by side take much less than their sum. On two cores three at a time keep
// the CPU busy (89 % on average over the run): the suite took 975 s against 1,285 s two at a time,
// and four at a time gained only 5 % more while each file took a quarter longer (docs/performance.md, "The CI run").
// WEKA_TEST_CONTROL_PLANES=1 runs the files one after another on a single control plane.
export const DEFAULT_CONTROL_PLANES = 3;

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
