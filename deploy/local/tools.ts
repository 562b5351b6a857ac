// Where the control plane's server binaries are, building them first when the machine lacks them.
import { execFile, spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const defaultBuildScript = fileURLToPath(new URL('./tools/build-tools.sh', import.meta.url));

export interface ToolPaths {
  temporal: string;
  kwok: string;
  etcd: string;
  kubeApiserver: string;
  kubeScheduler: string;
  kubeControllerManager: string;
  helm: string;
  kstatus: string;
  kubectl: string;
  promtool: string;
  /** The Temporal server itself; its SQL schema tool, temporal-sql-tool, is beside it. */
  temporalServer: string;
}

export type ToolName =
  | 'temporal'
  | 'kwok'
  | 'etcd'
  | 'kube-apiserver'
  | 'kube-scheduler'
  | 'kube-controller-manager'
  | 'helm'
  | 'kstatus'
  | 'kubectl'
  | 'promtool'
  | 'temporal-server';

/** The servers of the local control plane, in the order build-tools.sh builds them. */
export const CONTROL_PLANE_TOOLS: ToolName[] = [
  'temporal',
  'kwok',
  'etcd',
  'kube-apiserver',
  'kube-scheduler',
  'kube-controller-manager',
];

/**
 * Seconds each tool took to build from an empty Go cache on this project's 2-core machine, module
 * downloads included (the README's "Tool builds" table shows the same figures).
 */
export const COLD_BUILD_SECONDS: Record<ToolName, number> = {
  temporal: 152,
  kwok: 73,
  etcd: 43,
  'kube-apiserver': 183,
  'kube-scheduler': 160,
  'kube-controller-manager': 258,
  helm: 54,
  kstatus: 31,
  kubectl: 82,
  promtool: 367,
  'temporal-server': 598,
};

/** The scheduler and the controller manager share most packages with the apiserver: after it, they take this long. */
export const BUILD_SECONDS_AFTER_APISERVER: Partial<Record<ToolName, number>> = {
  'kube-scheduler': 18,
  'kube-controller-manager': 39,
};

export interface ToolState {
  name: ToolName;
  binary: string;
  buildLog: string;
  cached: boolean;
}

export interface ToolsOptions {
  /** The build script; tests give a stand-in. */
  buildScript?: string;
}

export interface EnsureToolsOptions extends ToolsOptions {
  /** Receives each line of the build's output as it comes (default: this process's stderr). */
  log?: (line: string) => void;
}

/** A build that exited non-zero; its message ends with the build's last lines of output. */
export class ToolBuildError extends Error {
  constructor(
    readonly tools: ToolName[],
    readonly outputTail: string[],
    readonly exit: string,
  ) {
    super(`building ${tools.join(', ')} failed (${exit}); its last output:\n${outputTail.join('\n')}`);
    this.name = 'ToolBuildError';
  }
}

/** Output lines a failed build's error keeps: build-tools.sh ends with the log's last 20 and its path. */
const OUTPUT_TAIL_LINES = 30;

export function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** build-tools.sh's name for a tool in its variables: kube-apiserver → KUBE_APISERVER. */
const envName = (name: ToolName): string => name.toUpperCase().replaceAll('-', '_');

async function printEnv(buildScript: string): Promise<(key: string) => string> {
  const { stdout } = await run('bash', [buildScript, '--print-env']);
  const env = new Map(
    stdout
      .trim()
      .split('\n')
      .map((line) => {
        const at = line.indexOf('=');
        return [line.slice(0, at), line.slice(at + 1)] as const;
      }),
  );
  return (key: string): string => {
    const value = env.get(key);
    if (value === undefined) throw new Error(`${buildScript} --print-env did not print ${key}`);
    return value;
  };
}

/** The cache directory (WEKA_TOOLS_CACHE, else ~/.cache/weka-drives) and each tool's binary and build log. */
export async function toolStates(
  names: ToolName[],
  options: ToolsOptions = {},
): Promise<{ cacheDir: string; tools: ToolState[] }> {
  const get = await printEnv(options.buildScript ?? defaultBuildScript);
  const tools = names.map((name) => {
    const binary = get(`WEKA_${envName(name)}_BIN`);
    return { name, binary, buildLog: get(`WEKA_${envName(name)}_BUILD_LOG`), cached: isExecutable(binary) };
  });
  return { cacheDir: get('WEKA_TOOLS_CACHE'), tools };
}

/**
 * How long each tool not yet cached will take to build, cold, in the order given: the scheduler
 * and the controller manager take less once the apiserver is cached or built before them.
 */
export function buildEstimates(tools: Pick<ToolState, 'name' | 'cached'>[]): Map<ToolName, number> {
  const estimates = new Map<ToolName, number>();
  let apiserverBuilt = false;
  for (const t of tools) {
    if (!t.cached) {
      const after = BUILD_SECONDS_AFTER_APISERVER[t.name];
      estimates.set(t.name, apiserverBuilt && after !== undefined ? after : COLD_BUILD_SECONDS[t.name]);
    }
    if (t.name === 'kube-apiserver') apiserverBuilt = true;
  }
  return estimates;
}

/** The cached binaries' paths, as build-tools.sh computes them (one source for the cache keys). */
export async function toolPaths(options: ToolsOptions = {}): Promise<ToolPaths> {
  const all: ToolName[] = [...CONTROL_PLANE_TOOLS, 'helm', 'kstatus', 'kubectl', 'promtool', 'temporal-server'];
  const { tools } = await toolStates(all, options);
  const path = (name: ToolName): string => tools.find((t) => t.name === name)!.binary;
  return {
    temporal: path('temporal'),
    kwok: path('kwok'),
    etcd: path('etcd'),
    kubeApiserver: path('kube-apiserver'),
    kubeScheduler: path('kube-scheduler'),
    kubeControllerManager: path('kube-controller-manager'),
    helm: path('helm'),
    kstatus: path('kstatus'),
    kubectl: path('kubectl'),
    promtool: path('promtool'),
    temporalServer: path('temporal-server'),
  };
}

/** Runs build-tools.sh for `names`, handing each output line to `log` as it comes. */
function runBuild(buildScript: string, names: ToolName[], log: (line: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [buildScript, ...names], { stdio: ['ignore', 'pipe', 'pipe'] });
    const tail: string[] = [];
    const forward = (line: string): void => {
      log(line);
      tail.push(line);
      if (tail.length > OUTPUT_TAIL_LINES) tail.shift();
    };
    createInterface({ input: child.stdout }).on('line', forward);
    createInterface({ input: child.stderr }).on('line', forward);
    child.once('error', reject);
    // 'close' comes after both streams ended, so the last lines have been forwarded.
    child.once('close', (code, signal) => {
      if (code === 0) resolve();
      else reject(new ToolBuildError(names, tail, signal ? `killed by ${signal}` : `exit code ${code}`));
    });
  });
}

/**
 * Returns the tool paths, building any missing tool first (minutes on a cold machine, nothing when
 * cached). The build's output lines go to `log` as they come, so that a person sees its progress.
 */
export async function ensureTools(
  names: ToolName[] = CONTROL_PLANE_TOOLS,
  options: EnsureToolsOptions = {},
): Promise<ToolPaths> {
  const { tools } = await toolStates(names, options);
  const missing = tools.filter((t) => !t.cached).map((t) => t.name);
  if (missing.length > 0) {
    const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
    await runBuild(options.buildScript ?? defaultBuildScript, missing, log);
  }
  return toolPaths(options);
}
