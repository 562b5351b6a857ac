// Determinism: histories recorded from real runs (test/fixtures/histories, written by the
// integration tests with RECORD_HISTORIES=1) replay against today's workflow code without a
// non-determinism error. Before 1.0 the fixtures are re-recorded whenever a workflow changes; from
// 1.0 on, a change that breaks this needs patched() (docs/production.md, "Workflow versioning").
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const runner = fileURLToPath(new URL('./replay-histories.ts', import.meta.url));
const fixtures = fileURLToPath(new URL('../../fixtures/histories/', import.meta.url));
const reordered = fileURLToPath(new URL('./fixtures/reordered-workflows.ts', import.meta.url));

type Result = { workflowId: string; error?: string };

async function replay(dir: string, workflows?: string): Promise<{ code: number; results: Result[] }> {
  const args = ['--import', 'tsx', runner, dir, ...(workflows ? [workflows] : [])];
  const { code, stdout } = await run(process.execPath, args).then(
    (r) => ({ code: 0, stdout: r.stdout }),
    (err: { code?: number; stdout?: string; stderr?: string }) => {
      if (typeof err.code !== 'number' || !err.stdout) throw new Error(`replay did not run:\n${err.stderr ?? ''}`);
      return { code: err.code, stdout: err.stdout };
    },
  );
  // The SDK's core logs a failing replay on stdout too: the results are the JSON lines.
  const results = stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Result);
  return { code, results };
}

/** One fixture per workflow type at least, with the teardown paths. */
const REQUIRED = [
  'drive-container-standalone',
  'drive-container-spec-fixed',
  'drive-container-growth',
  'drive-container-cluster-member',
  'drive-container-teardown-refused',
  'drive-container-teardown-without-pod',
  'node-mutex-one-container',
  'node-mutex-batch',
  'node-mutex-continues-as-new',
  'sign-drives-published-through-mutex',
  'sign-drives-deleted-while-running',
  'clean-stale-removed-after-two-passes',
  'rotate-ssdproxy-waited-then-rotated',
  'block-drives-replaced',
  'migrate-to-drive-sharing',
  'drive-verification-sweeps',
  'cluster-formed-and-deleted',
  'cluster-device-set-released',
];

describe('workflow replay', () => {
  it('replays every recorded history with the current workflow code', { timeout: 120_000 }, async () => {
    const files = (await readdir(fixtures)).filter((f) => f.endsWith('.json')).map((f) => f.replace(/\.json$/, ''));
    expect(files.sort()).toEqual([...REQUIRED].sort());
    const { code, results } = await replay(fixtures);
    expect(results.map((r) => r.workflowId).sort()).toEqual(files.sort());
    expect(results.filter((r) => r.error)).toEqual([]);
    expect(code).toBe(0);
  });

  it('reports a workflow whose commands changed as non-deterministic', { timeout: 120_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'replay-'));
    try {
      await copyFile(join(fixtures, 'drive-container-standalone.json'), join(dir, 'drive-container-standalone.json'));
      const { code, results } = await replay(dir, reordered);
      expect(code).toBe(1);
      expect(results).toHaveLength(1);
      expect(results[0]!.error).toMatch(/nondetermin/i);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
