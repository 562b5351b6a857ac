// Where the control plane's server binaries are, building them first when the machine lacks them.
import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const buildScript = fileURLToPath(new URL('./tools/build-tools.sh', import.meta.url));

export interface ToolPaths {
  temporal: string;
  kwok: string;
  etcd: string;
  kubeApiserver: string;
  kubeScheduler: string;
  kubeControllerManager: string;
  helm: string;
}

export type ToolName =
  'temporal' | 'kwok' | 'etcd' | 'kube-apiserver' | 'kube-scheduler' | 'kube-controller-manager' | 'helm';

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The cached binaries' paths, as build-tools.sh computes them (one source for the cache keys). */
export async function toolPaths(): Promise<ToolPaths> {
  const { stdout } = await run('bash', [buildScript, '--print-env']);
  const env = Object.fromEntries(
    stdout
      .trim()
      .split('\n')
      .map((line) => {
        const at = line.indexOf('=');
        return [line.slice(0, at), line.slice(at + 1)];
      }),
  );
  const get = (key: string): string => {
    const value = env[key];
    if (value === undefined) throw new Error(`build-tools.sh --print-env did not print ${key}`);
    return value;
  };
  return {
    temporal: get('WEKA_TEMPORAL_BIN'),
    kwok: get('WEKA_KWOK_BIN'),
    etcd: get('WEKA_ETCD_BIN'),
    kubeApiserver: get('WEKA_KUBE_APISERVER_BIN'),
    kubeScheduler: get('WEKA_KUBE_SCHEDULER_BIN'),
    kubeControllerManager: get('WEKA_KUBE_CONTROLLER_MANAGER_BIN'),
    helm: get('WEKA_HELM_BIN'),
  };
}

/**
 * Returns the tool paths, building any missing tool (minutes on a cold machine, nothing when
 * cached). Build output goes to this process's stderr so a person sees the progress.
 */
export async function ensureTools(
  names: ToolName[] = ['temporal', 'kwok', 'etcd', 'kube-apiserver', 'kube-scheduler', 'kube-controller-manager'],
): Promise<ToolPaths> {
  const paths = await toolPaths();
  const byName: Record<ToolName, string> = {
    temporal: paths.temporal,
    kwok: paths.kwok,
    etcd: paths.etcd,
    'kube-apiserver': paths.kubeApiserver,
    'kube-scheduler': paths.kubeScheduler,
    'kube-controller-manager': paths.kubeControllerManager,
    helm: paths.helm,
  };
  const missing = names.filter((n) => !isExecutable(byName[n]));
  if (missing.length > 0) {
    try {
      const { stderr, stdout } = await run('bash', [buildScript, ...missing], { maxBuffer: 16 * 1024 * 1024 });
      process.stderr.write(stdout + stderr);
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string; message: string };
      throw new Error(`building ${missing.join(', ')} failed:\n${e.stdout ?? ''}${e.stderr ?? e.message}`);
    }
  }
  return paths;
}
