// A fake node's drives made ready for drive sharing directly through its Weka simulator, without
// the operator: every device signed for proxy, then the node's weka.io/shared-drives annotation
// written (what a sign-drives WekaManualOperation leaves behind, minus the extended resources).
// For scripts such as the benchmarks, which start a ControlPlane themselves and need many nodes
// ready quickly; the integration tests do the same through the harness.
import { randomInt } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CoreV1Api, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import type { PhysicalDrive } from '../../src/allocation/index.js';
import { encodeSharedDrivesAnnotation, SHARED_DRIVES_ANNOTATION } from '../../src/annotations/index.js';
import { containerIdentityCall, driveAt, parseContainerIdentity, parseSignDriveList } from '../../src/weka/index.js';
import type { SimulatedDevice } from './fake-nodes.js';
import { simulatorOutput } from './weka-sim/server.js';

/**
 * Runs the simulator against one node's state (`<simulatorRoot>/nodes/<node>`), through the server
 * the control plane started beside its shims (`<simulatorRoot>/bin`) when it added its first node;
 * fails with the command's stderr unless it exits 0.
 */
export function simulate(simulatorRoot: string, node: string, ...args: string[]): Promise<string> {
  return simulatorOutput(join(simulatorRoot, 'bin'), ['--state', join(simulatorRoot, 'nodes', node), ...args]);
}

/** Signs every device of the node for proxy and publishes them in the node's annotation. */
export async function signSharedDrives(o: {
  kubeConfig: KubeConfig;
  simulatorRoot: string;
  node: string;
  devices: readonly SimulatedDevice[];
}): Promise<PhysicalDrive[]> {
  const drives: PhysicalDrive[] = [];
  for (const d of o.devices) {
    await simulate(o.simulatorRoot, o.node, '--', 'weka-sign-drive', 'sign', 'proxy', d.path);
    const info = driveAt(
      parseSignDriveList(await simulate(o.simulatorRoot, o.node, '--', 'weka-sign-drive', 'list', '-j')),
      d.path,
    );
    drives.push({
      physicalUUID: info.physicalUUID!,
      serial: info.serial,
      capacityGiB: info.capacityGiB,
      type: info.type,
      devicePath: d.path,
    });
  }
  await o.kubeConfig.makeApiClient(CoreV1Api).patchNode(
    {
      name: o.node,
      body: { metadata: { annotations: { [SHARED_DRIVES_ANNOTATION]: encodeSharedDrivesAnnotation(drives) } } },
    },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
  return drives;
}

/**
 * Creates a Weka cluster in the simulator (clusters are shared by every node) and returns its GUID:
 * what exists before the operator, a cluster whose backend container runs on `node` outside this
 * control plane's pods, at a management IP of the benchmarking range (198.18.0.0/15: data, never
 * dialled) and ports below every cluster range. Standalone containers join it through
 * simulatedClusterJoinIps.
 */
/** How the backend container of a cluster createSimulatedCluster made is named: `backend-<cluster name>`. */
export const SIMULATED_BACKEND_PREFIX = 'backend-';

/** The simulator root of each cluster createSimulatedCluster made in this process, by GUID. */
const simulatedClusterRoots = new Map<string, string>();

/** The root of the simulator a cluster of this process was made in, if it was. */
export function simulatedClusterRoot(clusterGUID: string): string | undefined {
  return simulatedClusterRoots.get(clusterGUID.toLowerCase());
}

/** How many port slots simulated backends choose from. */
export const SIMULATED_BACKEND_SLOTS = 20;

/**
 * The ports of the backend in `slot`: its Weka block and its agent port, the block after it, both
 * below every range the operator gives (standalone containers and clusters alike start higher).
 */
export function simulatedBackendPorts(slot: number): { port: number; agentPort: number } {
  const port = 30000 + slot * 200;
  return { port, agentPort: port + 100 };
}

export async function createSimulatedCluster(simulatorRoot: string, node: string, name: string): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const ip = `198.${18 + randomInt(2)}.${randomInt(256)}.${1 + randomInt(254)}`;
    const { port, agentPort } = simulatedBackendPorts(randomInt(SIMULATED_BACKEND_SLOTS));
    const backend = ['--in-pod', '--weka-name', `${SIMULATED_BACKEND_PREFIX}${name}`, '--weka-port', String(port)];
    const env = [...backend, '--agent-port', String(agentPort), '--management-ip', ip];
    try {
      await simulate(simulatorRoot, node, ...env, '--', 'weka', 'cluster', 'create', ip, '--host-ips', `${ip}:${port}`);
    } catch (err) {
      // Another backend on the node holds these ports: pick others.
      if (attempt < 20) continue;
      throw err;
    }
    await simulate(simulatorRoot, node, ...env, '--', 'weka', 'cluster', 'update', '--cluster-name', name);
    const identity = parseContainerIdentity(
      await simulate(
        simulatorRoot,
        node,
        ...env,
        '--',
        ...containerIdentityCall(`${SIMULATED_BACKEND_PREFIX}${name}`, agentPort).argv,
      ),
    );
    if (identity.state !== 'member')
      throw new Error(`the simulated cluster ${name} was not formed: ${JSON.stringify(identity)}`);
    simulatedClusterRoots.set(identity.clusterGUID, simulatorRoot);
    return identity.clusterGUID;
  }
}

/** The simulator's clusters and their containers, as its state holds them (not through a tool). */
export interface SimulatedClusters {
  clusters: { name: string; guid: string }[];
  containers: {
    containerId: number;
    clusterGUID: string;
    name: string;
    hostname: string;
    status: string;
    basePort?: number;
  }[];
  locals: { hostname: string; name: string; ip?: string }[];
}

export async function readSimulatedClusters(simulatorRoot: string): Promise<SimulatedClusters> {
  return readClustersFile(join(simulatorRoot, 'clusters'));
}

async function readClustersFile(dir: string): Promise<SimulatedClusters> {
  const text = await readFile(join(dir, 'clusters.json'), 'utf8').catch((err: unknown) => {
    if ((err as { code?: string }).code === 'ENOENT') return '{}';
    throw err;
  });
  const state = JSON.parse(text) as Partial<SimulatedClusters>;
  return { clusters: state.clusters ?? [], containers: state.containers ?? [], locals: state.locals ?? [] };
}

/** The state of the set that holds the cluster: the root's shared one, or a named set's (NodeSpec.simulatedClusters). */
async function clusterSetHolding(simulatorRoot: string, clusterGUID: string): Promise<SimulatedClusters> {
  const named = await readdir(join(simulatorRoot, 'cluster-sets')).catch(() => [] as string[]);
  for (const dir of [join(simulatorRoot, 'clusters'), ...named.map((n) => join(simulatorRoot, 'cluster-sets', n))]) {
    const state = await readClustersFile(dir);
    if (state.clusters.some((c) => c.guid === clusterGUID.toLowerCase())) return state;
  }
  return { clusters: [], containers: [], locals: [] };
}

/** `ip:port` of every container of the simulated cluster that has a management IP: its spec.joinIps. */
export async function simulatedClusterJoinIps(simulatorRoot: string, clusterGUID: string): Promise<string[]> {
  const state = await clusterSetHolding(simulatorRoot, clusterGUID);
  return state.containers.flatMap((c) => {
    const local = state.locals.find((l) => l.hostname === c.hostname && l.name === c.name);
    return c.clusterGUID === clusterGUID.toLowerCase() && local?.ip && c.basePort !== undefined
      ? [`${local.ip}:${c.basePort}`]
      : [];
  });
}
