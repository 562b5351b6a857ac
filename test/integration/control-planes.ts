// How many integration test files run at a time, each on a control plane of its own. A file waits
// far more than it computes, so files side by side take much less than their sum. On two cores
// four at a time leave the CPU idle about 6 % of the suite's time, three at a time about 18 %
// (vitest 1,063 s against 1,241 s in fresh-clone runs; docs/performance.md, "The CI run").
// WEKA_TEST_CONTROL_PLANES=1 runs the files one after another on a single control plane.
export const DEFAULT_CONTROL_PLANES = 4;

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
