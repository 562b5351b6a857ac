// The control plane's tool builds as a person sees them: which tools are cached, how long the others
// take cold, and the build's lines as they come (not all at once when the build is over).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  BUILD_SECONDS_AFTER_APISERVER,
  buildEstimates,
  COLD_BUILD_SECONDS,
  CONTROL_PLANE_TOOLS,
  ensureTools,
  ToolBuildError,
  toolStates,
} from '../../../deploy/local/tools.js';

const run = promisify(execFile);
const buildScript = fileURLToPath(new URL('../../../deploy/local/tools/build-tools.sh', import.meta.url));

let dir: string;
let savedCache: string | undefined;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'weka-tools-'));
  savedCache = process.env.WEKA_TOOLS_CACHE;
  process.env.WEKA_TOOLS_CACHE = join(dir, 'cache');
});
afterEach(async () => {
  if (savedCache === undefined) delete process.env.WEKA_TOOLS_CACHE;
  else process.env.WEKA_TOOLS_CACHE = savedCache;
  await rm(dir, { recursive: true, force: true });
});

async function writeExecutable(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text);
  await chmod(path, 0o755);
}

/** Puts a fake binary where build-tools.sh caches each of `names`. */
async function cache(names: string[]): Promise<void> {
  const { tools } = await toolStates(CONTROL_PLANE_TOOLS);
  for (const t of tools.filter((x) => names.includes(x.name))) await writeExecutable(t.binary, '#!/bin/sh\n');
}

describe('tool states', () => {
  it('finds the tools cached in WEKA_TOOLS_CACHE and names the build log of the others', async () => {
    await cache(['temporal', 'etcd']);
    const { cacheDir, tools } = await toolStates(CONTROL_PLANE_TOOLS);
    expect(cacheDir).toBe(join(dir, 'cache'));
    expect(tools.filter((t) => t.cached).map((t) => t.name)).toEqual(['temporal', 'etcd']);
    const kwok = tools.find((t) => t.name === 'kwok')!;
    expect(kwok.binary).toMatch(new RegExp(`^${dir}/cache/kwok-v[0-9.]+/bin/kwok$`));
    expect(kwok.buildLog).toBe(join(dirname(dirname(kwok.binary)), 'build.log'));
  });
});

describe('build estimates', () => {
  const states = (cached: string[]) => CONTROL_PLANE_TOOLS.map((name) => ({ name, cached: cached.includes(name) }));
  it.each([
    ['nothing cached: the scheduler and controller manager come after the apiserver', [], 18, 39],
    ['the apiserver cached', ['kube-apiserver'], 18, 39],
    ['only the scheduler and controller manager missing, apiserver cached', ['temporal', 'kube-apiserver'], 18, 39],
  ])('%s', (_, cached, scheduler, controllerManager) => {
    const estimates = buildEstimates(states(cached));
    expect(estimates.get('kube-scheduler')).toBe(scheduler);
    expect(estimates.get('kube-controller-manager')).toBe(controllerManager);
    for (const name of cached) expect(estimates.has(name as never)).toBe(false);
  });

  it("are the README's measured figures", async () => {
    const readme = await readFile(fileURLToPath(new URL('../../../README.md', import.meta.url)), 'utf8');
    for (const [name, seconds] of Object.entries(COLD_BUILD_SECONDS)) {
      const row = readme.split('\n').find((l) => l.startsWith(`| ${name} `));
      expect(row, name).toBeDefined();
      expect(row!.split('|').at(-2)!.trim(), name).toMatch(new RegExp(`^${seconds} s\\b`));
      const after = BUILD_SECONDS_AFTER_APISERVER[name as keyof typeof COLD_BUILD_SECONDS];
      if (after !== undefined) expect(row, name).toContain(`(${after} s after the apiserver)`);
    }
  });

  it('gives the scheduler its cold figure when no apiserver comes before it', () => {
    const estimates = buildEstimates([
      { name: 'kube-scheduler', cached: false },
      { name: 'kube-apiserver', cached: false },
    ]);
    expect(estimates.get('kube-scheduler')).toBe(COLD_BUILD_SECONDS['kube-scheduler']);
    expect(estimates.get('kube-apiserver')).toBe(COLD_BUILD_SECONDS['kube-apiserver']);
  });
});

/**
 * A stand-in for build-tools.sh: --print-env like the real one, and a "build" that prints a line,
 * waits until the test has seen it (a file appears), prints another and exits with $STUB_EXIT.
 */
async function stubBuildScript(): Promise<string> {
  const script = join(dir, 'stub-build.sh');
  await writeExecutable(
    script,
    `#!/usr/bin/env bash
if [[ $1 == --print-env ]]; then
  exec bash ${JSON.stringify(buildScript)} --print-env
fi
echo "building $*"
echo "to stderr" >&2
while [[ ! -e ${JSON.stringify(join(dir, 'go-on'))} ]]; do sleep 0.05; done
echo "last line"
exit \${STUB_EXIT:-0}
`,
  );
  return script;
}

async function until(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('ensureTools', () => {
  it('forwards the build output line by line while the build still runs', async () => {
    await cache(['temporal']);
    const lines: string[] = [];
    const building = ensureTools(['temporal', 'kwok', 'etcd'], {
      buildScript: await stubBuildScript(),
      log: (l) => lines.push(l),
    });
    // The stub waits for go-on; a buffered build would never show its first line.
    await until(() => lines.length === 2, 'the first two lines');
    expect([...lines].sort()).toEqual(['building kwok etcd', 'to stderr']);
    await writeFile(join(dir, 'go-on'), '');
    await building;
    expect(lines.at(-1)).toBe('last line');
  });

  it('runs no build when every tool is cached', async () => {
    await cache(['kwok']);
    const lines: string[] = [];
    const paths = await ensureTools(['kwok'], { buildScript: await stubBuildScript(), log: (l) => lines.push(l) });
    expect(lines).toEqual([]);
    expect(existsSync(paths.kwok)).toBe(true);
  });

  it('fails with the build output tail when the build fails', async () => {
    await writeFile(join(dir, 'go-on'), '');
    process.env.STUB_EXIT = '3';
    try {
      const failure = await ensureTools(['kwok'], { buildScript: await stubBuildScript(), log: () => undefined }).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(failure).toBeInstanceOf(ToolBuildError);
      const { message, outputTail } = failure as ToolBuildError;
      expect(message).toMatch(/^building kwok failed \(exit code 3\); its last output:\n/);
      // stdout and stderr are two pipes: their lines may come in either order.
      expect([...outputTail].sort()).toEqual(['building kwok', 'last line', 'to stderr']);
      expect(message.endsWith(outputTail.join('\n'))).toBe(true);
    } finally {
      delete process.env.STUB_EXIT;
    }
  });
});

describe('build-tools.sh', () => {
  /** A stand-in for go: a module download and three packages, one a second, then the binary. */
  async function fakeGo(fail: boolean): Promise<string> {
    const bin = join(dir, 'fake-go');
    await writeExecutable(
      join(bin, 'go'),
      `#!/usr/bin/env bash
echo "go: downloading example.com/a v1.0.0" >&2
for i in 1 2 3; do echo "example.com/a/p$i" >&2; sleep 1; done
${fail ? 'echo "p3.go:1: syntax error" >&2; exit 1' : 'printf "#!/bin/sh\\n" >"$GOBIN/kwok"; chmod +x "$GOBIN/kwok"'}
`,
    );
    return bin;
  }
  const buildKwok = async (fail: boolean) =>
    run('bash', [buildScript, 'kwok'], {
      env: {
        ...process.env,
        PATH: `${await fakeGo(fail)}:${process.env.PATH}`,
        WEKA_TOOLS_PROGRESS_SECONDS: '1',
      },
    });

  it('prints a progress line while a build runs, counting the packages and modules in its log', async () => {
    const { stdout } = await buildKwok(false);
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^build-tools: building kwok into .* \(log: .*\/build\.log\) \.\.\.$/);
    expect(lines).toContainEqual(
      expect.stringMatching(/^build-tools: building kwok: \d+ s, [1-3] packages compiled, 1 modules downloaded$/),
    );
    expect(lines.at(-1)).toMatch(/^build-tools: built kwok in \d+ s$/);
    const { tools } = await toolStates(['kwok']);
    expect(tools[0]!.cached).toBe(true);
  });

  it('ends a failed build with the last lines of its log and the log path', async () => {
    const failure = await buildKwok(true).then(
      () => undefined,
      (err: { code: number; stderr: string }) => err,
    );
    expect(failure?.code).toBe(1);
    const { tools } = await toolStates(['kwok']);
    expect(failure?.stderr).toContain('example.com/a/p3\np3.go:1: syntax error\n');
    expect(failure?.stderr.trim().split('\n').at(-1)).toBe(`build-tools: the whole log: ${tools[0]!.buildLog}`);
    expect(tools[0]!.cached).toBe(false);
  });
});
