// The operator's package.json: next to src/ in a checkout, next to dist/ in the image. Looked up
// from this module's own place, two levels up as source (and from a bundle of the source in
// .tmp/operator-bundles/), three as dist/deploy/operator/.
import { existsSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface OperatorPackage {
  /** The folder that holds the package.json: the checkout's root, or the image's app folder. */
  readonly root: string;
  readonly version?: unknown;
  readonly dependencies?: Record<string, string>;
}

/** The weka-drives-operator package.json above this module, or undefined if there is none. */
export function operatorPackage(): OperatorPackage | undefined {
  for (const candidate of ['../../package.json', '../../../package.json']) {
    const path = fileURLToPath(new URL(candidate, import.meta.url));
    if (!existsSync(path)) continue;
    const pkg = JSON.parse(readFileSync(path, 'utf8')) as Omit<OperatorPackage, 'root'> & { name?: unknown };
    if (pkg.name === 'weka-drives-operator') return { ...pkg, root: dirname(path) };
  }
  return undefined;
}
