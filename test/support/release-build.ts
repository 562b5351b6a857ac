// A released version built from its commit the way its image builds it (deploy/Dockerfile): its
// files as that commit holds them, the dependencies its lockfile pins, then `npm run build`. Built
// once per machine into the tools cache (releases/<version>-<commit>/), since a release never
// changes. When its lockfile pins what this checkout's does, it uses this checkout's node_modules;
// otherwise npm installs them from the registry.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { toolStates } from '../../deploy/local/tools.js';
import { shellQuote } from '../../deploy/local/weka-sim/shims.js';
import type { Release } from './releases.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

export interface ReleaseBuild {
  readonly dir: string;
  /** The operator's entry point as the release's image runs it. */
  readonly operator: string;
  /** The release's chart. */
  readonly chart: string;
}

/** The release built (or found built) under the tools cache. Takes a few minutes the first time. */
export async function buildRelease(release: Release): Promise<ReleaseBuild> {
  const { cacheDir } = await toolStates([]);
  const dir = join(cacheDir, 'releases', `${release.version}-${release.commit.slice(0, 12)}`);
  const built = {
    dir,
    operator: join(dir, 'dist/deploy/operator/main.bundle.js'),
    chart: join(dir, 'deploy/helm/weka-drives-operator'),
  };
  const done = join(dir, '.built');
  if (existsSync(done)) return built;
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  await sh(`git -C ${shellQuote(repoRoot)} archive ${release.commit} | tar -x -C ${shellQuote(dir)}`);
  const sameLock =
    (await pinned(join(dir, 'package-lock.json'))) === (await pinned(join(repoRoot, 'package-lock.json')));
  if (sameLock) await symlink(join(repoRoot, 'node_modules'), join(dir, 'node_modules'), 'dir');
  else await sh('npm install --ignore-scripts --no-audit --no-fund', dir);
  await sh('npm run build', dir);
  await writeFile(done, `${new Date().toISOString()}\n`);
  return built;
}

/** What a lockfile pins, without the project's own version (which every release changes). */
async function pinned(lockfile: string): Promise<string> {
  const lock = JSON.parse(await readFile(lockfile, 'utf8')) as {
    version?: string;
    packages: Record<string, { version?: string }>;
  };
  delete lock.version;
  delete lock.packages['']?.version;
  return JSON.stringify(lock);
}

function sh(command: string, cwd = repoRoot): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-o', 'pipefail', '-c', command], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} (in ${cwd}) exited ${code}:\n${output.slice(-4000)}`)),
    );
  });
}
