// The chaos engine's world: a local control plane of its own (so that restarting its apiserver,
// etcd or Temporal touches no other test), with the apiserver's audit log of every WekaContainer
// write; fake nodes whose simulator records over-commit instead of refusing it; two operator
// replicas, as production runs them, each reaching the apiserver and Temporal through TCP proxies
// on 127.0.0.1 that the engine can cut and slow.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { ControlPlane } from '../../deploy/local/control-plane.js';
import { writeWorkflowBundle } from '../../deploy/operator/workflow-bundle.js';
import { bundleOperatorSource, type SourceBundle } from '../../deploy/operator/operator-bundle.js';
import { freePorts } from '../../deploy/local/ports.js';
import { createSimulatedCluster, signSharedDrives, simulate } from '../../deploy/local/shared-drives.js';
import { startTcpProxy, type TcpProxy } from '../../deploy/local/tcp-proxy.js';
import { eventually } from '../support/async.js';
import { ensureNamespace } from '../support/containers.js';
import { CONTAINER_WRITES_AUDIT_POLICY } from '../support/instant-invariants.js';
import type { InvariantScope, ObservedWorld } from '../support/invariants.js';
import {
  BROKEN_OPERATOR_SOURCE,
  OPERATOR_SOURCE,
  spawnOperator,
  type OperatorProcess,
} from '../support/operator-process.js';
import { PRESSURE_DEVICES } from './pressure.js';

export type OperatorMain = 'source' | 'broken';

const OPERATOR_MAINS: Record<OperatorMain, string> = {
  source: OPERATOR_SOURCE,
  broken: BROKEN_OPERATOR_SOURCE,
};

/** One operator replica's place: its proxies, and the process (or two, mid-replacement) behind them. */
export class ReplicaSlot {
  process: OperatorProcess | undefined;
  /** Every process this slot ran, for the failure artifacts and the 410 count. */
  readonly all: OperatorProcess[] = [];
  private started = 0;

  constructor(
    readonly name: string,
    readonly apiProxy: TcpProxy,
    readonly temporalProxy: TcpProxy,
    private readonly world: ChaosWorld,
  ) {}

  /** Starts a process behind this slot's proxies and waits until it is ready. */
  async spawn(): Promise<OperatorProcess> {
    const [httpPort] = await freePorts(1);
    const p = spawnOperator(
      {
        kubeconfigPath: join(this.world.cp.dataDir, `kubeconfig-${this.name}`),
        temporalAddress: `127.0.0.1:${this.temporalProxy.port}`,
        temporalNamespace: this.world.cp.temporalNamespace,
        logDir: this.world.cp.logDir,
      },
      {
        logName: `operator-${this.name}-${++this.started}`,
        script: this.world.operatorBundle.path,
        env: {
          WEKA_TASK_QUEUE: 'weka-drives',
          WEKA_OPERATOR_NAMESPACE: this.world.operatorNamespace,
          WEKA_HTTP_PORT: String(httpPort),
          WEKA_HTTP_ADDRESS: '127.0.0.1',
          LOG_LEVEL: 'info',
          WEKA_WORKFLOW_BUNDLE: join(this.world.cp.dataDir, WORKFLOW_BUNDLE),
        },
      },
    );
    this.all.push(p);
    await p.waitReady(180_000);
    return p;
  }

  async start(): Promise<void> {
    this.process = await this.spawn();
  }

  /** SIGKILL, like a crashed pod. */
  async kill(): Promise<void> {
    await this.process?.kill();
    this.process = undefined;
  }

  /** A Deployment's rolling update: the new process first, ready, then SIGTERM to the old one. */
  async replace(): Promise<void> {
    const old = this.process;
    this.process = await this.spawn();
    await old?.stop(30_000);
  }

  async stop(): Promise<void> {
    await Promise.all(this.all.filter((p) => p.running()).map((p) => p.stop(30_000)));
    this.process = undefined;
  }
}

/** The label of the chaos nodes, which the rounds' WekaClusters select. */
export const CHAOS_NODE_LABEL = 'weka.weka.io/chaos';

/** The workflow bundle's file in the world's data directory. */
const WORKFLOW_BUNDLE = 'workflow-bundle.js';

export class ChaosWorld {
  readonly replicas: ReplicaSlot[] = [];
  clusterGUIDs: string[] = [];
  /** The Weka clusters the rounds' WekaClusters formed; none may outlive its WekaCluster. */
  formedClusterGUIDs: string[] = [];
  /**
   * Nodes a fault brought and took away again (device-claim-deleted), and their devices' capacities
   * by `node path` and `node physicalUUID`: the replay checks their logs and statuses at every
   * instant too.
   */
  readonly faultNodes: string[] = [];
  readonly faultNodeCapacities = new Map<string, number>();

  private constructor(
    readonly cp: ControlPlane,
    readonly nodes: string[],
    readonly namespaces: string[],
    readonly operatorNamespace: string,
    /** The operator's source (operatorMain), bundled once: every replica the faults restart runs it. */
    readonly operatorBundle: SourceBundle,
  ) {}

  static async start(o: {
    nodes: number;
    namespaces: number;
    clusters: number;
    operatorMain: OperatorMain;
    log: (m: string) => void;
  }): Promise<ChaosWorld> {
    const dataDir = await mkdtemp(join(tmpdir(), 'weka-chaos-'));
    // Bundled once, beside the boot: every replica the faults restart loads them (WEKA_WORKFLOW_BUNDLE).
    const [started, bundled, workflows] = await Promise.allSettled([
      ControlPlane.start({
        dataDir,
        auditPolicy: CONTAINER_WRITES_AUDIT_POLICY,
        log: () => undefined,
      }),
      bundleOperatorSource(OPERATOR_MAINS[o.operatorMain]),
      writeWorkflowBundle(join(dataDir, WORKFLOW_BUNDLE)),
    ]);
    if (started.status === 'rejected' || bundled.status === 'rejected' || workflows.status === 'rejected') {
      if (started.status === 'fulfilled') await started.value.stop();
      if (bundled.status === 'fulfilled') await bundled.value.remove();
      await rm(dataDir, { recursive: true, force: true });
      throw [started, bundled, workflows].find((r) => r.status === 'rejected')!.reason;
    }
    const cp = started.value;
    const operatorBundle = bundled.value;
    o.log(`chaos: control plane up in ${cp.timings.total} ms (${dataDir})`);
    const nodes = Array.from({ length: o.nodes }, (_, i) => `chaos-node-${i}`);
    const namespaces = Array.from({ length: o.namespaces }, (_, i) => `chaos-tenant-${i}`);
    const world = new ChaosWorld(cp, nodes, namespaces, 'weka-operator-system', operatorBundle);
    try {
      await world.prepare(o.clusters);
    } catch (err) {
      await world.stop(true);
      throw err;
    }
    return world;
  }

  get dataDir(): string {
    return this.cp.dataDir;
  }

  get observed(): ObservedWorld {
    return { kubeConfig: this.cp.kubeConfig(), simulatorRoot: this.cp.simulatorRoot };
  }

  get scope(): InvariantScope {
    return {
      nodes: this.nodes,
      devices: PRESSURE_DEVICES.map((d) => d.path),
      clusterGUIDs: this.clusterGUIDs,
      formedClusterGUIDs: this.formedClusterGUIDs,
      namespaces: this.namespaces,
      operatorNamespace: this.operatorNamespace,
    };
  }

  private async prepare(clusters: number): Promise<void> {
    const kc = this.cp.kubeConfig();
    for (const name of this.nodes)
      await this.cp.addNode({ name, devices: PRESSURE_DEVICES, labels: { [CHAOS_NODE_LABEL]: 'true' } });
    for (const node of this.nodes) {
      await signSharedDrives({ kubeConfig: kc, simulatorRoot: this.cp.simulatorRoot, node, devices: PRESSURE_DEVICES });
      // The checker, not the simulator, must catch an over-commit.
      await simulate(this.cp.simulatorRoot, node, 'overcommit', 'record');
    }
    for (let i = 0; i < clusters; i++)
      this.clusterGUIDs.push(await createSimulatedCluster(this.cp.simulatorRoot, this.nodes[0]!, `chaos-cluster-${i}`));
    for (const ns of [...this.namespaces, this.operatorNamespace]) await ensureNamespace(kc, ns);

    const kubeconfig = await readFile(this.cp.kubeconfigPath, 'utf8');
    const apiPort = Number(new URL(this.cp.apiserverUrl).port);
    const temporalPort = Number(this.cp.temporalAddress.split(':')[1]);
    for (const name of ['a', 'b']) {
      const apiProxy = await startTcpProxy({ targetPort: apiPort, name: `apiserver-${name}` });
      const temporalProxy = await startTcpProxy({ targetPort: temporalPort, name: `temporal-${name}` });
      await writeFile(
        join(this.cp.dataDir, `kubeconfig-${name}`),
        kubeconfig.replaceAll(this.cp.apiserverUrl, `https://127.0.0.1:${apiProxy.port}`),
        { mode: 0o600 },
      );
      this.replicas.push(new ReplicaSlot(name, apiProxy, temporalProxy, this));
    }
    await Promise.all(this.replicas.map((r) => r.start()));
  }

  /** The operator processes' output (every process so far), for the failure artifacts. */
  async operatorLogs(): Promise<string> {
    const parts = this.replicas.flatMap((r) => r.all.map((p) => `=== ${p.logPath}\n${p.output()}`));
    return parts.join('\n');
  }

  /** How many times an operator's watch was told its resourceVersion is gone (410) and listed again. */
  watchExpiries(): number {
    return this.replicas
      .flatMap((r) => r.all)
      .reduce((n, p) => n + (p.output().match(/watch expired \(410 Gone\)/g)?.length ?? 0), 0);
  }

  /** Waits until the apiserver answers the engine (it talks to it directly, not through a proxy). */
  async apiserverAnswers(timeoutMs = 120_000): Promise<void> {
    const core = this.cp.kubeConfig().makeApiClient(CoreV1Api);
    await eventually(
      'the apiserver to answer',
      async () => ((await core.listNode()).items ? true : undefined),
      timeoutMs,
    );
  }

  async stop(removeData: boolean): Promise<void> {
    await Promise.all(this.replicas.map((r) => r.stop().catch(() => undefined)));
    await Promise.all(this.replicas.flatMap((r) => [r.apiProxy.close(), r.temporalProxy.close()]));
    await this.cp.stop();
    await this.operatorBundle.remove();
    if (removeData) await rm(this.cp.dataDir, { recursive: true, force: true });
  }
}
