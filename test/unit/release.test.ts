// A version is one version everywhere it is written: package.json and its lockfile, the chart's
// version and appVersion (the image's default tag), the changelog; and every recorded release has
// its section in the changelog (docs/releasing.md).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { RELEASES } from '../support/releases.js';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const pkg = JSON.parse(read('package.json')) as { version: string };
const lock = JSON.parse(read('package-lock.json')) as {
  version: string;
  packages: Record<string, { version?: string }>;
};
const chart = parse(read('deploy/helm/weka-drives-operator/Chart.yaml')) as { version: string; appVersion: string };
const changelogSections = [...read('docs/CHANGELOG.md').matchAll(/^## (\S+)/gm)].map((m) => m[1]);

describe('the version', () => {
  it('is the same in package.json, its lockfile and the chart', () => {
    expect([lock.version, lock.packages['']?.version, chart.version, chart.appVersion]).toEqual(
      Array(4).fill(pkg.version),
    );
  });

  it('has a section in the changelog, as has every recorded release', () => {
    expect(changelogSections).toEqual(expect.arrayContaining([pkg.version, ...RELEASES.map((r) => r.version)]));
  });

  it('records each release once, oldest first, with a full commit hash', () => {
    expect(new Set(RELEASES.map((r) => r.version)).size).toBe(RELEASES.length);
    for (const r of RELEASES) expect(r.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(RELEASES.map((r) => r.date)).toEqual(RELEASES.map((r) => r.date).sort());
  });
});
