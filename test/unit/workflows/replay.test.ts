// Determinism across upgrades: the histories recorded from real runs of every released version
// (test/fixtures/histories/<version>/, and unreleased/ for the code since the last release, written
// by the integration tests with RECORD_HISTORIES=1) replay against today's workflow code without a
// non-determinism error. A released version's histories never change after its release commit:
// they stand for the workflows that version left running (docs/releasing.md).
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { RELEASES } from '../../support/releases.js';

const run = promisify(execFile);
const runner = fileURLToPath(new URL('./replay-histories.ts', import.meta.url));
const corpus = fileURLToPath(new URL('../../fixtures/histories/', import.meta.url));
const repo = fileURLToPath(new URL('../../../', import.meta.url));
const reordered = fileURLToPath(new URL('./fixtures/reordered-workflows.ts', import.meta.url));

const UNRELEASED = 'unreleased';
const versions = readdirSync(corpus, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();
/** The version checked out: a release commit holds its histories before deploy/releases.json names it. */
const CURRENT = (JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { version: string }).version;
const released = [...new Set([...RELEASES.map((r) => r.version), ...versions.filter((v) => v === CURRENT)])];
/** The newest corpus, which holds one history of each workflow path. */
const newest = released.at(-1) ?? UNRELEASED;

type Result = { dir: string; workflowId: string; error?: string };

/** Replays the histories of every folder in `dirs` in one process (one bundle of the workflow code). */
async function replay(dirs: readonly string[], workflows?: string): Promise<{ code: number; results: Result[] }> {
  const args = ['--import', 'tsx', runner, ...(workflows ? ['--workflows', workflows] : []), ...dirs];
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

/** What a failed replay of `version`'s histories means and what to do about it. */
function replayFailureMessage(version: string, failed: readonly Result[]): string {
  // The SDK's message carries the whole history event: its start says what did not match.
  const which = failed.map((r) => `${r.workflowId}: ${(r.error ?? '').slice(0, 600)}`).join('\n  ');
  if (version === UNRELEASED)
    return (
      `The workflow code no longer replays histories recorded since the last release:\n  ${which}\n` +
      'No release has these histories, so if the change is meant, record them again ' +
      '(RECORD_HISTORIES=1 with the integration test that writes each, docs/releasing.md).'
    );
  return (
    `The workflow code no longer replays histories that release ${version} recorded:\n  ${which}\n` +
    `A workflow's commands changed (which activities, timers, children or signals it issues, or their order), ` +
    `so the workflows that ${version} left running would fail on upgrade. Keep the old path for them: ` +
    `put the change inside if (patched('<change-id>')) { new } else { old } (docs/production.md, ` +
    `"Workflow versioning"). Never record a released version's histories again.`
  );
}

/** One history per workflow type at least, with the teardown paths, in the newest release's corpus. */
const REQUIRED = [
  'drive-container-standalone',
  'drive-container-spec-fixed',
  'drive-container-growth',
  'drive-container-cluster-member',
  'drive-container-teardown-refused',
  'drive-container-teardown-without-pod',
  'drive-container-waited-for-capacity',
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
  'healthy-clusters-after-rotation',
];

const historiesIn = async (dir: string) =>
  (await readdir(dir).catch(() => [])).filter((f) => f.endsWith('.json')).map((f) => f.replace(/\.json$/, ''));

describe('workflow replay', () => {
  it('keeps the histories of every release, the newest with one of each workflow path', async () => {
    expect(versions.filter((v) => v !== UNRELEASED)).toEqual([...released].sort());
    expect((await historiesIn(join(corpus, newest))).sort()).toEqual(expect.arrayContaining(REQUIRED));
  });

  it.each(RELEASES)(
    'keeps the histories of $version as its release commit recorded them',
    async ({ version, commit }) => {
      const { stdout } = await run('git', ['diff', '--stat', commit, '--', `test/fixtures/histories/${version}/`], {
        cwd: repo,
      });
      expect(stdout, `the histories of release ${version} changed since its commit ${commit}`).toBe('');
    },
  );

  // Every version's corpus replays in one process, started by the first of these tests.
  let everyCorpus: ReturnType<typeof replay> | undefined;
  it.each(versions)('replays the histories of %s with the current workflow code', { timeout: 180_000 }, async (v) => {
    everyCorpus ??= replay(versions.map((version) => join(corpus, version)));
    const { code, results: all } = await everyCorpus;
    const results = all.filter((r) => r.dir === v);
    expect(results.map((r) => r.workflowId).sort()).toEqual((await historiesIn(join(corpus, v))).sort());
    const failed = results.filter((r) => r.error);
    if (failed.length > 0) expect.fail(replayFailureMessage(v, failed));
    // The process ended as its results say: 0 when every history of every corpus replayed.
    expect(code).toBe(all.some((r) => r.error) ? 1 : 0);
  });

  it('fails a workflow whose commands changed, saying to patch the change', { timeout: 120_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'replay-'));
    try {
      const fixture = 'drive-container-standalone.json';
      await copyFile(join(corpus, newest, fixture), join(dir, fixture));
      const { code, results } = await replay([dir], reordered);
      expect(code).toBe(1);
      expect(results).toHaveLength(1);
      expect(results[0]!.error).toMatch(/nondetermin/i);
      if (newest !== UNRELEASED)
        expect(replayFailureMessage(newest, results)).toMatch(
          new RegExp(`release ${newest} recorded:\\n  drive-container-standalone: .*patched\\('<change-id>'\\)`, 's'),
        );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
