// Fake nodes: a Node object, its own kwok acting as its kubelet, and a Weka simulator state
// directory holding the node's NVMe devices. A node's kwok can be stopped and started again (a
// kubelet that goes away and comes back) without losing the node.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CoreV1Api, PatchStrategy, setHeaderOptions, type KubeConfig, type V1Node } from '@kubernetes/client-node';
import { kwokStartRetryable, startKwok } from './kwok.js';
import { messageOf } from '../../src/errors.js';
import { freePorts } from './ports.js';
import type { ServerProcess } from './processes.js';
import { initNodeDevices, type InitialDevice } from './weka-sim/node-devices.js';
import { buildSimulator } from './weka-sim/bundle.js';
import { simulatorOutput, startSimulatorServer, type SimulatorServer } from './weka-sim/server.js';
import { CLUSTERS_DIR_FILE } from './weka-sim/node-state.js';
import { writeSimulatorShims } from './weka-sim/shims.js';

/** How many ports a node's kwok is started on before its start-up failure is final. */
const KWOK_START_ATTEMPTS = 3;

/**
 * A device as the node starts with it: unsigned, empty and without partitions unless said
 * otherwise. A root disk is a device with a partition mounted at "/".
 */
export interface SimulatedDevice extends InitialDevice {
  path: string;
  capacityGiB: number;
  type: 'TLC' | 'QLC';
  serial?: string;
  /** lsblk's MODEL and VENDOR (default "SIM NVMe TLC" or "SIM NVMe QLC", and "SIM"). */
  model?: string;
  vendor?: string;
  /** Non-Weka partitions, e.g. { name: '/dev/sda1', fstype: 'ext4', mountpoint: '/' }. */
  partitions?: { name: string; fstype?: string | null; mountpoint?: string | null }[];
  /** A filesystem directly on the disk, and where it is mounted. */
  fstype?: string | null;
  mountpoint?: string | null;
  /** Content with no recognised signature: signing it needs --allow-non-empty-device. */
  dataPresent?: boolean;
  /**
   * Devices built on the disk, which lsblk lists among its children: e.g. { name:
   * '/dev/mapper/vg0-pvc--1', type: 'lvm' }, the LVM volume behind a block-mode PersistentVolume
   * a pod uses; or an md array ({ name: '/dev/md0', type: 'raid1' }). Signing refuses a held disk.
   */
  holders?: { name: string; type: string }[];
}

export interface NodeSpec {
  name: string;
  labels?: Record<string, string>;
  /** The devices the node's simulator starts with (unsigned). */
  devices?: SimulatedDevice[];
  /**
   * The set of simulated Weka clusters the node's commands see, by name: nodes that give the same
   * name share one, and nodes that give none share the control plane's. A `weka` command reads
   * and writes its whole set, so a benchmark over many nodes gives each group of nodes its own.
   */
  simulatedClusters?: string;
}

export interface FakeNodesOptions {
  kwokBinary: string;
  kubeConfig: KubeConfig;
  kubeconfigPath: string;
  simulatorRoot: string;
  logDir: string;
  deadlineMs: number;
  kubeletCert: (node: string) => Promise<{ cert: string; key: string }>;
}

/** What a node keeps while its kwok is stopped, to start it again as the same kubelet. */
interface NodeRecord {
  stateDir: string;
  cert: { cert: string; key: string };
  podCidr: string;
  /** The port its kwok last listened on (the Node's kubelet endpoint). */
  port?: number;
  /** Its kwok, while it runs. */
  kwok?: ServerProcess | undefined;
}

/** What the node lifecycle controller writes when a kubelet stops posting status. */
export const NODE_STATUS_UNKNOWN = {
  reason: 'NodeStatusUnknown',
  message: 'Kubelet stopped posting node status.',
} as const;

export class FakeNodes {
  private readonly nodes = new Map<string, NodeRecord>();
  /**
   * The simulator's server, the shims that reach it, and the simulator's CLI bundled beside them
   * (for a person at the sandbox), once per control plane.
   */
  private simulator?: Promise<SimulatorServer>;
  private readonly core: CoreV1Api;

  constructor(private readonly o: FakeNodesOptions) {
    this.core = o.kubeConfig.makeApiClient(CoreV1Api);
  }

  get shimDir(): string {
    return join(this.o.simulatorRoot, 'bin');
  }

  nodeStateDir(node: string): string {
    return join(this.o.simulatorRoot, 'nodes', node);
  }

  /** Every node of this control plane, its kubelet running or stopped. */
  names(): string[] {
    return [...this.nodes.keys()];
  }

  /** Whether the node's kwok (its kubelet) runs. */
  kubeletRunning(name: string): boolean {
    const kwok = this.nodes.get(name)?.kwok;
    return kwok !== undefined && !kwok.hasExited();
  }

  processes(): ServerProcess[] {
    return [...this.nodes.values()].flatMap((n) => (n.kwok ? [n.kwok] : []));
  }

  async add(spec: NodeSpec): Promise<void> {
    if (this.nodes.has(spec.name)) throw new Error(`node ${spec.name} already exists in this control plane`);
    if (spec.simulatedClusters !== undefined && !/^[a-z0-9][a-z0-9-]*$/.test(spec.simulatedClusters))
      throw new Error(`node ${spec.name}: simulatedClusters must be a lower-case name, got ${spec.simulatedClusters}`);
    this.simulator ??= (async () => {
      await buildSimulator(this.shimDir);
      const server = await startSimulatorServer(this.shimDir);
      await writeSimulatorShims(this.shimDir);
      return server;
    })();
    await this.simulator;
    const stateDir = this.nodeStateDir(spec.name);
    await mkdir(stateDir, { recursive: true });
    // A node added again keeps its state (its disks), but sees the set it is added with now.
    const clustersDirFile = join(stateDir, CLUSTERS_DIR_FILE);
    if (spec.simulatedClusters === undefined) await rm(clustersDirFile, { force: true });
    else await writeFile(clustersDirFile, `${join(this.o.simulatorRoot, 'cluster-sets', spec.simulatedClusters)}\n`);
    if (spec.devices && spec.devices.length > 0) await this.initDevices(stateDir, spec.devices);
    await this.createNodeObject(spec);
    const record: NodeRecord = {
      stateDir,
      cert: await this.o.kubeletCert(spec.name),
      podCidr: `10.244.${this.nodes.size % 250}.0/24`,
    };
    this.nodes.set(spec.name, record);
    try {
      await this.runKubelet(spec.name, record);
    } catch (err) {
      // A kwok that started but never made the node Ready is not left running untracked.
      await record.kwok?.stop();
      this.nodes.delete(spec.name);
      throw err;
    }
  }

  /**
   * Stops the node's kwok, keeping the Node object, the simulator state and what is needed to start
   * it again (startKubelet). With markNotReady, the Node's Ready condition becomes Unknown, as the
   * node lifecycle controller (absent here) would set it once the kubelet's status went stale.
   */
  async stopKubelet(name: string, markNotReady = false): Promise<void> {
    const record = this.record(name);
    await record.kwok?.stop();
    record.kwok = undefined;
    if (markNotReady) await this.markReadyUnknown(name);
  }

  /** Starts a stopped node's kwok again (same state, shims, certificate) and waits until Ready. */
  async startKubelet(name: string): Promise<void> {
    const record = this.record(name);
    if (this.kubeletRunning(name)) return this.waitReady(name);
    await this.runKubelet(name, record);
  }

  private record(name: string): NodeRecord {
    const record = this.nodes.get(name);
    if (!record) throw new Error(`node ${name} is not a node of this control plane`);
    return record;
  }

  private async runKubelet(name: string, record: NodeRecord): Promise<void> {
    const previousPort = record.port;
    const { process: kwok, port } = await this.startNodeKwok(name, record);
    record.kwok = kwok;
    record.port = port;
    // kwok writes its port into the Node's status only when it makes the node Ready; a node still
    // Ready from before (not marked otherwise while stopped) must learn the new port here, or the
    // apiserver's exec would go to the old one.
    if (previousPort !== undefined && previousPort !== port) {
      await this.core.patchNodeStatus(
        { name, body: { status: { daemonEndpoints: { kubeletEndpoint: { Port: port } } } } },
        setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
      );
    }
    await this.waitReady(name);
  }

  /**
   * Starts the node's kwok on its previous port if it had one, else on a port that was free a
   * moment ago. Another socket (any client connection takes its local port from the same range)
   * can bind it first; kwok then exits at start-up with "address already in use" (its log's tail
   * is in the error), and it is started again on another port, up to KWOK_START_ATTEMPTS times.
   * So is a kwok that crashed in its own start-up (kwokStartRetryable).
   */
  private async startNodeKwok(name: string, record: NodeRecord): Promise<{ process: ServerProcess; port: number }> {
    for (let attempt = 1; ; attempt++) {
      const port = attempt === 1 && record.port !== undefined ? record.port : (await freePorts(1))[0]!;
      try {
        const proc = await startKwok({
          binary: this.o.kwokBinary,
          nodeName: name,
          kubeconfigPath: this.o.kubeconfigPath,
          port,
          tlsCert: record.cert.cert,
          tlsKey: record.cert.key,
          podCidr: record.podCidr,
          shimDir: this.shimDir,
          simulatorState: record.stateDir,
          logDir: this.o.logDir,
          deadlineMs: this.o.deadlineMs,
        });
        return { process: proc, port };
      } catch (err) {
        if (attempt >= KWOK_START_ATTEMPTS || !kwokStartRetryable(messageOf(err))) throw err;
      }
    }
  }

  /** The Ready condition to Unknown through the status subresource, the others left as they are. */
  private async markReadyUnknown(name: string): Promise<void> {
    const node = await this.core.readNode({ name });
    const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
    const now = rfc3339(new Date());
    await this.core.patchNodeStatus(
      {
        name,
        body: {
          status: {
            conditions: [
              {
                type: 'Ready',
                status: 'Unknown',
                ...NODE_STATUS_UNKNOWN,
                lastHeartbeatTime: ready?.lastHeartbeatTime ? rfc3339(ready.lastHeartbeatTime) : now,
                lastTransitionTime:
                  ready?.status === 'Unknown' && ready.lastTransitionTime ? rfc3339(ready.lastTransitionTime) : now,
              },
            ],
          },
        },
      },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
  }

  async remove(name: string, deleteObject: boolean): Promise<void> {
    await this.nodes.get(name)?.kwok?.stop();
    this.nodes.delete(name);
    if (deleteObject) {
      try {
        await this.core.deleteNode({ name });
      } catch (err) {
        if ((err as { code?: number }).code !== 404) throw err;
      }
    }
  }

  /** Stops every node's kwok, then the simulator's server. */
  async stopAll(): Promise<void> {
    await Promise.all(this.processes().map((k) => k.stop()));
    this.nodes.clear();
    await (await this.simulator?.catch(() => undefined))?.close();
  }

  private async initDevices(stateDir: string, devices: SimulatedDevice[]): Promise<void> {
    await initNodeDevices(devices, (command, args) =>
      simulatorOutput(this.shimDir, ['--state', stateDir, command, ...args]),
    );
  }

  private async createNodeObject(spec: NodeSpec): Promise<void> {
    const body: V1Node = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name: spec.name,
        labels: { 'kubernetes.io/hostname': spec.name, 'kubernetes.io/os': 'linux', type: 'kwok', ...spec.labels },
        annotations: { 'kwok.x-k8s.io/node': 'fake' },
      },
    };
    try {
      await this.core.createNode({ body });
    } catch (err) {
      // A kept control plane restarts with its Node objects already there.
      if ((err as { code?: number }).code !== 409) throw err;
    }
  }

  private async waitReady(name: string): Promise<void> {
    const started = Date.now();
    while (Date.now() - started < this.o.deadlineMs) {
      const node = await this.core.readNode({ name });
      if (node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(
      `node ${name} did not become Ready within ${this.o.deadlineMs} ms; see ${this.o.logDir}/kwok-${name}.log`,
    );
  }
}

/** A Kubernetes time: RFC 3339 in UTC, whole seconds. */
function rfc3339(t: Date | string): string {
  return new Date(t).toISOString().replace(/\.\d+Z$/, 'Z');
}
