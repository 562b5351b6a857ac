// kubectl, as a person or a pipeline runs it against the test's control plane (built from the
// same Kubernetes version as the apiserver by build-tools.sh).
import { execFile } from 'node:child_process';
import { operatorControlPlane } from './harness.js';
import { testToolBinary } from './tool-binary.js';

/** Long enough for a cold build on two cores beside a test run. */
export const KUBECTL_BUILD_TIMEOUT_MS = 15 * 60_000;

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs kubectl with `args` on the test's control plane (or the one `kubeconfig` names); a non-zero
 * exit is a result, not an error.
 */
export async function kubectl(args: readonly string[], kubeconfig?: string): Promise<KubectlResult> {
  const binary = await testToolBinary('kubectl', KUBECTL_BUILD_TIMEOUT_MS);
  kubeconfig ??= operatorControlPlane().kubeconfigPath;
  return new Promise((resolve) => {
    execFile(binary, ['--kubeconfig', kubeconfig, ...args], { maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}
