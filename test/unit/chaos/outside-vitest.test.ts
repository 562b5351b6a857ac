// `npm run chaos` runs the chaos engine with tsx, outside vitest: nothing it imports may reach
// vitest (the harness does), or the long profile dies at its first line.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

describe('the chaos engine outside vitest', () => {
  it('loads with tsx alone, as npm run chaos runs it', { timeout: 60_000 }, async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '-e', "await import('./test/chaos/engine.ts'); console.log('loaded')"],
      { cwd: repoRoot },
    );
    expect(stdout.trim()).toBe('loaded');
  });
});
