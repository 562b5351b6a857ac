import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { bundleOperatorSource, repoRoot } from '../../../deploy/operator/operator-bundle.js';

const root = repoRoot();
const entry = join(root, '.tmp', `operator-bundle-entry-${process.pid}`, 'entry.ts');
afterAll(() => rm(dirname(entry), { recursive: true, force: true }));

describe('bundling the operator from source', () => {
  it('runs under plain Node.js and finds its package.json, workflows and packages as from source', async () => {
    // An entry two levels below the root, as deploy/operator/main.ts is, using what the operator
    // looks up relative to its own file and a package kept outside the bundle.
    await mkdir(dirname(entry), { recursive: true });
    await writeFile(
      entry,
      [
        "import { operatorVersion } from '../../deploy/operator/version.js';",
        "import { workflowsPath } from '../../deploy/operator/workflow-bundle.js';",
        "import { Worker } from '@temporalio/worker';",
        'console.log(JSON.stringify({ version: operatorVersion(), workflows: workflowsPath(), worker: typeof Worker }));',
      ].join('\n'),
    );
    const bundle = await bundleOperatorSource(entry);
    try {
      expect(dirname(dirname(bundle.path))).toBe(join(root, '.tmp'));
      expect(bundle.bytes).toBeGreaterThan(0);
      const { stdout } = await promisify(execFile)(process.execPath, [bundle.path], { cwd: '/' });
      expect(JSON.parse(stdout)).toEqual({
        version: (JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { version: string }).version,
        workflows: join(root, 'workflows', 'index.ts'),
        worker: 'function',
      });
    } finally {
      await bundle.remove();
    }
    expect(existsSync(bundle.path)).toBe(false);
  });

  it('gives each bundle a name of its own', async () => {
    const [a, b] = await Promise.all([
      bundleOperatorSource(join(root, 'deploy/operator/version.ts')),
      bundleOperatorSource(join(root, 'deploy/operator/version.ts')),
    ]);
    await Promise.all([a.remove(), b.remove()]);
    expect(a.path).not.toBe(b.path);
    expect(a.path).toMatch(/\/\.tmp\/operator-bundles\/version-\d+-\d+\.js$/);
  });

  it("deletes the bundles a killed process left behind, and keeps a live process's", async () => {
    const dir = join(root, '.tmp', 'operator-bundles');
    const live = await bundleOperatorSource(join(root, 'deploy/operator/version.ts'));
    // A pid that no process has: above the kernel's largest.
    const orphan = join(dir, 'main-4194305-1.js');
    await writeFile(orphan, '');
    const next = await bundleOperatorSource(join(root, 'deploy/operator/version.ts'));
    expect(existsSync(orphan)).toBe(false);
    expect(existsSync(live.path)).toBe(true);
    await Promise.all([live.remove(), next.remove()]);
  });
});
