// Fake nodes: a Node object, its own kwok acting as its kubelet, and a Weka simulator state
// directory holding the node's NVMe devices.
import { execFile } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CoreV1Api, type KubeConfig, type V1Node } from '@kubernetes/client-node';
import { startKwok } from './kwok.js';
import { messageOf } from '../../src/errors.js';
import { freePorts } from './ports.js';
import type { ServerProcess } from './processes.js';
import { simulatorMainPath, writeSimulatorShims } from './weka-sim/shims.js';

const run = promisify(execFile);

/** How many ports a node's kwok is started on before its start-up failure is final. */
const KWOK_START_ATTEMPTS = 3;

export interface SimulatedDevice {
  path: string;
  capacityGiB: number;
  type: 'TLC' | 'QLC';
  serial?: string;
}

export interface NodeSpec {
  name: string;
  labels?: Record<string, string>;
  /** NVMe devices the node's simulator starts with (unsigned). */
  devices?: SimulatedDevice[];
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

export class FakeNodes {
  private readonly kwoks = new Map<string, ServerProcess>();
  private shimsWritten?: Promise<void>;
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

  names(): string[] {
    return [...this.kwoks.keys()];
  }

  processes(): ServerProcess[] {
    return [...this.kwoks.values()];
  }

  async add(spec: NodeSpec): Promise<void> {
    if (this.kwoks.has(spec.name)) throw new Error(`node ${spec.name} already exists in this control plane`);
    this.shimsWritten ??= writeSimulatorShims(this.shimDir, simulatorMainPath());
    await this.shimsWritten;
    const stateDir = this.nodeStateDir(spec.name);
    await mkdir(stateDir, { recursive: true });
    if (spec.devices && spec.devices.length > 0) await this.initDevices(stateDir, spec.devices);
    await this.createNodeObject(spec);
    const cert = await this.o.kubeletCert(spec.name);
    const kwok = await this.startNodeKwok(spec.name, stateDir, cert);
    this.kwoks.set(spec.name, kwok);
    await this.waitReady(spec.name);
  }

  /**
   * Starts the node's kwok on a port that was free a moment ago. Another socket (any client
   * connection takes its local port from the same range) can bind it first; kwok then exits at
   * start-up with "address already in use" (its log's tail is in the error), and it is started
   * again on another port, up to KWOK_START_ATTEMPTS times.
   */
  private async startNodeKwok(
    name: string,
    stateDir: string,
    cert: { cert: string; key: string },
  ): Promise<ServerProcess> {
    for (let attempt = 1; ; attempt++) {
      const [port] = await freePorts(1);
      try {
        return await startKwok({
          binary: this.o.kwokBinary,
          nodeName: name,
          kubeconfigPath: this.o.kubeconfigPath,
          port: port!,
          tlsCert: cert.cert,
          tlsKey: cert.key,
          podCidr: `10.244.${this.kwoks.size % 250}.0/24`,
          shimDir: this.shimDir,
          simulatorState: stateDir,
          logDir: this.o.logDir,
          deadlineMs: this.o.deadlineMs,
        });
      } catch (err) {
        if (attempt >= KWOK_START_ATTEMPTS || !/address already in use/.test(messageOf(err))) throw err;
      }
    }
  }

  async remove(name: string, deleteObject: boolean): Promise<void> {
    await this.kwoks.get(name)?.stop();
    this.kwoks.delete(name);
    if (deleteObject) {
      try {
        await this.core.deleteNode({ name });
      } catch (err) {
        if ((err as { code?: number }).code !== 404) throw err;
      }
    }
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.kwoks.values()].map((k) => k.stop()));
    this.kwoks.clear();
  }

  private async initDevices(stateDir: string, devices: SimulatedDevice[]): Promise<void> {
    const args = devices.flatMap((d) => [
      '--device',
      `${d.path}:${d.capacityGiB}:${d.type}${d.serial ? `:${d.serial}` : ''}`,
    ]);
    try {
      await run(process.execPath, [simulatorMainPath(), '--state', stateDir, 'init-node', ...args]);
    } catch (err) {
      const e = err as { stderr?: string; message: string };
      throw new Error(`weka-sim init-node failed for ${stateDir}: ${e.stderr ?? e.message}`);
    }
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
