// The sandbox's first words: which servers it finds cached, which it builds and for about how long,
// where their build logs go, then the steps, and from when --timeout counts.
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { renderSandboxPlan, roughDuration, type SandboxPlan } from '../../../deploy/local/sandbox-plan.js';
import { buildEstimates, CONTROL_PLANE_TOOLS, toolStates } from '../../../deploy/local/tools.js';

let dir: string;
let savedCache: string | undefined;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'weka-plan-'));
  savedCache = process.env.WEKA_TOOLS_CACHE;
  process.env.WEKA_TOOLS_CACHE = dir;
});
afterEach(async () => {
  if (savedCache === undefined) delete process.env.WEKA_TOOLS_CACHE;
  else process.env.WEKA_TOOLS_CACHE = savedCache;
  await rm(dir, { recursive: true, force: true });
});

/** The plan for a machine whose tool cache holds fake executables of `cached`. */
async function planWith(cached: string[], extra: Partial<SandboxPlan> = {}): Promise<string> {
  const before = await toolStates(CONTROL_PLANE_TOOLS);
  for (const t of before.tools.filter((x) => cached.includes(x.name))) {
    await mkdir(dirname(t.binary), { recursive: true });
    await writeFile(t.binary, '#!/bin/sh\n');
    await chmod(t.binary, 0o755);
  }
  const { cacheDir, tools } = await toolStates(CONTROL_PLANE_TOOLS);
  return renderSandboxPlan({
    cacheDir,
    tools,
    estimates: buildEstimates(tools),
    nodes: ['n1', 'n2'],
    operations: 2,
    clusters: [
      { namespace: 'a', name: 'x', driveContainers: 3 },
      { namespace: 'b', name: 'y', driveContainers: 2 },
    ],
    untilReady: false,
    timeoutSeconds: 300,
    ...extra,
  });
}

const toolLine = (plan: string, tool: string): string | undefined =>
  plan.split('\n').find((l) => new RegExp(`^\\s+${tool}\\s`).test(l));

describe('the sandbox plan', () => {
  it('lists the cached tools and, for each one to build, its cold build time and log', async () => {
    const plan = await planWith(['temporal', 'etcd', 'kube-apiserver']);
    expect(plan).toContain(`1. Build the control plane's servers from Go modules into ${dir}`);
    expect(plan).toContain('(3 of 6 to build, about 2 min in all on 2 cores');
    expect(toolLine(plan, 'temporal')).toMatch(/^\s+temporal\s+cached$/);
    expect(toolLine(plan, 'etcd')).toMatch(/cached$/);
    expect(toolLine(plan, 'kwok')).toMatch(
      new RegExp(`kwok\\s+to build, about 70 s; log: ${dir}/kwok-v[0-9.]+/build\\.log$`),
    );
    // The apiserver is cached: the scheduler and controller manager take their shorter figures.
    expect(toolLine(plan, 'kube-scheduler')).toMatch(/to build, about 20 s; log: /);
    expect(toolLine(plan, 'kube-controller-manager')).toMatch(/to build, about 40 s; log: /);
  });

  it('says in one line that nothing is built when every tool is cached', async () => {
    const plan = await planWith([...CONTROL_PLANE_TOOLS]);
    expect(plan).toContain(`1. The control plane's servers: all 6 cached in ${dir}, nothing to build.`);
    expect(plan).not.toMatch(/to build,/);
  });

  it('names the steps after the build: control plane, nodes, operator, signing, clusters', async () => {
    const plan = await planWith([...CONTROL_PLANE_TOOLS]);
    expect(plan).toMatch(/2\. Start the local control plane/);
    expect(plan).toMatch(/3\. Add 2 fake nodes .*\(n1, n2\)/);
    expect(plan).toMatch(/sign the drives \(2 WekaManualOperations\)/);
    expect(plan).toMatch(/4\. Create 2 WekaClusters with 5 drive containers in all/);
    expect(plan).toContain('a/x (3), b/y (2).');
    expect(plan.split('\n').at(-1)).toBe('Ctrl-C stops everything.');
  });

  it('says that --until-ready counts its timeout from the moment the control plane is up', async () => {
    const plan = await planWith([], { untilReady: true, timeoutSeconds: 600, keptIn: '/repo/.tmp/sandbox' });
    expect(plan).toContain(
      '--until-ready: exits 0 once all 5 are Ready; exits 1 if they are not 600 s after the control plane is up.',
    );
    expect(plan).toContain('--keep: the state stays in /repo/.tmp/sandbox for the next start.');
  });

  it.each([
    [5, 'about 10 s'],
    [48, 'about 50 s'],
    [87, 'about 90 s'],
    [119, 'about 120 s'],
    [120, 'about 2 min'],
    [497, 'about 8 min'],
    [1113, 'about 19 min'],
  ])('rounds %i s to "%s"', (seconds, text) => {
    expect(roughDuration(seconds)).toBe(text);
  });
});
