// A chaos rollout: three prepared nodes sharing their drives, one standalone Weka cluster, the
// operator as a process (watcher + worker) that can be SIGKILLed and restarted, and N drive
// WekaContainers created the way a user would (no finalizer, no workflow: the watcher starts
// them), then waited for, deleted, and waited for again.
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { expect } from 'vitest';
import type { SimulatedDevice } from '../../deploy/local/fake-nodes.js';
import type { WekaContainer } from '../../src/api/index.js';
import { type ObjectRef } from '../../src/api/names.js';
import { eventually } from './async.js';
import { createDriveContainers, deleteContainers, listContainers, laggardSummary, phaseSummary } from './containers.js';
import {
  kubeConfig,
  removeNode,
  simulatorNodeDir,
  simulatorRoot,
  temporalAddress,
  temporalNamespace,
  uniqueName,
  uniqueNamespace,
} from './harness.js';
import { checkAllDeleted, checkSteadyState, type InvariantScope, type ObservedState } from './invariants.js';
import { sharedDrivesNode, startOperatorProcess, waitGone, waitProxiesGone } from './operator.js';
import type { OperatorProcess } from './operator-process.js';
import { createWekaCluster } from './simulator.js';
import { containerWorkflowId } from '../../src/protocol.js';

/**
 * How often the chaos tests poll the apiserver: once a second, as a list of 30 objects every
 * 100 ms (eventually's default) would load the shared 2-core machine.
 */
export const CHAOS_POLL_MS = 1_000;

/** Per node: 15360 GiB of TLC and 15360 of QLC, so ten containers per node use under half of each. */
export const CHAOS_DEVICES: SimulatedDevice[] = [
  { path: '/dev/nvme0n1', capacityGiB: 7680, type: 'TLC' },
  { path: '/dev/nvme1n1', capacityGiB: 7680, type: 'TLC' },
  { path: '/dev/nvme2n1', capacityGiB: 15360, type: 'QLC' },
];

export interface ChaosEnvironment {
  nodes: string[];
  clusterGUID: string;
  /** Where the drive containers live. */
  namespace: string;
  operatorNamespace: string;
  scope: InvariantScope;
}

export async function prepareChaosEnvironment(scenario: string, nodeCount = 3): Promise<ChaosEnvironment> {
  const nodes: string[] = [];
  for (let i = 0; i < nodeCount; i++) nodes.push(await sharedDrivesNode(CHAOS_DEVICES, `${scenario}-${i}`));
  const clusterGUID = await createWekaCluster(nodes[0]!, uniqueName(scenario));
  const namespace = await uniqueNamespace(scenario);
  const operatorNamespace = await uniqueNamespace(`${scenario}-op`);
  return {
    nodes,
    clusterGUID,
    namespace,
    operatorNamespace,
    scope: {
      nodes,
      devices: CHAOS_DEVICES.map((d) => d.path),
      clusterGUIDs: [clusterGUID],
      namespaces: [namespace],
      operatorNamespace,
    },
  };
}

export async function removeChaosNodes(env: ChaosEnvironment | undefined): Promise<void> {
  for (const node of env?.nodes ?? [])
    await removeNode(node).catch((err: unknown) => console.warn(`could not remove node ${node}: ${String(err)}`));
}

/**
 * The i-th container's spec: round robin over the nodes; every third container on a node has two
 * drive cores (TLC 2 x 400 + QLC 2 x 400 GiB), the others one (TLC 600 + QLC 600 GiB).
 */
export function chaosContainerSpec(i: number, nodes: readonly string[]): Record<string, unknown> {
  const twoCores = Math.floor(i / nodes.length) % 3 === 2;
  return {
    nodeName: nodes[i % nodes.length],
    driveCores: twoCores ? 2 : 1,
    containerCapacity: twoCores ? 1600 : 1200,
    driveTypesRatio: { tlc: 1, qlc: 1 },
  };
}

/** Creates `count` drive containers as a user would, one after the other, each with its standalone cluster's GUID in status. */
export async function createChaosContainers(env: ChaosEnvironment, count: number): Promise<ObjectRef[]> {
  // A standalone container's cluster GUID comes from whoever formed the cluster (here: the test).
  return createDriveContainers(
    kubeConfig(),
    env.namespace,
    Array.from({ length: count }, (_, i) => ({
      name: `drive-${String(i).padStart(2, '0')}`,
      spec: chaosContainerSpec(i, env.nodes),
    })),
    { clusterGUID: env.clusterGUID },
  );
}

/** Waits until exactly the given containers exist and every one is Ready. */
export async function waitAllReady(refs: readonly ObjectRef[], timeoutMs: number): Promise<WekaContainer[]> {
  const kc = kubeConfig();
  const namespace = refs[0]!.namespace;
  const names = refs.map((r) => r.name).sort();
  return eventually(
    `${refs.length} containers to be Ready`,
    async () => {
      const all = await listContainers(kc, namespace);
      const ready = all.filter((c) => c.status?.phase === 'Ready' && c.metadata.deletionTimestamp === undefined);
      return JSON.stringify(all.map((c) => c.metadata.name).sort()) === JSON.stringify(names) &&
        ready.length === refs.length
        ? all
        : undefined;
    },
    timeoutMs,
    {
      intervalMs: CHAOS_POLL_MS,
      progress: async () => {
        const all = await listContainers(kc, namespace);
        return `${phaseSummary(all)}; ${laggardSummary(all)}`;
      },
    },
  );
}

/** The operator process of one chaos test, restartable after a SIGKILL, on its own task queue. */
export class ChaosOperator {
  private current: OperatorProcess | undefined;
  private readonly env: Record<string, string>;
  /** How long each start took until its worker ran (ms). */
  readonly startTimes: number[] = [];

  constructor(operatorNamespace: string, scenario: string) {
    this.env = {
      WEKA_TASK_QUEUE: uniqueName(scenario),
      WEKA_OPERATOR_NAMESPACE: operatorNamespace,
      WEKA_HTTP_PORT: '0',
    };
  }

  /** The output of the processes killed so far (the current one's is added by fullOutput). */
  private earlierOutput = '';

  async start(): Promise<void> {
    if (this.running()) throw new Error('the operator is already running');
    if (this.current) this.earlierOutput += `${this.current.output()}\n--- operator restarted ---\n`;
    const started = Date.now();
    this.current = await startOperatorProcess(this.env);
    this.startTimes.push(Date.now() - started);
  }

  running(): boolean {
    return this.current?.running() ?? false;
  }

  async kill(): Promise<void> {
    await this.current?.kill();
  }

  /** The current (or last) process's log lines at pino level `minLevel` (40 warn, 50 error) or above. */
  logLines(minLevel: number): string[] {
    return (this.current?.output() ?? '')
      .split('\n')
      .filter((line) => Number(/"level":(\d+)/.exec(line)?.[1] ?? 0) >= minLevel);
  }

  /** Every process's output, in order, for failure artifacts. */
  fullOutput(): string {
    return this.earlierOutput + (this.current?.output() ?? '');
  }

  /** The last lines of the current (or last) process's output, for failure messages. */
  outputTail(chars = 4000): string {
    return this.current?.output().slice(-chars) ?? '';
  }

  /** Stops cleanly (SIGTERM; SIGKILL if that takes over 30 s) and tells whether the process exited 0. */
  async stop(): Promise<boolean> {
    const p = this.current;
    if (!p || !this.running()) return false;
    return (await p.stop(30_000)) === 0;
  }
}

const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/chaos/', import.meta.url));

/**
 * Asserts there is no violation; when there are some, first keeps what explains them under
 * test-artifacts/chaos/<scenario>/: every node's commands.log, the operator's output across all
 * its restarts, the observations, and the Temporal history of every container named in them.
 */
export async function expectNoViolations(
  violations: readonly string[],
  ctx: { scenario: string; env: ChaosEnvironment; operator: ChaosOperator; observed: ObservedState[] },
): Promise<void> {
  if (violations.length === 0) return;
  const dir = join(ARTIFACTS, `${ctx.scenario}-${Date.now()}`);
  try {
    await mkdir(dir, { recursive: true });
    for (const node of ctx.env.nodes)
      await copyFile(join(simulatorNodeDir(node), 'commands.log'), join(dir, `${node}.commands.log`)).catch(
        () => undefined,
      );
    await writeFile(join(dir, 'operator.log'), ctx.operator.fullOutput());
    await writeFile(join(dir, 'observed.json'), JSON.stringify(ctx.observed, null, 1));
    const text = violations.join('\n');
    const named = ctx.observed
      .flatMap((o) => o.containers)
      .filter((c) => text.includes(`${c.metadata.namespace}/${c.metadata.name}`));
    const connection = await Connection.connect({ address: temporalAddress() });
    try {
      const client = new Client({ connection, namespace: temporalNamespace() });
      for (const uid of new Set(named.map((c) => c.metadata.uid!))) {
        const history = await client.workflow
          .getHandle(containerWorkflowId(uid))
          .fetchHistory()
          .catch((err: unknown) => ({ error: String(err) }));
        await writeFile(join(dir, `history-${uid}.json`), JSON.stringify(history, null, 1));
      }
    } finally {
      await connection.close();
    }
  } catch (err) {
    console.warn(`could not keep every failure artifact in ${dir}: ${String(err)}`);
  }
  expect([...violations, `(artifacts: ${dir})`]).toEqual([]);
}

/** The integration suite's control plane, as the invariant checker reads it. */
const harnessWorld = () => ({ kubeConfig: kubeConfig(), simulatorRoot: simulatorRoot() });

/** One chaos scenario's moving parts, for the checks every scenario ends with. */
export interface ChaosRun {
  scenario: string;
  env: ChaosEnvironment;
  operator: ChaosOperator;
}

/** Checks the steady-state invariants (keeping artifacts on failure) and returns what was observed. */
export async function expectSteadyState(run: ChaosRun): Promise<ObservedState> {
  const steady = await checkSteadyState(run.env.scope, harnessWorld());
  await expectNoViolations(steady.violations, { ...run, observed: [steady.state] });
  return steady.state;
}

/**
 * Deletes `refs`, waits until they and every ssdproxy are gone, runs `beforeCheck` (e.g. to stop
 * injected faults), checks that nothing is left anywhere, and stops the operator cleanly.
 * Returns how long the deletion took (ms).
 */
export async function expectCleanTeardown(
  run: ChaosRun,
  refs: readonly ObjectRef[],
  steady: ObservedState,
  beforeCheck?: () => Promise<void>,
): Promise<number> {
  const started = Date.now();
  await deleteContainers(kubeConfig(), refs);
  await waitGone(refs, 240_000, { intervalMs: CHAOS_POLL_MS });
  await waitProxiesGone(run.env.operatorNamespace, run.env.scope.nodes, 60_000, { intervalMs: CHAOS_POLL_MS });
  const tookMs = Date.now() - started;
  await beforeCheck?.();
  const final = await checkAllDeleted(run.env.scope, harnessWorld(), steady);
  await expectNoViolations(final.violations, { ...run, observed: [steady, final.state] });
  expect(await run.operator.stop(), run.operator.outputTail()).toBe(true);
  return tookMs;
}
