// What an integration or chaos test needs from its local control plane. The integration project's
// global setup (test/integration/global-setup.ts) boots one per test file that may run at a time
// and hands them over through vitest's provide/inject; a file uses the one of its worker, so two
// files running side by side never share a control plane. Only for code that runs under vitest: the modules the
// benchmarks share (async.ts, containers.ts, operator-process.ts) take what they need as arguments.
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { CoreV1Api, type KubeConfig, type V1Node } from '@kubernetes/client-node';
import { KeepAliveKubeConfig } from '../../activities/kube/keep-alive.js';
import { inject } from 'vitest';
import type { NodeSpec } from '../../deploy/local/fake-nodes.js';
import type { ProvidedControlPlane } from '../integration/control-planes.js';
import type { OperatorControlPlane } from './operator-process.js';
import { eventually } from './async.js';

/** This worker's control plane: vitest numbers the workers running at once 1, 2, ... (VITEST_POOL_ID). */
function plane(): ProvidedControlPlane {
  const planes = inject('controlPlanes');
  const poolId = Number(process.env.VITEST_POOL_ID ?? '1');
  const found = planes[poolId - 1];
  if (found === undefined)
    throw new Error(`worker ${poolId} has no control plane: the global setup started ${planes.length}`);
  return found;
}

const kubeConfigs = new Map<string, KeepAliveKubeConfig>();

/**
 * The control plane's kubeconfig, one per test file: every client made from it shares its kept-alive
 * connections. A fresh one per call would read the file again and open a new TLS connection for
 * each of the thousands of reads the tests' polling makes.
 */
export function kubeConfig(): KubeConfig {
  const path = plane().kubeconfigPath;
  let kc = kubeConfigs.get(path);
  if (kc === undefined) {
    kc = new KeepAliveKubeConfig();
    kc.loadFromFile(path);
    kubeConfigs.set(path, kc);
  }
  return kc;
}

export function temporalAddress(): string {
  return plane().temporalAddress;
}

export function temporalNamespace(): string {
  return plane().temporalNamespace;
}

export function temporalUiUrl(): string {
  return plane().temporalUiUrl;
}

/** Where an operator process finds the servers, and where its log goes. */
export function operatorControlPlane(): OperatorControlPlane {
  return {
    kubeconfigPath: plane().kubeconfigPath,
    temporalAddress: temporalAddress(),
    temporalNamespace: temporalNamespace(),
    logDir: plane().logDir,
  };
}

/**
 * The control plane's CA and the apiserver's serving certificate (for 127.0.0.1), which a test's
 * own webhook server may serve with: the apiserver trusts it through the CA.
 */
export function controlPlaneCertificates(): { caCert: string; cert: string; key: string } {
  const dir = join(dirname(plane().kubeconfigPath), 'pki');
  return { caCert: join(dir, 'ca.crt'), cert: join(dir, 'apiserver.crt'), key: join(dir, 'apiserver.key') };
}

/** The workflow code bundled once for the run (WEKA_WORKFLOW_BUNDLE of every operator a test starts). */
export function workflowBundlePath(): string {
  return inject('workflowBundlePath');
}

/** deploy/operator/main.ts bundled once for the run: the script of every operator process a test starts from source. */
export function operatorBundlePath(): string {
  return inject('operatorBundlePath');
}

/** The root of every fake node's Weka simulator state. */
export function simulatorRoot(): string {
  return plane().simulatorRoot;
}

/** A node's Weka simulator state directory. */
export function simulatorNodeDir(node: string): string {
  return join(simulatorRoot(), 'nodes', node);
}

export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

/** A fresh namespace, for one test; left behind for a person to look at after a failure. */
export async function uniqueNamespace(prefix: string): Promise<string> {
  const name = uniqueName(prefix);
  await kubeConfig()
    .makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name } } });
  return name;
}

/**
 * Creates a ResourceQuota in the namespace and waits until the quota controller has computed it:
 * before that, the apiserver refuses every pod the quota covers.
 */
export async function createResourceQuota(
  namespace: string,
  name: string,
  hard: Record<string, string>,
): Promise<void> {
  const core = kubeConfig().makeApiClient(CoreV1Api);
  await core.createNamespacedResourceQuota({ namespace, body: { metadata: { name }, spec: { hard } } });
  await eventually(`quota ${namespace}/${name} to be computed`, async () => {
    const quota = await core.readNamespacedResourceQuota({ namespace, name });
    return Object.keys(hard).every((r) => quota.status?.hard?.[r] !== undefined) ? true : undefined;
  });
}

async function control(method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${plane().controlUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = (await res.json()) as { error?: string };
  if (!res.ok) throw new Error(`control plane ${method} ${path}: ${json.error ?? res.status}`);
  return json;
}

/** The nodes this test file added; the module is loaded once per file. */
const nodesAdded = new Set<string>();

/** Creates a fake node (Node object, its kwok, its simulated devices) and waits until Ready. */
export async function addNode(spec: NodeSpec): Promise<void> {
  await control('POST', '/nodes', spec);
  nodesAdded.add(spec.name);
}

/** Creates a Node object with nothing behind it (no kwok, no devices), removed with the others. */
export async function addBareNode(node: V1Node): Promise<void> {
  await kubeConfig().makeApiClient(CoreV1Api).createNode({ body: node });
  nodesAdded.add(node.metadata!.name!);
}

/**
 * Removes every node this file added, with its ledger. The next files on the control plane see
 * only their own nodes' ports and capacity: a file that leaves containers allocated on purpose
 * calls this after its operator stopped, so no teardown reacts to the nodes going.
 */
export async function removeNodesAdded(): Promise<void> {
  for (const name of nodesAdded) {
    await removeNode(name);
    nodesAdded.delete(name);
  }
}

export async function removeNode(name: string, opts: { keepObject?: boolean } = {}): Promise<void> {
  await control('DELETE', `/nodes/${encodeURIComponent(name)}${opts.keepObject ? '?keepObject=true' : ''}`);
}

/** Stops the node's kwok (its pods and heartbeats); with markNotReady its Ready condition turns Unknown. */
export async function stopNodeKubelet(name: string, o: { markNotReady?: boolean } = {}): Promise<void> {
  await control('POST', `/nodes/${encodeURIComponent(name)}/kubelet/stop${o.markNotReady ? '?markNotReady=true' : ''}`);
}

export async function startNodeKubelet(name: string): Promise<void> {
  await control('POST', `/nodes/${encodeURIComponent(name)}/kubelet/start`);
}

export async function stopTemporal(): Promise<void> {
  await control('POST', '/temporal/stop');
}

export async function startTemporal(): Promise<{ startupMs: number }> {
  return (await control('POST', '/temporal/start')) as { startupMs: number };
}
