// The local control plane: Temporal, etcd + kube-apiserver with kube-scheduler and
// kube-controller-manager, one kwok per fake node, the project's CRDs, and a Weka simulator behind
// every node. Used by the integration tests and the sandbox.
//
// Everything listens on 127.0.0.1 on ports chosen free at start; everything lives under one data
// directory, so two control planes side by side never clash. stop() ends every child process.
//
// Fault hooks for the chaos tests (restartApiserver, restartEtcd, killTemporal, stopNodeKubelet,
// startNodeKubelet) break one server the way users see it break and bring it back on the same port
// and data, so that clients reconnect by themselves; they run one at a time.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { KeepAliveKubeConfig } from '../../activities/kube/keep-alive.js';
import { installKwokExecCrd, startPodExecEnvironments, type PodExecEnvironments } from './pod-exec-env.js';
import { installCrds, installPriorityClass } from './crds.js';
import { startPodProcessWatch, type PodProcessWatch } from './pod-processes.js';
import { compactEtcd, startEtcd, type Etcd, type EtcdOptions } from './etcd.js';
import {
  apiserverUsable,
  kubeconfigYaml,
  startApiserver,
  type Apiserver,
  type ApiserverOptions,
} from './kube-apiserver.js';
import { startControllerManager, startScheduler, type KubeControllerOptions } from './kube-controllers.js';
import { createKubeletCert, createPki, type Pki } from './pki.js';
import { freePorts } from './ports.js';
import { waitUntilReady, type ServerProcess } from './processes.js';
import { FakeNodes, type NodeSpec } from './fake-nodes.js';
import { startTemporal, type TemporalServer } from './temporal.js';
import { ensureTools, type ToolPaths } from './tools.js';
import { messageOf } from '../../src/errors.js';

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
  /** The server binaries, when the caller has built them already (else they are built here if missing). */
  tools?: ToolPaths;
}

interface PortPlan {
  etcdClient: number;
  etcdPeer: number;
  apiserver: number;
  scheduler: number;
  controllerManager: number;
  temporal: number;
  temporalUi: number;
  temporalHttp: number;
  temporalMetrics: number;
}

/** What restartEtcd did. */
export interface EtcdRestart {
  /** The revision etcd was compacted at (with `compact`). */
  compactedRevision?: number;
  /** From stopping etcd until the apiserver served requests again. */
  downMs: number;
  /** From stopping etcd until etcd itself answered again. */
  etcdDownMs: number;
  /** The apiserver was restarted too: always with `compact`, else when it did not reconnect in time. */
  apiserverRestarted: boolean;
}

/** How long the apiserver is given to reconnect to a restarted etcd before it is restarted too. */
const APISERVER_RECONNECT_MS = 30_000;
/**
 * How long a SIGTERMed apiserver may take to exit before it is killed. It stops listening at once,
 * but its HTTP server can wait long after that for connections with open watches (kwok's) to end;
 * like the kubelet after a pod's grace period, restartApiserver kills it then.
 */
const APISERVER_STOP_GRACE_MS = 5_000;
/** Start-ups tried when a server finds its chosen port taken. */
const START_ATTEMPTS = 3;
const PORT_TAKEN = /address already in use/i;

export class ControlPlane {
  readonly timings: Record<string, number> = {};
  private etcd?: Etcd;
  private apiserver?: Apiserver;
  private scheduler?: ServerProcess;
  private controllerManager?: ServerProcess;
  private temporal?: TemporalServer;
  private nodes?: FakeNodes;
  private execEnvironments?: PodExecEnvironments;
  private podProcesses?: PodProcessWatch;
  private pki?: Pki;
  private etcdOptions?: EtcdOptions;
  private apiserverOptions?: ApiserverOptions;
  /** The fault hook running now, if any: hooks (and stop) wait for it. */
  private faults: Promise<unknown> = Promise.resolve();
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
  /** etcd's client URL (plain HTTP on loopback; the apiserver's storage). */
  get etcdUrl(): string {
    return `http://127.0.0.1:${this.ports.etcdClient}`;
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
    const tools = options.tools ?? (await ensureTools());
    for (let attempt = 1; ; attempt++) {
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
        return cp;
      } catch (err) {
        await cp.stop();
        // A port is free when chosen and bound by a server moments later: something else can take
        // it in between. Start again on ports chosen afresh.
        if (attempt < START_ATTEMPTS && PORT_TAKEN.test(messageOf(err))) {
          log(`control plane: a port was taken during start-up (attempt ${attempt}); starting again`);
          continue;
        }
        throw err;
      }
    }
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
    this.pki = pki;
    const etcdOptions: EtcdOptions = {
      binary: this.tools.etcd,
      dataDir: join(this.dataDir, 'etcd'),
      logDir: this.logDir,
      clientPort: this.ports.etcdClient,
      peerPort: this.ports.etcdPeer,
      deadlineMs: this.deadlineMs,
    };
    this.etcdOptions = etcdOptions;
    const kube = (async () => {
      this.etcd = await this.timed('etcd', () => startEtcd(etcdOptions));
      const apiserverOptions: ApiserverOptions = {
        binary: this.tools.kubeApiserver,
        pki,
        etcdUrl: this.etcd.url,
        port: this.ports.apiserver,
        certDir: join(this.dataDir, 'pki', 'apiserver-certs'),
        logDir: this.logDir,
        deadlineMs: this.deadlineMs,
        ...(auditPolicy !== undefined
          ? { audit: { policyFile: auditPolicyFile, logFile: this.apiserverAuditLogPath } }
          : {}),
      };
      this.apiserverOptions = apiserverOptions;
      this.apiserver = await this.timed('kube-apiserver', () => startApiserver(apiserverOptions));
      await writeFile(this.kubeconfigPath, await kubeconfigYaml(this.apiserverUrl, pki), { mode: 0o600 });
      await Promise.all([
        this.startKubeControllers(),
        withCrds ? this.timed('crds', () => installCrds(this.kubeConfig(), this.deadlineMs)) : undefined,
        withCrds ? installPriorityClass(this.kubeConfig()) : undefined,
        // Before any kwok starts: each watches the Exec objects that map pods' block volumes.
        this.timed('kwok exec crd', () => installKwokExecCrd(this.kubeConfig(), this.deadlineMs)),
      ]);
      this.execEnvironments = startPodExecEnvironments(this.kubeConfig(), () => undefined);
      this.podProcesses = startPodProcessWatch(this.kubeConfig(), {
        simulatorRoot: this.simulatorRoot,
        knownNode: (node) => existsSync(join(this.simulatorRoot, 'nodes', node)),
        log: (m) => this.log(m),
      });
    })();
    // Both settle before an error is thrown, so that stop() finds every server that was started.
    const servers = await Promise.allSettled([kube, this.startTemporal()]);
    const failed = servers.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
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

  private async startKubeControllers(): Promise<void> {
    const start = (
      name: string,
      run: (o: KubeControllerOptions) => Promise<ServerProcess>,
      binary: string,
      port: number,
    ): Promise<ServerProcess> =>
      this.timed(name, () =>
        run({
          binary,
          port,
          kubeconfigPath: this.kubeconfigPath,
          certDir: join(this.dataDir, 'pki', `${name}-certs`),
          logDir: this.logDir,
          deadlineMs: this.deadlineMs,
        }),
      );
    // Each is recorded as soon as it runs, so that stop() finds it even when the other failed.
    await Promise.all([
      start('kube-scheduler', startScheduler, this.tools.kubeScheduler, this.ports.scheduler).then(
        (p) => (this.scheduler = p),
      ),
      start(
        'kube-controller-manager',
        startControllerManager,
        this.tools.kubeControllerManager,
        this.ports.controllerManager,
      ).then((p) => (this.controllerManager = p)),
    ]);
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

  /**
   * Runs one fault hook after the one before it has finished (two hooks on one server at once would
   * start it twice); refused once the control plane is stopping.
   */
  private fault<T>(name: string, work: () => Promise<T>): Promise<T> {
    const run = this.faults.then(() => {
      if (this.stopped) throw new Error(`control plane is stopped: cannot ${name}`);
      return work();
    });
    this.faults = run.catch(() => undefined);
    return run;
  }

  private started<T>(value: T | undefined, what: string): T {
    if (value === undefined) throw new Error(`control plane is not started (no ${what})`);
    return value;
  }

  /** Waits until the apiserver serves requests (see apiserverUsable). */
  private async apiserverServing(deadlineMs: number): Promise<void> {
    const apiserver = this.started(this.apiserver, 'kube-apiserver');
    const pki = this.started(this.pki, 'certificates');
    await waitUntilReady(apiserver.process, () => apiserverUsable(apiserver.url, pki), deadlineMs);
  }

  private async restartApiserverProcess(): Promise<void> {
    const options = this.started(this.apiserverOptions, 'kube-apiserver');
    await this.apiserver?.process.stop(APISERVER_STOP_GRACE_MS);
    this.apiserver = await this.timed('kube-apiserver restart', () => startApiserver(options));
    await this.apiserverServing(this.deadlineMs);
  }

  /**
   * Stops the kube-apiserver (SIGTERM: its graceful shutdown, SIGKILL if it has not exited 5 s later)
   * and starts it again with the same options, port, certificates and etcd; resolves once it serves
   * requests. `downMs` runs from the SIGTERM until then. Open watches and connections are cut;
   * clients have to reconnect.
   */
  restartApiserver(): Promise<{ downMs: number }> {
    return this.fault('restart the apiserver', async () => {
      const started = Date.now();
      await this.restartApiserverProcess();
      return { downMs: Date.now() - started };
    });
  }

  /**
   * Stops etcd (SIGTERM) and starts it again on the same data directory and port, then waits until
   * the apiserver, which reconnects by itself, serves requests again (readyz, a read from etcd, and
   * the core resources' watch caches); if it has not within 30 s, the apiserver is restarted too
   * (`apiserverRestarted`). etcd closes its listeners at once but gives open watch streams (the
   * apiserver's) its request timeout, 7 s, before it exits: that is most of `etcdDownMs`.
   *
   * With `compact`, etcd is first compacted at its current revision (physically, see compactEtcd):
   * every older resourceVersion is gone. The apiserver is then restarted as well (`apiserverRestarted`),
   * because whether its running watch caches list anew after etcd comes back depends on timing (a
   * cache whose etcd watch resumes past the compacted revision keeps serving old resourceVersions
   * from memory); a new apiserver's caches start at the compacted revision, so a watch or exact list
   * from an older resourceVersion then gets 410 Gone ("too old resource version"), as clients meet
   * after a long etcd outage.
   */
  restartEtcd(o: { compact?: boolean } = {}): Promise<EtcdRestart> {
    return this.fault('restart etcd', async () => {
      const etcd = this.started(this.etcd, 'etcd');
      const options = this.started(this.etcdOptions, 'etcd');
      const compactedRevision = o.compact === true ? await compactEtcd(etcd.url) : undefined;
      const started = Date.now();
      await etcd.process.stop();
      this.etcd = await this.timed('etcd restart', () => startEtcd(options));
      const etcdDownMs = Date.now() - started;
      let apiserverRestarted = false;
      if (o.compact === true) {
        await this.restartApiserverProcess();
        apiserverRestarted = true;
      } else {
        try {
          await this.apiserverServing(Math.min(APISERVER_RECONNECT_MS, this.deadlineMs));
        } catch (err) {
          this.log(
            `control plane: the apiserver did not come back after etcd restarted, restarting it (${String(err)})`,
          );
          await this.restartApiserverProcess();
          apiserverRestarted = true;
        }
      }
      const downMs = Date.now() - started;
      this.log(`control plane: etcd restarted, apiserver serving again after ${downMs} ms`);
      return {
        ...(compactedRevision !== undefined ? { compactedRevision } : {}),
        downMs,
        etcdDownMs,
        apiserverRestarted,
      };
    });
  }

  /**
   * Kills the Temporal dev server at once (SIGKILL, like a crash: no graceful shutdown).
   * startTemporal() starts it again on the same ports and SQLite file.
   */
  killTemporal(): Promise<void> {
    return this.fault('kill Temporal', async () => {
      await this.temporal?.process.kill();
    });
  }

  /**
   * Stops a node's kwok (its kubelet), keeping the Node object and the node's simulator state. With
   * markNotReady, its Ready condition becomes Unknown (reason NodeStatusUnknown) through the status
   * subresource, as the node lifecycle controller would after the grace period (that controller
   * does not run here, see CONTROLLERS; nothing else changes the node, no taint is added).
   */
  stopNodeKubelet(name: string, o: { markNotReady?: boolean } = {}): Promise<void> {
    return this.fault(`stop the kubelet of ${name}`, async () => {
      await this.started(this.nodes, 'nodes').stopKubelet(name, o.markNotReady === true);
      this.log(
        `control plane: kubelet of node ${name} stopped${o.markNotReady === true ? ', node marked Unknown' : ''}`,
      );
    });
  }

  /** Starts a stopped node's kwok again (same state, shims, certificate) and waits until it is Ready. */
  startNodeKubelet(name: string): Promise<void> {
    return this.fault(`start the kubelet of ${name}`, async () => {
      const started = Date.now();
      await this.started(this.nodes, 'nodes').startKubelet(name);
      this.log(`control plane: kubelet of node ${name} running, node Ready in ${Date.now() - started} ms`);
    });
  }

  /** Creates a fake node that is Ready, runs pods, and answers exec through the Weka simulator. */
  async addNode(spec: NodeSpec): Promise<void> {
    if (!this.nodes) throw new Error('control plane is not started');
    const started = Date.now();
    await this.nodes.add(spec);
    this.log(`control plane: node ${spec.name} ready in ${Date.now() - started} ms`);
  }

  /** Stops a node's kwok (its "kubelet") and forgets the node; the Node object stays unless deleteObject is set. */
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
      this.scheduler,
      this.controllerManager,
      this.etcd?.process,
      ...(this.nodes?.processes() ?? []),
    ].filter((p): p is ServerProcess => p !== undefined);
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    // A fault hook under way would start a server again behind our back; let it finish first.
    await this.faults;
    // kwok and the controllers first (they talk to the apiserver), then the apiserver, then its etcd.
    await Promise.all([
      this.nodes?.stopAll(),
      this.scheduler?.stop(),
      this.controllerManager?.stop(),
      this.execEnvironments?.stop(),
      this.podProcesses?.stop(),
    ]);
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
    'scheduler',
    'controllerManager',
    'temporal',
    'temporalUi',
    'temporalHttp',
    'temporalMetrics',
  ];
  if (existsSync(file)) {
    const saved = JSON.parse(await readFile(file, 'utf8')) as PortPlan;
    const ports = keys.map((k) => saved[k]);
    if (ports.every((p) => typeof p === 'number') && (await allFree(ports))) return saved;
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
