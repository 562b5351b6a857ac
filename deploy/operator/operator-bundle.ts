// How the operator is bundled into one file. The image's build bundles the compiled
// dist/deploy/operator/main.js (bundle-operator.ts); the sandbox and the tests bundle the TypeScript
// source the same way, since esbuild reads it directly, and run it under plain Node.js. Under tsx
// instead, every operator process transformed its modules at start, and tsx's loader, which the
// workflow threads inherit, turned on source maps: then Node looks for a map for each small function
// the Temporal SDK's promise hook compiles, and maps every stack trace it captures. That cost half the
// CPU of an operator process in the tests, and the image never pays it.
import { statSync } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { build } from 'esbuild';
import { operatorPackage, type OperatorPackage } from './package-json.js';

/** Packages bundled in: @kubernetes/client-node alone is thousands of modules to read at start. */
const INLINED = new Set(['@kubernetes/client-node']);

/** The checkout's package.json (its root, and the dependencies a bundle leaves outside). */
function checkoutPackage(): Required<Pick<OperatorPackage, 'root' | 'dependencies'>> {
  const pkg = operatorPackage();
  if (pkg?.dependencies === undefined)
    throw new Error('cannot find the weka-drives-operator package.json above the operator');
  return { root: pkg.root, dependencies: pkg.dependencies };
}

/** The checkout's root. */
export function repoRoot(): string {
  return checkoutPackage().root;
}

/**
 * Bundles `entry` (JavaScript or TypeScript) into `outfile`. Every dependency but the inlined ones
 * stays outside and is imported from node_modules: Temporal's worker starts threads and loads a
 * native module from its own files. `outfile` must therefore be inside the checkout.
 */
export async function bundleOperator(
  entry: string,
  outfile: string,
  o: { sourcemap: boolean },
): Promise<{ bytes: number; ms: number }> {
  const external = Object.keys(checkoutPackage().dependencies)
    .filter((d) => !INLINED.has(d))
    .flatMap((d) => [d, `${d}/*`]);
  const started = performance.now();
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external,
    sourcemap: o.sourcemap,
    logLevel: 'warning',
    // The CommonJS modules inlined with client-node call require() for Node's own modules.
    banner: {
      js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
    },
  });
  return { bytes: statSync(outfile).size, ms: Math.round(performance.now() - started) };
}

export interface SourceBundle {
  /** The bundle: run it with `node PATH`. */
  readonly path: string;
  readonly bytes: number;
  readonly ms: number;
  /** Deletes the bundle. */
  remove(): Promise<void>;
}

let made = 0;

/**
 * Bundles an operator entry point from source (deploy/operator/main.ts, or a test's variant) into
 * `.tmp/operator-bundles/` of the checkout, under a name no other process uses. That folder is two
 * levels below the root, as deploy/operator/ is, so what the operator finds relative to its own file
 * (the package.json it reports the version of; workflows/ when it bundles them itself) and the
 * packages it imports resolve as they do from source.
 */
export async function bundleOperatorSource(entry: string): Promise<SourceBundle> {
  const dir = join(repoRoot(), '.tmp', 'operator-bundles');
  await mkdir(dir, { recursive: true });
  await removeOrphans(dir);
  const path = join(dir, `${basename(entry).replace(/\.[cm]?[jt]s$/, '')}-${process.pid}-${++made}.js`);
  const { bytes, ms } = await bundleOperator(entry, path, { sourcemap: false });
  return { path, bytes, ms, remove: () => rm(path, { force: true }) };
}

/** Deletes the bundles of processes that are gone (killed before they could remove their own). */
async function removeOrphans(dir: string): Promise<void> {
  for (const name of await readdir(dir)) {
    const pid = Number(/-(\d+)-\d+\.js$/.exec(name)?.[1]);
    if (Number.isInteger(pid) && pid > 0 && !alive(pid)) await rm(join(dir, name), { force: true });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, as another user's process.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
