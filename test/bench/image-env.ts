// The environment the operator image sets: the `ENV` lines of deploy/Dockerfile's last stage (the
// runtime). The benchmarks give the operator the same, so they measure it as the image runs it.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const DOCKERFILE = fileURLToPath(new URL('../../deploy/Dockerfile', import.meta.url));

/** `ENV NAME=value` lines after the last `FROM`; a value may be double-quoted. */
export function runtimeEnv(dockerfile: string): Record<string, string> {
  const stages = dockerfile.split(/^FROM\s/m);
  const runtime = stages[stages.length - 1] ?? '';
  const env: Record<string, string> = {};
  for (const m of runtime.matchAll(/^ENV\s+([A-Za-z_][A-Za-z0-9_]*)=("([^"]*)"|\S+)\s*$/gm)) env[m[1]!] = m[3] ?? m[2]!;
  return env;
}

export function imageEnv(): Record<string, string> {
  return runtimeEnv(readFileSync(DOCKERFILE, 'utf8'));
}
