// How kstatus (sigs.k8s.io/cli-utils, what Flux, Argo CD, kpt and `kubectl apply --wait` judge
// health with) reads objects: the real library, through the small command build-tools.sh builds.
import { execFile } from 'node:child_process';
import { testToolBinary } from './tool-binary.js';

/** Long enough for a cold build of the command on two cores (31 s measured). */
export const KSTATUS_BUILD_TIMEOUT_MS = 5 * 60_000;

export interface KstatusResult {
  status: 'InProgress' | 'Failed' | 'Current' | 'Terminating' | 'NotFound' | 'Unknown';
  message: string;
}

/** kstatus's verdict on each object, as read from the apiserver. */
export async function kstatusOf(objects: readonly object[]): Promise<KstatusResult[]> {
  const binary = await testToolBinary('kstatus', KSTATUS_BUILD_TIMEOUT_MS);
  const stdout = await new Promise<string>((resolve, reject) => {
    const child = execFile(binary, [], { maxBuffer: 64 << 20 }, (err, out, stderr) =>
      err ? reject(new Error(`kstatus failed: ${stderr || err.message}`)) : resolve(out),
    );
    child.stdin!.end(objects.map((o) => JSON.stringify(o)).join('\n') + '\n');
  });
  return stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as KstatusResult);
}

export async function kstatusOfOne(object: object): Promise<KstatusResult> {
  return (await kstatusOf([object]))[0]!;
}
