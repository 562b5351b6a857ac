// A chaos rollout: three prepared nodes sharing their drives, one standalone Weka cluster, the
// operator as a process (watcher + worker) that can be SIGKILLed and restarted, and N drive
// WekaContainers created the way a user would (no finalizer, no workflow: the watcher starts
// them), then waited for, deleted, and waited for again.
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { expect } from 'vitest';
import type { SimulatedDevice } from '../../../deploy/local/fake-nodes.js';
import type { WekaContainer } from '../../../src/api/index.js';
import { type ObjectRef } from '../../../src/lifecycle/names.js';
import {
  eventually,
  kubeConfig,
  removeNode,
  simulatorNodeDir,
  temporalAddress,
  temporalNamespace,
  uniqueName,
  uniqueNamespace,
} from '../harness.js';
import { checkAllDeleted, checkSteadyState, type InvariantScope, type ObservedState } from './invariants.js';
import { createContainerObject, sharedDrivesNode } from './operator.js';
import { startOperatorProcess, type OperatorProcess } from './operator-process.js';
import { createWekaCluster } from './simulator.js';
import { containerWorkflowId } from '../../../src/protocol.js';

const GROUP = { group: 'weka.weka.io', version: 'v1alpha1', plural: 'wekacontainers' };

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
    mode: 'drive',
    image: 'quay.io/weka.io/weka-in-container:test',
    nodeName: nodes[i % nodes.length],
    driveCores: twoCores ? 2 : 1,
    containerCapacity: twoCores ? 1600 : 1200,
    driveTypesRatio: { tlc: 1, qlc: 1 },
  };
}

/** Creates `count` drive containers as a user would, each with its standalone cluster's GUID in status. */
export async function createDriveContainers(env: ChaosEnvironment, count: number): Promise<ObjectRef[]> {
  const refs: ObjectRef[] = [];
  for (let i = 0; i < count; i++) {
    const ref = { namespace: env.namespace, name: `drive-${String(i).padStart(2, '0')}` };
    // A standalone container's cluster GUID comes from whoever formed the cluster (here: the test).
    await createContainerObject(ref, chaosContainerSpec(i, env.nodes), { clusterGUID: env.clusterGUID });
    refs.push(ref);
  }
  return refs;
}

export async function listContainers(namespace: string): Promise<WekaContainer[]> {
  return (
    (await kubeConfig()
      .makeApiClient(CustomObjectsApi)
      .listNamespacedCustomObject({ ...GROUP, namespace })) as { items: WekaContainer[] }
  ).items;
}

/** "Ready=12 Signing=3 ...", for progress lines and failure messages. */
export function phaseSummary(containers: readonly WekaContainer[]): string {
  const counts = new Map<string, number>();
  for (const c of containers) counts.set(c.status?.phase ?? 'none', (counts.get(c.status?.phase ?? 'none') ?? 0) + 1);
  return (
    [...counts]
      .sort()
      .map(([phase, n]) => `${phase}=${n}`)
      .join(' ') || 'none'
  );
}

/**
 * Polls once a second (a list of 30 objects every 100 ms would load the shared 2-core machine)
 * until `check` returns a value; prints `progress()` every 30 s and fails with it on timeout.
 */
export async function pollUntil<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs: number,
  progress: () => Promise<string>,
): Promise<T> {
  return eventually(what, check, timeoutMs, { intervalMs: 1_000, progress });
}

/** Waits until exactly the given containers exist and every one is Ready. */
export async function waitAllReady(refs: readonly ObjectRef[], timeoutMs: number): Promise<WekaContainer[]> {
  const namespace = refs[0]!.namespace;
  const names = refs.map((r) => r.name).sort();
  return pollUntil(
    `${refs.length} containers to be Ready`,
    async () => {
      const all = await listContainers(namespace);
      const ready = all.filter((c) => c.status?.phase === 'Ready' && c.metadata.deletionTimestamp === undefined);
      return JSON.stringify(all.map((c) => c.metadata.name).sort()) === JSON.stringify(names) &&
        ready.length === refs.length
        ? all
        : undefined;
    },
    timeoutMs,
    async () => phaseSummary(await listContainers(namespace)),
  );
}

export async function deleteContainers(refs: readonly ObjectRef[]): Promise<void> {
  const custom = kubeConfig().makeApiClient(CustomObjectsApi);
  for (const ref of refs) {
    await custom.deleteNamespacedCustomObject({ ...GROUP, ...ref }).catch((err: unknown) => {
      if ((err as { code?: number }).code !== 404) throw err;
    });
  }
}

/** Waits until none of `refs` exists any more. */
export async function waitGone(refs: readonly ObjectRef[], timeoutMs: number): Promise<void> {
  const namespace = refs[0]!.namespace;
  const names = new Set(refs.map((r) => r.name));
  await pollUntil(
    `${refs.length} containers to be gone`,
    async () => ((await listContainers(namespace)).some((c) => names.has(c.metadata.name!)) ? undefined : true),
    timeoutMs,
    async () => phaseSummary((await listContainers(namespace)).filter((c) => names.has(c.metadata.name!))),
  );
}

/** Waits until the operator removed every node's ssdproxy (the last teardown on a node does it). */
export async function waitProxiesGone(operatorNamespace: string, timeoutMs: number): Promise<void> {
  await pollUntil(
    'the ssdproxy containers to be gone',
    async () => ((await listContainers(operatorNamespace)).length === 0 ? true : undefined),
    timeoutMs,
    async () => (await listContainers(operatorNamespace)).map((c) => c.metadata.name).join(', '),
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
    return this.current !== undefined && this.current.child.exitCode === null && this.current.child.signalCode === null;
  }

  async kill(): Promise<void> {
    await this.current?.kill('SIGKILL');
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
    const impatient = setTimeout(() => void p.kill('SIGKILL'), 30_000);
    await p.kill('SIGTERM');
    clearTimeout(impatient);
    return p.child.exitCode === 0;
  }
}

const ARTIFACTS = fileURLToPath(new URL('../../../test-artifacts/chaos/', import.meta.url));

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

/** One chaos scenario's moving parts, for the checks every scenario ends with. */
export interface ChaosRun {
  scenario: string;
  env: ChaosEnvironment;
  operator: ChaosOperator;
}

/** Checks the steady-state invariants (keeping artifacts on failure) and returns what was observed. */
export async function expectSteadyState(run: ChaosRun): Promise<ObservedState> {
  const steady = await checkSteadyState(run.env.scope);
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
  await deleteContainers(refs);
  await waitGone(refs, 240_000);
  await waitProxiesGone(run.env.operatorNamespace, 60_000);
  const tookMs = Date.now() - started;
  await beforeCheck?.();
  const final = await checkAllDeleted(run.env.scope, steady);
  await expectNoViolations(final.violations, { ...run, observed: [steady, final.state] });
  expect(await run.operator.stop(), run.operator.outputTail()).toBe(true);
  return tookMs;
}
