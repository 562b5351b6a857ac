// The local control plane: Temporal, etcd + kube-apiserver, one kwok per fake node, the project's
// CRDs, and a Weka simulator behind every node. Used by the integration tests and the sandbox.
//
// Everything listens on 127.0.0.1 on ports chosen free at start; everything lives under one data
// directory, so two control planes side by side never clash. stop() ends every child process.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { KeepAliveKubeConfig } from '../../activities/kube/keep-alive.js';
import { installCrds } from './crds.js';
import { startEtcd, type Etcd } from './etcd.js';
import { kubeconfigYaml, startApiserver, type Apiserver } from './kube-apiserver.js';
import { createKubeletCert, createPki } from './pki.js';
import { freePorts } from './ports.js';
import type { ServerProcess } from './processes.js';
import { FakeNodes, type NodeSpec } from './fake-nodes.js';
import { startTemporal, type TemporalServer } from './temporal.js';
import { ensureTools, type ToolPaths } from './tools.js';

export interface ControlPlaneOptions {
  /** Where every server keeps its state and log; a fresh temporary directory when absent. */
  dataDir?: string;
  /** Keep the data directory after stop() (always kept when dataDir was given). */
  keep?: boolean;
  temporalNamespace?: string;
  /** Per-server start-up deadline. */
  deadlineMs?: number;
  installCrds?: boolean;
  /** An audit policy (YAML) for the apiserver; its events go to `apiserverAuditLogPath`. */
  auditPolicy?: string;
  log?: (message: string) => void;
}

interface PortPlan {
  etcdClient: number;
  etcdPeer: number;
  apiserver: number;
  temporal: number;
  temporalUi: number;
  temporalHttp: number;
  temporalMetrics: number;
}

export class ControlPlane {
  readonly timings: Record<string, number> = {};
  private etcd?: Etcd;
  private apiserver?: Apiserver;
  private temporal?: TemporalServer;
  private nodes?: FakeNodes;
  private stopped = false;

  private constructor(
    readonly dataDir: string,
    private readonly removeDataDirOnStop: boolean,
    readonly tools: ToolPaths,
    private readonly ports: PortPlan,
    readonly temporalNamespace: string,
    private readonly deadlineMs: number,
    private readonly log: (message: string) => void,
  ) {}

  get kubeconfigPath(): string {
    return join(this.dataDir, 'kubeconfig');
  }
  get logDir(): string {
    return join(this.dataDir, 'logs');
  }
  /** The apiserver's audit events, one JSON object per line (only with the `auditPolicy` option). */
  get apiserverAuditLogPath(): string {
    return join(this.logDir, 'kube-apiserver-audit.log');
  }
  get apiserverUrl(): string {
    return `https://127.0.0.1:${this.ports.apiserver}`;
  }
  get temporalAddress(): string {
    return `127.0.0.1:${this.ports.temporal}`;
  }
  get temporalUiUrl(): string {
    return `http://127.0.0.1:${this.ports.temporalUi}`;
  }
  /** Root of the Weka simulator's state: nodes/<node>/ per node and the shared clusters/. */
  get simulatorRoot(): string {
    return join(this.dataDir, 'weka-sim');
  }

  kubeConfig(): KubeConfig {
    const kc = new KeepAliveKubeConfig();
    kc.loadFromFile(this.kubeconfigPath);
    return kc;
  }

  static async start(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
    const log = options.log ?? ((m: string) => process.stderr.write(`${m}\n`));
    const tools = await ensureTools();
    const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'weka-controlplane-')));
    await mkdir(join(dataDir, 'logs'), { recursive: true });
    const ports = await planPorts(dataDir);
    const cp = new ControlPlane(
      dataDir,
      options.dataDir === undefined && options.keep !== true,
      tools,
      ports,
      options.temporalNamespace ?? 'default',
      options.deadlineMs ?? 90_000,
      log,
    );
    try {
      await cp.boot(options.installCrds ?? true, options.auditPolicy);
    } catch (err) {
      await cp.stop();
      throw err;
    }
    return cp;
  }

  private async timed<T>(name: string, work: () => Promise<T>): Promise<T> {
    const started = Date.now();
    const result = await work();
    this.timings[name] = Date.now() - started;
    this.log(`control plane: ${name} ready in ${this.timings[name]} ms`);
    return result;
  }

  private async boot(withCrds: boolean, auditPolicy: string | undefined): Promise<void> {
    const started = Date.now();
    const pki = await this.timed('certificates', () => createPki(join(this.dataDir, 'pki')));
    const auditPolicyFile = join(this.dataDir, 'audit-policy.yaml');
    if (auditPolicy !== undefined) await writeFile(auditPolicyFile, auditPolicy);
    const kube = (async () => {
      this.etcd = await this.timed('etcd', () =>
        startEtcd({
          binary: this.tools.etcd,
          dataDir: join(this.dataDir, 'etcd'),
          logDir: this.logDir,
          clientPort: this.ports.etcdClient,
          peerPort: this.ports.etcdPeer,
          deadlineMs: this.deadlineMs,
        }),
      );
      this.apiserver = await this.timed('kube-apiserver', () =>
        startApiserver({
          binary: this.tools.kubeApiserver,
          pki,
          etcdUrl: this.etcd!.url,
          port: this.ports.apiserver,
          certDir: join(this.dataDir, 'pki', 'apiserver-certs'),
          logDir: this.logDir,
          deadlineMs: this.deadlineMs,
          ...(auditPolicy !== undefined
            ? { audit: { policyFile: auditPolicyFile, logFile: this.apiserverAuditLogPath } }
            : {}),
        }),
      );
      await writeFile(this.kubeconfigPath, await kubeconfigYaml(this.apiserverUrl, pki), { mode: 0o600 });
      if (withCrds) await this.timed('crds', () => installCrds(this.kubeConfig(), this.deadlineMs));
    })();
    await Promise.all([kube, this.startTemporal()]);
    this.nodes = new FakeNodes({
      kwokBinary: this.tools.kwok,
      kubeConfig: this.kubeConfig(),
      kubeconfigPath: this.kubeconfigPath,
      simulatorRoot: this.simulatorRoot,
      logDir: this.logDir,
      deadlineMs: this.deadlineMs,
      kubeletCert: (node) => createKubeletCert(pki, node),
    });
    this.timings.total = Date.now() - started;
    this.log(`control plane: up in ${this.timings.total} ms (data: ${this.dataDir})`);
  }

  /** Starts (or restarts) Temporal on the same ports and SQLite file. */
  async startTemporal(): Promise<void> {
    if (this.temporal && !this.temporal.process.hasExited()) return;
    this.temporal = await this.timed('temporal', () =>
      startTemporal({
        binary: this.tools.temporal,
        dbFile: join(this.dataDir, 'temporal.sqlite'),
        port: this.ports.temporal,
        uiPort: this.ports.temporalUi,
        httpPort: this.ports.temporalHttp,
        metricsPort: this.ports.temporalMetrics,
        namespace: this.temporalNamespace,
        logDir: this.logDir,
        deadlineMs: this.deadlineMs,
      }),
    );
  }

  async stopTemporal(): Promise<void> {
    await this.temporal?.process.stop();
  }

  /** Creates a fake node that is Ready, runs pods, and answers exec through the Weka simulator. */
  async addNode(spec: NodeSpec): Promise<void> {
    if (!this.nodes) throw new Error('control plane is not started');
    const started = Date.now();
    await this.nodes.add(spec);
    this.log(`control plane: node ${spec.name} ready in ${Date.now() - started} ms`);
  }

  /** Stops a node's kwok (its "kubelet"); the Node object stays unless deleteObject is set. */
  async removeNode(name: string, deleteObject = true): Promise<void> {
    await this.nodes?.remove(name, deleteObject);
  }

  nodeNames(): string[] {
    return this.nodes?.names() ?? [];
  }

  processes(): ServerProcess[] {
    return [
      this.temporal?.process,
      this.apiserver?.process,
      this.etcd?.process,
      ...(this.nodes?.processes() ?? []),
    ].filter((p): p is ServerProcess => p !== undefined);
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    // kwok first (it talks to the apiserver), then the apiserver, then its etcd.
    await this.nodes?.stopAll();
    await Promise.all([this.temporal?.process.stop(), this.apiserver?.process.stop()]);
    await this.etcd?.process.stop();
    if (this.removeDataDirOnStop) await rm(this.dataDir, { recursive: true, force: true });
  }
}

// Ports are remembered in the data directory so a kept control plane restarts on the same ones
// (etcd's member URLs and the UI address stay valid); taken ones are chosen afresh.
async function planPorts(dataDir: string): Promise<PortPlan> {
  const file = join(dataDir, 'ports.json');
  const keys: (keyof PortPlan)[] = [
    'etcdClient',
    'etcdPeer',
    'apiserver',
    'temporal',
    'temporalUi',
    'temporalHttp',
    'temporalMetrics',
  ];
  if (existsSync(file)) {
    const saved = JSON.parse(await readFile(file, 'utf8')) as PortPlan;
    if (await allFree(keys.map((k) => saved[k]))) return saved;
  }
  const fresh = await freePorts(keys.length);
  const plan = Object.fromEntries(keys.map((k, i) => [k, fresh[i]])) as unknown as PortPlan;
  await writeFile(file, JSON.stringify(plan, null, 2));
  return plan;
}

async function allFree(ports: number[]): Promise<boolean> {
  const { createServer } = await import('node:net');
  for (const port of ports) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(false));
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (!ok) return false;
  }
  return true;
}
