// A tool of build-tools.sh that only tests use (helm, kstatus, kubectl, promtool, temporal-server): built on first use if this machine
// has not yet (it is cached after), and its path. Test files run in parallel processes, and two
// concurrent builds would share build-tools.sh's scratch directory, so a build happens only under
// a lock directory per tool (mkdir is atomic).
import { mkdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureTools, isExecutable, toolPaths, type ToolName, type ToolPaths } from '../../deploy/local/tools.js';
import { sleep } from './async.js';

type TestTool = Extract<ToolName, 'helm' | 'kstatus' | 'kubectl' | 'promtool' | 'temporal-server'>;

const built = new Map<TestTool, Promise<string>>();

/** The tool's binary, built first if needed, waiting at most `timeoutMs` for another process's build. */
export function testToolBinary(name: TestTool, timeoutMs: number): Promise<string> {
  let path = built.get(name);
  if (!path) {
    path = build(name, timeoutMs);
    built.set(name, path);
  }
  return path;
}

async function build(name: TestTool, timeoutMs: number): Promise<string> {
  const binary = (paths: ToolPaths) => paths[name === 'temporal-server' ? 'temporalServer' : name];
  const path = binary(await toolPaths());
  if (isExecutable(path)) return path;
  const lock = join(tmpdir(), `weka-drives-${name}-build.lock`);
  const started = Date.now();
  for (;;) {
    try {
      await mkdir(lock);
      break;
    } catch (err) {
      if ((err as { code?: string }).code !== 'EEXIST') throw err;
      if (isExecutable(path)) return path; // another process built it meanwhile
      // A lock older than any build is left over from a killed run.
      if (Date.now() - (await stat(lock).catch(() => ({ mtimeMs: Date.now() }))).mtimeMs > timeoutMs)
        await rm(lock, { recursive: true, force: true });
      if (Date.now() - started > timeoutMs)
        throw new Error(`timed out waiting for another process to build ${name} (lock ${lock})`);
      await sleep(500);
    }
  }
  try {
    return binary(await ensureTools([name]));
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}
