// Determinism: histories recorded from real runs (test/fixtures/histories, written by the
// integration tests with RECORD_HISTORIES=1) replay against today's workflow code without a
// non-determinism error. A change that breaks this needs patched() — see docs/production.md.
import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const runner = fileURLToPath(new URL('./replay-histories.ts', import.meta.url));
const fixtures = fileURLToPath(new URL('../../fixtures/histories/', import.meta.url));

describe('workflow replay', () => {
  it('replays every recorded history with the current workflow code', { timeout: 120_000 }, async () => {
    const files = (await readdir(fixtures)).filter((f) => f.endsWith('.json'));
    expect(files.length).toBeGreaterThanOrEqual(3);
    const { stdout } = await run(process.execPath, ['--import', 'tsx', runner, fixtures]).catch(
      (err: { stdout?: string; stderr?: string }) => {
        throw new Error(`replay failed:\n${err.stdout ?? ''}${err.stderr ?? ''}`);
      },
    );
    const results = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { workflowId: string; error?: string });
    expect(results.map((r) => r.workflowId).sort()).toEqual(files.map((f) => f.replace(/\.json$/, '')).sort());
    expect(results.filter((r) => r.error)).toEqual([]);
  });
});
