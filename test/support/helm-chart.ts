// Renders the operator's Helm chart with the helm binary the tool builds provide, for the unit
// tests of the chart and for the RBAC, admission-policy and helm-install integration tests; and
// picks out and creates what it rendered.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { KubernetesObjectApi, type KubeConfig } from '@kubernetes/client-node';
import { parseAllDocuments, stringify } from 'yaml';
import { testToolBinary } from './tool-binary.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

export const CHART_DIR = fileURLToPath(new URL('../../deploy/helm/weka-drives-operator', import.meta.url));

/** Long enough for a cold `go install` of helm on two cores; a no-op when it is cached. */
export const HELM_BUILD_TIMEOUT_MS = 15 * 60_000;

/** The Kubernetes version of the local control plane's apiserver; the chart requires >= 1.31. */
export function kubeVersion(): string {
  const goMod = readFileSync(`${repoRoot}deploy/local/tools/kubernetes/go.mod`, 'utf8');
  const version = /^require k8s\.io\/kubernetes (v\S+)$/m.exec(goMod)?.[1];
  if (!version) throw new Error('cannot find the k8s.io/kubernetes version in deploy/local/tools/kubernetes/go.mod');
  return version;
}

/** Builds helm if this machine has not yet (build-tools.sh caches it) and returns its path. */
export function helmBinary(): Promise<string> {
  return testToolBinary('helm', HELM_BUILD_TIMEOUT_MS);
}

export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: unknown;
}

export interface RenderOptions {
  release?: string;
  namespace?: string;
  /** Values over the chart's values.yaml, as a nested object. */
  values?: Record<string, unknown>;
  kubeVersion?: string;
}

/**
 * Runs helm with these arguments (and `stdin` on its standard input) and returns its standard
 * output; a non-zero exit rejects with helm's error output, which says what it refused.
 */
export async function runHelm(args: string[], o: { stdin?: string; kubeconfigPath?: string } = {}): Promise<string> {
  const helm = await helmBinary();
  const env = o.kubeconfigPath === undefined ? process.env : { ...process.env, KUBECONFIG: o.kubeconfigPath };
  return new Promise<string>((resolve, reject) => {
    const child = execFile(helm, args, { maxBuffer: 16 * 1024 * 1024, env }, (err, out, stderr) => {
      if (err) reject(new Error(`helm ${args.join(' ')} failed: ${stderr || err.message}`));
      else resolve(out);
    });
    child.stdin?.end(o.stdin ?? '');
  });
}

/** `helm template`: every document the chart renders, the CRDs (templates/crds/) included. */
export async function renderChart(o: RenderOptions = {}): Promise<Manifest[]> {
  const args = [
    'template',
    o.release ?? 'weka',
    CHART_DIR,
    '--namespace',
    o.namespace ?? 'weka-system',
    '--kube-version',
    o.kubeVersion ?? kubeVersion(),
    '--values',
    '-',
  ];
  const stdout = await runHelm(args, { stdin: stringify(o.values ?? {}) });
  return parseAllDocuments(stdout)
    .map((d) => d.toJS() as Manifest | null)
    .filter((m): m is Manifest => m !== null);
}

export function onlyOne(manifests: Manifest[], kind: string): Manifest {
  const found = manifests.filter((m) => m.kind === kind);
  if (found.length !== 1) throw new Error(`expected one ${kind}, the chart rendered ${found.length}`);
  return found[0]!;
}

/**
 * The operator's own ClusterRole: the one its ClusterRoleBinding names (the chart's other
 * ClusterRoles are aggregated into the built-in roles, for people).
 */
export function operatorClusterRole(manifests: Manifest[]): Manifest {
  const binding = onlyOne(manifests, 'ClusterRoleBinding') as Manifest & { roleRef: { name: string } };
  const role = manifests.find((m) => m.kind === 'ClusterRole' && m.metadata.name === binding.roleRef.name);
  if (!role) throw new Error(`the chart rendered no ClusterRole ${binding.roleRef.name}, which its binding names`);
  return role;
}

/** The username the apiserver gives the chart's ServiceAccount: what its admission policies match. */
export function serviceAccountUsername(manifests: Manifest[]): string {
  const account = onlyOne(manifests, 'ServiceAccount');
  return `system:serviceaccount:${account.metadata.namespace}:${account.metadata.name}`;
}

/** The chart's ValidatingAdmissionPolicies and their bindings. */
export function admissionPolicies(manifests: Manifest[]): Manifest[] {
  return manifests.filter(
    (m) => m.kind === 'ValidatingAdmissionPolicy' || m.kind === 'ValidatingAdmissionPolicyBinding',
  );
}

/** The chart's ValidatingAdmissionPolicy whose name ends in `-<suffix>`, and its binding. */
export function admissionPolicy(
  manifests: Manifest[],
  suffix: string,
): { policy: Manifest; binding: Manifest & { spec: { matchResources?: unknown } } } {
  const named = (kind: string) => {
    const found = manifests.filter((m) => m.kind === kind && m.metadata.name.endsWith(`-${suffix}`));
    if (found.length !== 1)
      throw new Error(`expected one ${kind} named *-${suffix}, the chart rendered ${found.length}`);
    return found[0]!;
  };
  return {
    policy: named('ValidatingAdmissionPolicy'),
    binding: named('ValidatingAdmissionPolicyBinding') as Manifest & { spec: { matchResources?: unknown } },
  };
}

/**
 * Creates the objects (as whoever `kc` authenticates) and returns what deletes them again, in
 * reverse order; an object already gone is no error.
 */
export async function createManifests(kc: KubeConfig, objects: Manifest[]): Promise<() => Promise<void>> {
  const api = KubernetesObjectApi.makeApiClient(kc);
  const created: Manifest[] = [];
  const remove = async () => {
    for (const o of created.reverse()) {
      await api.delete(o).catch((err: unknown) => {
        if ((err as { code?: number }).code !== 404) throw err;
      });
    }
  };
  try {
    for (const o of objects) {
      await api.create(o);
      created.push(o);
    }
  } catch (err) {
    await remove();
    throw err;
  }
  return remove;
}
