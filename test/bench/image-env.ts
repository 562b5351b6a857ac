// The environment the operator image sets: the `ENV` lines of deploy/Dockerfile's last stage (the
// runtime). The benchmarks give the operator the same, so they measure it as the image runs it;
// that includes the allocator the image preloads, which they install here when it is missing.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ensureDebianPackage } from '../support/debian-package.js';

const run = promisify(execFile);
const DOCKERFILE = fileURLToPath(new URL('../../deploy/Dockerfile', import.meta.url));

/** `ENV NAME=value` lines after the last `FROM`; a value may be double-quoted. */
export function runtimeEnv(dockerfile: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const m of runtimeStage(dockerfile).matchAll(/^ENV\s+([A-Za-z_][A-Za-z0-9_]*)=("([^"]*)"|\S+)\s*$/gm))
    env[m[1]!] = m[3] ?? m[2]!;
  return env;
}

export function runtimeStage(dockerfile: string): string {
  const stages = dockerfile.split(/^FROM\s/m);
  return stages[stages.length - 1] ?? '';
}

export function imageDockerfile(): string {
  return readFileSync(DOCKERFILE, 'utf8');
}

export function imageEnv(): Record<string, string> {
  return runtimeEnv(imageDockerfile());
}

/** The Debian package of each library the image may preload, as the image installs it. */
export const PRELOAD_PACKAGES: Readonly<Record<string, string>> = { 'libjemalloc.so.2': 'libjemalloc2' };

/** The libraries LD_PRELOAD names (separated by spaces or colons, as ld.so reads it). */
export function preloadedLibraries(env: Record<string, string>): string[] {
  return (env['LD_PRELOAD'] ?? '').split(/[\s:]+/).filter((lib) => lib !== '');
}

const MULTIARCH: Partial<Record<NodeJS.Architecture, string>> = { x64: 'x86_64-linux-gnu', arm64: 'aarch64-linux-gnu' };

/**
 * Installs each library the image preloads (Debian's package, which needs root), then checks that
 * a Node.js process started with the image's LD_PRELOAD loads them: ld.so only warns and goes on
 * without a library it cannot open, and the benchmark would then measure another allocator.
 */
export async function ensureImagePreloads(env: Record<string, string> = imageEnv()): Promise<void> {
  const libraries = preloadedLibraries(env);
  if (libraries.length === 0) return;
  const multiarch = MULTIARCH[process.arch];
  for (const lib of libraries) {
    const pkg = PRELOAD_PACKAGES[lib];
    if (!pkg) throw new Error(`the image preloads ${lib}, and image-env.ts names no Debian package for it`);
    if (!multiarch) throw new Error(`the image preloads ${lib}; no library directory is known for ${process.arch}`);
    try {
      await ensureDebianPackage(pkg, `/usr/lib/${multiarch}/${lib}`);
    } catch (err) {
      throw new Error(`${lib}, which the image preloads, is not available: ${(err as Error).message}`);
    }
  }
  const { stderr } = await run(process.execPath, ['-e', '0'], {
    env: { ...process.env, LD_PRELOAD: env['LD_PRELOAD'] },
  });
  if (stderr.includes('LD_PRELOAD'))
    throw new Error(`Node.js does not load the image's LD_PRELOAD here: ${stderr.trim()}`);
}
