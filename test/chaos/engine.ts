// The chaos engine: rounds of pressure rollouts (more asked than the nodes hold, over several
// namespaces and Weka clusters, names deleted and created again) with storms of faults, each
// followed by a calm in which everything must settle and the invariants must hold; at the end, the
// apiserver's audit log and the simulator's command logs are replayed to check the invariants at
// every instant, not only at rest. Used by the short profile in npm test
// (test/integration/chaos/chaos-profile.test.ts), by the checker-teeth test, and by
// `npm run chaos -- --minutes N` (main.ts). Runs outside vitest: nothing here reads the harness.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { decodeSharedDrivesAnnotation, SHARED_DRIVES_ANNOTATION } from '../../src/annotations/index.js';
import type { PhysicalDrive } from '../../src/allocation/index.js';
import type { WekaCluster, WekaContainer } from '../../src/api/index.js';
import { driveAt, parseSignDriveList } from '../../src/weka/index.js';
import { eventually, mapLimit, sleep } from '../support/async.js';
import {
  createContainerObject,
  deleteContainers,
  deleteObject,
  listContainers,
  phaseSummary,
  readObject,
  WEKA_CLUSTERS,
  WEKA_CONTAINERS,
} from '../support/containers.js';
import { createWekaClusterObject, isReady } from '../support/containers.js';
import { parseContainerWrites, simLogReplayViolations, statusReplayViolations } from '../support/instant-invariants.js';
import {
  allDeletedViolations,
  explain,
  observe,
  steadyStateViolations,
  type ObservedState,
} from '../support/invariants.js';
import { seededRandom, type Random } from '../support/random.js';
import { simRetryingFaultsAt, simulatorLogAt } from '../support/sim-access.js';
import { FAULT_CLASSES, injectFault, type FaultClass, type FaultPace } from './faults.js';
import {
  nodeFill,
  roomLeft,
  PRESSURE_DEVICES,
  pressurePlan,
  SMALL_CONTAINER,
  statusText,
  unsettled,
  type PlannedContainer,
} from './pressure.js';
import { CHAOS_NODE_LABEL, ChaosWorld, type OperatorMain } from './world.js';

export interface ChaosOptions {
  /** New rounds start until this many minutes have passed; there is always one. */
  minutes: number;
  seed: number;
  /** The classes the storms draw from; none: a rollout under pressure without faults. */
  faults: readonly FaultClass[];
  /** At least this many faults per storm (a storm also lasts while its action runs). */
  faultsPerStorm: number;
  /** How long each fault lasts: brief in the short profile, longer in the long one. */
  pace?: FaultPace;
  operatorMain?: OperatorMain;
  nodes?: number;
  namespaces?: number;
  clusters?: number;
  /** What a round asks for, as a multiple of the nodes' capacity (at least 1.2). */
  demand?: number;
  /** How long a settle, a deletion, or a name's earlier object going away is waited for. */
  settleTimeoutMs?: number;
  /**
   * The names deleted and created again in the rollout are taken from the containers that are
   * Ready by then (waited for, up to READY_TO_RECREATE_MS whatever settleTimeoutMs says: a short
   * settle is for containers that never settle, while this wait is the scenario's precondition),
   * so that each deletion removes signed virtual drives from the devices; otherwise any, at any
   * moment, which may be before anything was signed for it.
   */
  recreateReady?: boolean;
  log: (message: string) => void;
}

/** How long a rollout with recreateReady waits for its first Ready container. */
const READY_TO_RECREATE_MS = 480_000;

export interface FaultCount {
  injected: number;
  survived: number;
}

export interface ChaosReport {
  seed: number;
  rounds: number;
  elapsedMs: number;
  faults: Record<FaultClass, FaultCount>;
  checks: {
    /** Times every container was found settled (Ready, or waiting for capacity its node lacks). */
    settled: number;
    steadyState: number;
    allDeleted: number;
    /** Containers the steady-state checks looked at, summed. */
    containersChecked: number;
    statusInstants: number;
    simulatorInstants: number;
  };
  /** Per round, the least full node's share of its capacity once the rollout settled. */
  fill: number[];
  /** Watches the operators were told had expired (410 Gone), from their logs. */
  watchExpiries: number;
  violations: string[];
  /** The kept data directory (every server's and operator's log, the audit log) when there were violations. */
  artifacts?: string;
}

/**
 * An error of the engine's own request that a fault caused, not an answer about the object: no
 * HTTP answer at all (a socket hung up, a connection refused), too many requests, or a 5xx.
 */
function transient(err: unknown): boolean {
  const code = (err as { code?: number }).code;
  return typeof code !== 'number' || code === 429 || code >= 500;
}

export async function runChaos(o: ChaosOptions): Promise<ChaosReport> {
  const started = Date.now();
  const random = seededRandom(o.seed);
  const world = await ChaosWorld.start({
    nodes: o.nodes ?? 3,
    namespaces: o.namespaces ?? 2,
    clusters: o.clusters ?? 2,
    operatorMain: o.operatorMain ?? 'source',
    log: o.log,
  });
  const run = new ChaosRun(world, o, random);
  let removeData = false;
  try {
    await run.rounds(started);
    await run.replayInstants();
    run.report.watchExpiries = world.watchExpiries();
    removeData = run.report.violations.length === 0;
    if (!removeData) {
      run.report.artifacts = world.dataDir;
      await writeFile(join(world.dataDir, 'chaos-report.json'), JSON.stringify(run.report, null, 1));
      await writeFile(join(world.dataDir, 'operators.log'), await world.operatorLogs());
    }
  } finally {
    await world.stop(removeData);
  }
  run.report.elapsedMs = Date.now() - started;
  return run.report;
}

class ChaosRun {
  readonly report: ChaosReport;
  private readonly kc;
  /** Capacity per node and physical UUID, and per node and device path, as signed. */
  private readonly capacities = new Map<string, number>();

  constructor(
    private readonly world: ChaosWorld,
    private readonly o: ChaosOptions,
    private readonly random: Random,
  ) {
    this.kc = world.cp.kubeConfig();
    this.report = {
      seed: o.seed,
      rounds: 0,
      elapsedMs: 0,
      faults: Object.fromEntries(FAULT_CLASSES.map((f) => [f, { injected: 0, survived: 0 }])) as Record<
        FaultClass,
        FaultCount
      >,
      checks: {
        settled: 0,
        steadyState: 0,
        allDeleted: 0,
        containersChecked: 0,
        statusInstants: 0,
        simulatorInstants: 0,
      },
      fill: [],
      watchExpiries: 0,
      violations: [],
    };
  }

  private log(message: string): void {
    this.o.log(`chaos [${Math.round((Date.now() - this.t0) / 1000)} s] ${message}`);
  }
  private t0 = Date.now();

  async rounds(started: number): Promise<void> {
    this.t0 = started;
    await this.readCapacities();
    for (let round = 1; ; round++) {
      this.report.rounds = round;
      const ok = await this.round(round);
      if (!ok) return;
      if (Date.now() - started >= this.o.minutes * 60_000) return;
    }
  }

  private async readCapacities(): Promise<void> {
    for (const node of this.world.nodes)
      for (const d of PRESSURE_DEVICES) {
        const info = driveAt(
          parseSignDriveList(
            await simRetryingFaultsAt(this.world.cp.simulatorRoot, node, 'weka-sign-drive', 'list', '-j'),
          ),
          d.path,
        );
        this.capacities.set(`${node} ${info.physicalUUID}`, info.capacityGiB);
        this.capacities.set(`${node} ${d.path}`, info.capacityGiB);
      }
  }

  /** One round; false when it found violations (the run stops there, keeping the evidence). */
  private async round(round: number): Promise<boolean> {
    const plan = pressurePlan({
      round,
      nodes: this.world.nodes,
      namespaces: this.world.namespaces,
      clusters: this.world.clusterGUIDs.length,
      demand: this.o.demand ?? 1.25,
      random: this.random,
    });
    const all = [...plan.fill, ...plan.topUp];
    this.log(
      `round ${round}: ${all.length} containers asking ${Math.round((this.o.demand ?? 1.25) * 100)} % of the capacity`,
    );

    // 1. The rollout (a wave asking what the nodes hold, a moment later a wave of small ones asking
    // the rest), names deleted and created again in the middle of it, under a storm.
    const cluster = { namespace: this.world.namespaces[0]!, name: `round-${round}` };
    const rollout = this.storm(`round ${round} rollout`, async () => {
      await this.createWekaCluster(cluster);
      await mapLimit(plan.fill, 4, (c) => this.create(c));
      await sleep(this.random.int(5_000, 15_000));
      await mapLimit(plan.topUp, 4, (c) => this.create(c));
      await this.recreate(await this.toRecreate(all));
    });
    if (!(await this.calm(round, 'rollout', await rollout, true))) return false;

    // 2. Part of it deleted: waiters take what is released. (The WekaCluster's members are its own:
    // it would create a deleted one again.)
    const live = await this.standalone();
    const doomed = this.random.sample(live, Math.floor(live.length * (0.3 + this.random.next() * 0.2)));
    const partial = this.storm(`round ${round} partial deletion`, async () => {
      await this.delete(doomed);
      await this.waitGone(doomed.map(keyOf));
    });
    if (!(await this.calm(round, 'partial deletion', await partial, false))) return false;

    // 3. Everything deleted: nothing may be left anywhere, the WekaCluster's Weka cluster neither.
    const rest = await this.standalone();
    const members = (await this.containers()).filter((c) => c.spec.cluster === cluster.name);
    const guid = (
      await eventually(
        `WekaCluster ${cluster.name} to be read`,
        async () => ({ read: await readObject<WekaCluster>(this.kc, WEKA_CLUSTERS, cluster) }),
        120_000,
        { intervalMs: 2_000 },
      )
    ).read?.status?.clusterGUID;
    if (guid) this.world.formedClusterGUIDs.push(guid);
    const teardown = this.storm(`round ${round} teardown`, async () => {
      await this.resending(`deleting WekaCluster ${cluster.name}`, () => deleteObject(this.kc, WEKA_CLUSTERS, cluster));
      await this.delete(rest);
      await this.waitGone([...rest, ...members].map(keyOf));
      await this.waitClusterGone(cluster);
      await this.waitProxiesGone();
    });
    const injected = await teardown;
    const state = await this.observeNow();
    const violations = allDeletedViolations(state);
    this.report.checks.allDeleted++;
    return this.judge(`round ${round} after deleting everything`, violations, state, injected);
  }

  /**
   * The world as it is now. A read that a fault's tail cuts (an apiserver whose storage is still
   * initialising after an etcd restart answers 429) is made again, for up to two minutes.
   */
  private observeNow(): Promise<ObservedState> {
    return eventually('the world to be observed', () => observe(this.world.scope, this.world.observed), 120_000, {
      intervalMs: 2_000,
    });
  }

  /** The classes still to draw before every class has been drawn again. */
  private deck: FaultClass[] = [];

  /** The next fault: every class once, in a random order, then again, so that a run covers them all. */
  private nextFault(): FaultClass {
    if (this.deck.length === 0) this.deck = this.random.sample(this.o.faults, this.o.faults.length);
    return this.deck.shift()!;
  }

  /** Runs `action` while injecting faults; returns the classes injected. */
  private async storm(what: string, action: () => Promise<void>): Promise<FaultClass[]> {
    const injected: FaultClass[] = [];
    let done = false;
    let failure: unknown;
    const acting = action().then(
      () => (done = true),
      (err: unknown) => {
        failure = err;
        done = true;
      },
    );
    const minMs = 45_000;
    const stormStarted = Date.now();
    while (
      this.o.faults.length > 0 &&
      (!done || injected.length < this.o.faultsPerStorm || Date.now() - stormStarted < minMs)
    ) {
      await sleep(this.random.int(1_000, 8_000));
      const fault = this.nextFault();
      this.report.faults[fault].injected++;
      injected.push(fault);
      const started = Date.now();
      try {
        this.log(
          `${what}: ${fault}: ${await injectFault(fault, this.world, this.random, this.o.pace ?? 'long')} (${Date.now() - started} ms)`,
        );
      } catch (err) {
        this.report.violations.push(
          `${what}: injecting ${fault} failed: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
    }
    await acting;
    if (failure)
      this.report.violations.push(`${what}: ${failure instanceof Error ? failure.message : String(failure)}`);
    return injected;
  }

  /** After a storm: every replica still runs, everything settles, the steady-state invariants hold. */
  private async calm(round: number, after: string, injected: FaultClass[], measureFill: boolean): Promise<boolean> {
    const what = `round ${round} after the ${after}`;
    const violations: string[] = [];
    for (const r of this.world.replicas)
      if (!r.process?.running()) violations.push(`${what}: operator replica ${r.name} is not running`);
    await this.world.apiserverAnswers();
    const settledIn = await this.settle(what).catch((err: unknown) => {
      violations.push(err instanceof Error ? err.message : String(err));
      return undefined;
    });
    const containers = await this.containers();
    if (settledIn !== undefined) {
      this.report.checks.settled++;
      this.log(`${what}: settled in ${settledIn} ms: ${phaseSummary(containers)}`);
    }
    if (measureFill) {
      const fill = nodeFill(containers, this.world.nodes);
      const least = Math.min(...fill.values());
      this.report.fill.push(least);
      this.log(`${what}: nodes ${[...fill].map(([n, f]) => `${n} ${(f * 100).toFixed(1)} %`).join(', ')}`);
      violations.push(...roomLeft(containers, fill));
    }
    const state = await this.observeNow();
    this.report.checks.steadyState++;
    this.report.checks.containersChecked += state.containers.length;
    return this.judge(what, [...violations, ...steadyStateViolations(state)], state, injected);
  }

  private judge(what: string, violations: string[], state: ObservedState, injected: FaultClass[]): boolean {
    if (violations.length === 0) {
      for (const f of injected) this.report.faults[f].survived++;
      return true;
    }
    this.report.violations.push(...violations.map((v) => `${what}: ${v}`), ...explain(violations, state));
    this.log(`${what}: ${violations.length} violations, the first: ${violations[0]}`);
    return false;
  }

  /** Waits until every container is Ready or waits for capacity its node does not have; returns how long it took. */
  private async settle(what: string): Promise<number> {
    const started = Date.now();
    let last: string[] = [];
    try {
      await eventually(
        `${what}: every container Ready or waiting for capacity its node lacks`,
        async () => {
          const drives = await this.sharedDrives();
          last = unsettled(await this.containers(), (node) => drives.get(node));
          return last.length === 0 ? true : undefined;
        },
        this.o.settleTimeoutMs ?? 480_000,
        { intervalMs: 2_000 },
      );
    } catch {
      throw new Error(`${what}: not settled after ${Date.now() - started} ms: ${last.slice(0, 12).join('; ')}`);
    }
    return Date.now() - started;
  }

  private async sharedDrives(): Promise<Map<string, PhysicalDrive[]>> {
    const core = this.kc.makeApiClient(CoreV1Api);
    const out = new Map<string, PhysicalDrive[]>();
    for (const node of (await core.listNode()).items) {
      const decoded = decodeSharedDrivesAnnotation(node.metadata?.annotations?.[SHARED_DRIVES_ANNOTATION] ?? '');
      if (decoded.ok) out.set(node.metadata!.name!, [...decoded.drives]);
    }
    return out;
  }

  /** Every container of the chaos namespaces; a list a fault's tail cuts is made again, as observeNow's reads. */
  private containers(): Promise<WekaContainer[]> {
    return eventually(
      'the containers to be listed',
      async () => (await Promise.all(this.world.namespaces.map((ns) => listContainers(this.kc, ns)))).flat(),
      120_000,
      { intervalMs: 2_000 },
    );
  }

  /** The containers the engine created itself, not a WekaCluster's members. */
  private async standalone(): Promise<WekaContainer[]> {
    return (await this.containers()).filter((c) => !c.spec.cluster);
  }

  /**
   * A WekaCluster over every chaos node, one small member on each: its members share the nodes
   * with the engine's containers, and its deletion must destroy the Weka cluster it formed.
   */
  private async createWekaCluster(ref: { namespace: string; name: string }): Promise<void> {
    await this.resending(`creating WekaCluster ${ref.name}`, () =>
      createWekaClusterObject(
        this.kc,
        ref,
        { [CHAOS_NODE_LABEL]: 'true' },
        { driveContainers: this.world.nodes.length, ...SMALL_CONTAINER },
      )
        .then(() => undefined)
        .catch((err: unknown) => {
          // Created by an attempt whose answer a fault cut.
          if ((err as { code?: number }).code !== 409) throw err;
        }),
    );
    this.log(`created WekaCluster ${ref.namespace}/${ref.name} with ${this.world.nodes.length} members`);
  }

  private async waitClusterGone(ref: { namespace: string; name: string }): Promise<void> {
    await eventually(
      `WekaCluster ${ref.namespace}/${ref.name} to be gone`,
      async () => ((await readObject(this.kc, WEKA_CLUSTERS, ref)) === null ? true : undefined),
      this.o.settleTimeoutMs ?? 480_000,
      { intervalMs: 2_000 },
    );
  }

  private async create(c: PlannedContainer): Promise<void> {
    const ref = { namespace: c.namespace, name: c.name };
    const guid = this.world.clusterGUIDs[c.cluster]!;
    await eventually(
      `${c.namespace}/${c.name} to be created`,
      async () => {
        try {
          await createContainerObject(this.kc, ref, c.spec, {
            clusterGUID: guid,
            simulatorRoot: this.world.cp.simulatorRoot,
          });
          return true;
        } catch (err) {
          const code = (err as { code?: number }).code;
          if (code === 409) {
            // The name's earlier object is still being torn down: it is created once that one is
            // gone. A live one is this very create, whose answer a fault cut.
            const now = await readObject<WekaContainer>(this.kc, WEKA_CONTAINERS, ref);
            if (!now || now.metadata.deletionTimestamp) return undefined;
            return true;
          }
          // A request the faults cut (a socket hung up while the apiserver restarts, a 5xx, a 429)
          // is the engine's own to send again; only a refusal of the object itself ends the run.
          if (transient(err)) return undefined;
          throw err;
        }
      },
      // Freeing the name is a teardown settling: it gets as long as a settle does.
      this.o.settleTimeoutMs ?? 600_000,
      { intervalMs: 2_000 },
    );
  }

  /** Up to three of the round's containers, to delete and create again (see recreateReady). */
  private async toRecreate(all: readonly PlannedContainer[]): Promise<PlannedContainer[]> {
    if (!this.o.recreateReady) return this.random.sample(all, Math.min(3, all.length));
    const ready = await eventually(
      'a container of the round to be Ready',
      async () => {
        const names = new Set((await this.containers()).filter(isReady).map(keyOf));
        const planned = all.filter((c) => names.has(`${c.namespace}/${c.name}`));
        return planned.length > 0 ? planned : undefined;
      },
      READY_TO_RECREATE_MS,
      { intervalMs: 2_000 },
    );
    return this.random.sample(ready, Math.min(3, ready.length));
  }

  /** Deletes each container, then creates it again under the same name as soon as the name is free. */
  private async recreate(containers: readonly PlannedContainer[]): Promise<void> {
    await Promise.all(
      containers.map(async (c) => {
        await sleep(this.random.int(2_000, 30_000));
        await this.resending(`deleting ${c.namespace}/${c.name}`, () =>
          deleteContainers(this.kc, [{ namespace: c.namespace, name: c.name }]),
        );
        this.log(`deleted ${c.namespace}/${c.name} to create it again`);
        await this.create(c);
      }),
    );
  }

  private async delete(containers: readonly WekaContainer[]): Promise<void> {
    await mapLimit(containers, 4, (c) =>
      this.resending(`deleting ${keyOf(c)}`, () =>
        deleteContainers(this.kc, [{ namespace: c.metadata.namespace!, name: c.metadata.name! }]),
      ),
    );
  }

  /** Sends the engine's own request again while a fault cuts it (see transient). */
  private async resending(what: string, request: () => Promise<unknown>): Promise<void> {
    await eventually(
      what,
      async () => {
        try {
          await request();
          return true;
        } catch (err) {
          if (transient(err)) return undefined;
          throw err;
        }
      },
      300_000,
      { intervalMs: 1_000, retryErrors: false },
    );
  }

  private async waitGone(keys: readonly string[]): Promise<void> {
    const wanted = new Set(keys);
    let left: WekaContainer[] = [];
    try {
      await eventually(
        `${keys.length} containers to be gone`,
        async () => {
          left = (await this.containers()).filter((c) => wanted.has(keyOf(c)));
          return left.length === 0 ? true : undefined;
        },
        this.o.settleTimeoutMs ?? 480_000,
        { intervalMs: 2_000 },
      );
    } catch {
      throw new Error(
        `${left.length} deleted containers are not gone: ${left
          .slice(0, 8)
          .map((c) => `${keyOf(c)} (${statusText(c)})`)
          .join('; ')}`,
      );
    }
  }

  private async waitProxiesGone(): Promise<void> {
    await eventually(
      'every ssdproxy to be gone',
      async () => ((await listContainers(this.kc, this.world.operatorNamespace)).length === 0 ? true : undefined),
      180_000,
      { intervalMs: 2_000 },
    );
  }

  /** The invariants at every instant: the audit log of WekaContainer writes and the simulator's logs, replayed. */
  async replayInstants(): Promise<void> {
    const audit = await readFile(this.world.cp.apiserverAuditLogPath, 'utf8').catch(() => '');
    const capacity = (key: string) => this.capacities.get(key) ?? this.world.faultNodeCapacities.get(key);
    const statuses = statusReplayViolations(parseContainerWrites(audit), (node, uuid) => capacity(`${node} ${uuid}`));
    const logs = await Promise.all(
      [...this.world.nodes, ...this.world.faultNodes].map(async (node) => ({
        node,
        entries: await simulatorLogAt(this.world.cp.simulatorRoot, node),
      })),
    );
    const devices = simLogReplayViolations(logs, (node, path) => capacity(`${node} ${path}`));
    this.report.checks.statusInstants = statuses.checks;
    this.report.checks.simulatorInstants = devices.checks;
    this.report.violations.push(
      ...statuses.violations.map((v) => `statuses at every instant: ${v}`),
      ...devices.violations.map((v) => `devices at every instant: ${v}`),
    );
    this.log(
      `replayed ${statuses.checks} status writes and ${devices.checks} device changes: ${statuses.violations.length + devices.violations.length} violations`,
    );
  }
}

const keyOf = (c: WekaContainer): string => `${c.metadata.namespace}/${c.metadata.name}`;

/** The report as the table the long profile prints. */
export function reportTable(r: ChaosReport): string {
  const rows = FAULT_CLASSES.map((f) => [f, String(r.faults[f].injected), String(r.faults[f].survived)]);
  const total = FAULT_CLASSES.reduce(
    (t, f) => ({ injected: t.injected + r.faults[f].injected, survived: t.survived + r.faults[f].survived }),
    { injected: 0, survived: 0 },
  );
  rows.push(['all', String(total.injected), String(total.survived)]);
  const width = Math.max(...rows.map((row) => row[0]!.length), 'fault class'.length);
  const line = (cells: string[]) => `${cells[0]!.padEnd(width)}  ${cells[1]!.padStart(8)}  ${cells[2]!.padStart(8)}`;
  const c = r.checks;
  return [
    `chaos: seed ${r.seed} (replay the choices with CHAOS_SEED=${r.seed}), ${r.rounds} rounds in ${Math.round(r.elapsedMs / 60_000)} min`,
    line(['fault class', 'injected', 'survived']),
    ...rows.map(line),
    `invariant checks: ${c.settled} settled, ${c.steadyState} steady-state (${c.containersChecked} containers), ${c.allDeleted} all-deleted, ${c.statusInstants} status writes and ${c.simulatorInstants} device changes replayed`,
    `least full node per round after its rollout: ${r.fill.map((f) => `${(f * 100).toFixed(1)} %`).join(', ')}`,
    `watches told 410 Gone: ${r.watchExpiries}`,
    `violations: ${r.violations.length}`,
    ...r.violations.slice(0, 40).map((v) => `  ${v}`),
    ...(r.artifacts ? [`evidence kept in ${r.artifacts}`] : []),
  ].join('\n');
}
