// The simulator as the local control plane runs it: main.ts and everything it imports bundled into
// one CommonJS file, and a V8 startup snapshot built from that file by the Node.js that runs the
// shims. A simulated command then starts with its modules already loaded and compiled instead of
// resolving and compiling a tree of ES modules on every call (docs/weka-simulator.md has the
// figures). The snapshot is tied to the Node.js binary that built it, so it is built per control
// plane, next to the shims, in well under a second.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';

const run = promisify(execFile);

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
  /** Its startup snapshot: `node --snapshot-blob BLOB -- ARGS...` runs the simulator. */
  snapshot: string;
}

/** Where buildSimulator puts the bundle and the snapshot in `dir`. */
export function simulatorFiles(dir: string): SimulatorBuild {
  return { bundle: join(dir, 'weka-sim.cjs'), snapshot: join(dir, 'weka-sim.blob') };
}

/** Bundles the simulator into `dir` and builds its snapshot there. */
export async function buildSimulator(dir: string, nodePath = process.execPath): Promise<SimulatorBuild> {
  const { bundle, snapshot } = simulatorFiles(dir);
  await build({
    entryPoints: [resolve(repoRoot(), 'deploy', 'local', 'weka-sim', 'main.ts')],
    outfile: bundle,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'error',
  });
  await mkdir(dir, { recursive: true });
  await run(nodePath, ['--snapshot-blob', snapshot, '--build-snapshot', bundle]);
  return { bundle, snapshot };
}

/** The argv (after the node binary) that runs the simulator from its snapshot. */
export function snapshotArgs(build: SimulatorBuild): string[] {
  return ['--snapshot-blob', build.snapshot, '--'];
}
