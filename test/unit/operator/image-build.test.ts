// The image builds and ships the operator process and what it imports, nothing of development:
// the local control plane, the sandbox and the simulator (deploy/local) and test/ stay out.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../../..');
const PRODUCTION = ['src/', 'workflows/', 'activities/', 'deploy/operator/'];

describe("the image's build", () => {
  it('compiles only the operator process and what it imports', { timeout: 60_000 }, async () => {
    const tsc = resolve(root, 'node_modules/typescript/bin/tsc');
    const { stdout } = await run(process.execPath, [tsc, '-p', 'tsconfig.build.json', '--listFilesOnly'], {
      cwd: root,
      maxBuffer: 16 << 20,
    });
    const ours = stdout
      .split('\n')
      .filter((f) => f !== '' && !f.includes('/node_modules/'))
      .map((f) => relative(root, f));
    expect(ours.length).toBeGreaterThan(100);
    expect(ours.filter((f) => !PRODUCTION.some((dir) => f.startsWith(dir)))).toEqual([]);
    expect(ours).toContain('deploy/operator/main.ts');
  });

  it('copies only those folders into its build stage', () => {
    const dockerfile = readFileSync(resolve(root, 'deploy/Dockerfile'), 'utf8');
    const buildStage = dockerfile.split(/^FROM /m)[1]!;
    const sources = [...buildStage.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) => m[1]!.split(/\s+/));
    const allowed = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json'];
    expect(sources.filter((s) => !allowed.includes(s) && !PRODUCTION.includes(`${s}/`))).toEqual([]);
    expect(sources).toContain('deploy/operator');
  });
});
