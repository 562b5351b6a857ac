import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatResult, runChecks, STATIC_CHECKS, type Check } from '../../static-checks.js';

const node = (name: string, script: string): Check => ({ name, command: process.execPath, args: ['-e', script] });

describe('the static checks before vitest', () => {
  it('runs side by side: two checks that each wait for the other to start both pass', { timeout: 30_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'static-checks-'));
    // Each writes its own marker, then waits up to 20 s for the other's: one after the other, the first fails.
    const meet = (me: string, other: string): string =>
      `const fs = require('node:fs'); fs.writeFileSync(${JSON.stringify(join(dir, me))}, '');` +
      `const until = Date.now() + 20000;` +
      `const t = setInterval(() => { if (fs.existsSync(${JSON.stringify(join(dir, other))})) { clearInterval(t); }` +
      ` else if (Date.now() > until) { console.error('${other} never started'); process.exit(1); } }, 20);`;
    try {
      const failed = await runChecks([node('a', meet('a', 'b')), node('b', meet('b', 'a'))], process.cwd(), () => {});
      expect(failed).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('prints each output whole under its header and names every check that failed', async () => {
    const printed: string[] = [];
    const failed = await runChecks(
      [
        node('quiet', ''),
        node('noisy', 'for (let i = 0; i < 3; i++) console.log("line " + i); console.error("warning")'),
        node('broken', 'console.error("src/x.ts: 1 error"); process.exit(2)'),
        { name: 'missing', command: '/nonexistent/tool', args: [] },
      ],
      process.cwd(),
      (t) => printed.push(t),
    );
    expect(failed.sort()).toEqual(['broken', 'missing']);
    const byName = new Map(printed.map((t) => [/^── ([^:]+):/.exec(t)?.[1], t]));
    expect(byName.get('quiet')).toMatch(/^── quiet: passed in \d+\.\d s\n$/);
    expect(byName.get('noisy')).toMatch(/^── noisy: passed in .*\nline 0\nline 1\nline 2\nwarning\n$/);
    expect(byName.get('broken')).toMatch(/^── broken: FAILED \(exit 2\) in .*\nsrc\/x\.ts: 1 error\n$/);
    expect(byName.get('missing')).toMatch(/FAILED \(exit -1\).*\ncould not start \/nonexistent\/tool: .*ENOENT/s);
  });

  it('reports a check ended by a signal as failed, with the signal', () => {
    expect(formatResult({ name: 'lint', ok: false, exit: 'SIGKILL', output: '', seconds: 3 })).toBe(
      '── lint: FAILED (exit SIGKILL) in 3.0 s\n',
    );
  });

  it('runs exactly the npm scripts that exist, and npm test runs them before vitest', () => {
    const { scripts } = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
    for (const check of STATIC_CHECKS) expect(scripts[check.name], check.name).toBeDefined();
    expect(STATIC_CHECKS.map((c) => c.name)).toEqual(['format:check', 'typecheck', 'lint', 'crds:check']);
    expect(scripts['test']).toBe('npm run checks && vitest run');
    expect(scripts['checks']).toBe('tsx test/static-checks.ts');
  });
});
