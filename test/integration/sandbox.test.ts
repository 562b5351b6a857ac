// The README's main job, as a script would run it: `npm run sandbox -- --until-ready` brings its
// own control plane, the operator, the signing and two clusters to Ready, then exits 0 and
// leaves no process behind.
import { execFile, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

describe('sandbox', () => {
  it('reaches Ready with --until-ready and exits 0', { timeout: 420_000 }, async () => {
    const started = Date.now();
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'deploy/local/sandbox.ts', '--until-ready', '--timeout', '360'],
      { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    const tail = output.split('\n').slice(-60).join('\n');
    expect(code, tail).toBe(0);
    expect(output).toMatch(/sandbox Ready: 6 drive containers in 2 clusters/);
    expect(output).toMatch(/Temporal UI:\s+http:\/\/127\.0\.0\.1:\d+/);
    console.log(
      `sandbox reached Ready and stopped in ${Math.round((Date.now() - started) / 1000)} s; last view:\n${tail}`,
    );
    // Nothing of its control plane survives it (every server is given paths in its data directory).
    const dataDir = /logs:\s+(\S+)\/logs/.exec(output)?.[1];
    expect(dataDir, 'the sandbox prints where its logs are').toBeDefined();
    const left = await run('pgrep', ['-f', '-a', dataDir!]).then(
      (r) => r.stdout.trim(),
      () => '',
    );
    expect(left).toBe('');
  });
});
