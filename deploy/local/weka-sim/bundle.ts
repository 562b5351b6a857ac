// The simulator as the local control plane runs it: main.ts and everything it imports bundled into
// one CommonJS file, so a simulated command starts by compiling one small file instead of resolving
// and compiling a tree of ES modules on every call (docs/weka-simulator.md has the figures).
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/** The repository root, from this file under deploy/local/weka-sim or its compiled copy under dist/. */
function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('weka-sim bundle: no package.json above this file');
    dir = parent;
  }
  return dir;
}

export interface SimulatorBuild {
  /** The single-file bundle: `node BUNDLE ARGS...` runs the simulator. */
  bundle: string;
}

/** Where buildSimulator puts the bundle in `dir`. */
export function simulatorFiles(dir: string): SimulatorBuild {
  return { bundle: join(dir, 'weka-sim.cjs') };
}

/** Bundles the simulator into `dir`. */
export async function buildSimulator(dir: string): Promise<SimulatorBuild> {
  const { bundle } = simulatorFiles(dir);
  await mkdir(dir, { recursive: true });
  await build({
    entryPoints: [resolve(repoRoot(), 'deploy', 'local', 'weka-sim', 'main.ts')],
    outfile: bundle,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'error',
  });
  return { bundle };
}

/** The argv (after the node binary) that runs the simulator. */
export function simulatorArgs(build: SimulatorBuild): string[] {
  return [build.bundle];
}
