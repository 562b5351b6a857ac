// Benchmark 3, the baseline side by side: the same N allocations over M nodes, all requested at
// once, serialized three ways on one control plane:
//
// - "mutex": the product's node mutex workflows, run by the operator process (worker only). The
//   benchmark sends each container's allocate request the way the sendMutexRequest activity does
//   (signal-with-start to `weka-node/<node>`); the mutex decides the allocations queued on it
//   together with the product's allocateForContainers.
// - "lease": the seed's design, implemented only here (lease-lock.ts), no Temporal: one async task
//   per container, like one reconcile per container, that acquires the node's Lease, reads the
//   container, the node's shared drives and every container on the node, runs the same pure
//   allocator, writes status.allocations conditional on the resourceVersion it read, and releases.
// - "floor": the product's allocateForContainers called in this process under one in-memory lock
//   per node, batching what is queued as the mutex does (floor-allocations.ts): the mutex's own
//   apiserver work with nothing around it, which no design can undercut.
//
// Each side has its own nodes and namespace, so each side's write-to-write reads only its writes.
// Only allocation is serialized either way, so this pair is the like-for-like comparison; the
// full rollout (benchmark 2) adds proxies, pods and Weka calls around it. Nodes here are bare Node
// objects with a shared-drives annotation (no kwok, no simulator): nothing is exec'd.
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { CoordinationV1Api, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { WekaApi } from '../../activities/kube/weka-api.js';
import { allocateVirtualDrives, type PhysicalDrive } from '../../src/allocation/index.js';
import {
  decodeSharedDrivesAnnotation,
  encodeSharedDrivesAnnotation,
  SHARED_DRIVES_ANNOTATION,
} from '../../src/annotations/index.js';
import { FIELD_MANAGER } from '../../src/api/names.js';
import { objectKey } from '../../src/node/node-allocations.js';
import { allocationRequest } from '../../src/node/requests.js';
import { DEFAULT_ALLOCATION_SETTINGS } from '../../src/allocation/settings.js';
import { mapLimit } from '../support/async.js';
import { ensureNamespace, isAllocated } from '../support/containers.js';
import {
  BENCH_DEVICES,
  createBenchContainers,
  OPERATOR_NAMESPACE,
  operatorLogTail,
  roundRobin,
  startOperator,
  waitForContainers,
  withControlPlane,
  type ContainerPlacement,
  type Log,
} from './bench-env.js';
import { floorAllocations } from './floor-allocations.js';
import { LeaseLock, SEED_LEASE_TIMINGS } from './lease-lock.js';
import {
  allocationAskedAt,
  allocationToAllocation,
  handOversOf,
  isAllocation,
  readSettledMutexRuns,
} from './mutex-handover.js';
import { spread } from './report.js';
import { allocationGaps, nodesOf, parseStatusWrites, STATUS_WRITES_AUDIT_POLICY } from './status-writes.js';
import { mutexTaskQueue, nodeMutexId, mutexRequestSignal } from '../../src/protocol.js';

export interface SerializedAllocations {
  design: 'mutex' | 'lease' | 'floor';
  totalMs: number;
  perSecond: number;
  handOver: ReturnType<typeof spread>;
  /**
   * Allocation to allocation on a node, write to write as the apiserver saw them, for every
   * consecutive pair where the second had already asked (status-writes.ts): the same measure for
   * both designs, over every allocation (the mutex's hand-over above counts decisions).
   */
  writeToWrite: ReturnType<typeof spread>;
  /** Allocations decided per decision (the node mutex and the floor decide the queued ones together). */
  perDecision?: ReturnType<typeof spread>;
}

export interface LeaseBaselineResult {
  containers: number;
  nodes: number;
  mutex: SerializedAllocations;
  lease: SerializedAllocations;
  floor: SerializedAllocations;
}

/** Field manager of the baseline's status writes (the product's allocator has its own). */
const LEASE_FIELD_MANAGER = 'bench-lease-allocator';
const LEASE_NAMESPACE = 'weka-operator-system';

/** Bare Node objects carrying a shared-drives annotation: enough for allocation, nothing runs there. */
async function bareSharedDrivesNodes(kc: KubeConfig, names: readonly string[]): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  await mapLimit(names, 10, async (name) => {
    const drives: PhysicalDrive[] = BENCH_DEVICES.map((d, i) => ({
      physicalUUID: randomUUID(),
      serial: `${name}-SN${i}`,
      capacityGiB: d.capacityGiB,
      type: d.type,
      devicePath: d.path,
    }));
    await core.createNode({
      body: { metadata: { name, annotations: { [SHARED_DRIVES_ANNOTATION]: encodeSharedDrivesAnnotation(drives) } } },
    });
  });
}

export async function runLeaseBaseline(o: {
  containers: number;
  nodes: number;
  log: Log;
}): Promise<LeaseBaselineResult> {
  return withControlPlane(
    o.log,
    async (cp) => {
      const kc = cp.kubeConfig();
      await ensureNamespace(kc, OPERATOR_NAMESPACE);
      const mutexNodes = Array.from({ length: o.nodes }, (_, i) => `mutex-node-${i}`);
      const leaseNodes = Array.from({ length: o.nodes }, (_, i) => `lease-node-${i}`);
      const floorNodes = Array.from({ length: o.nodes }, (_, i) => `floor-node-${i}`);
      await bareSharedDrivesNodes(kc, [...mutexNodes, ...leaseNodes, ...floorNodes, WARM_UP_NODE, FLOOR_WARM_UP_NODE]);

      // The mutex first, with the operator running only its worker (no watcher: nothing else starts).
      const mutexPlacements = roundRobin('mutex', o.containers, mutexNodes);
      await ensureNamespace(kc, 'bench-mutex');
      await createBenchContainers(kc, 'bench-mutex', mutexPlacements);
      const op = await startOperator(cp, { logName: 'operator-mutex', env: { WEKA_RUN_WATCHER: 'false' } });
      const connection = await Connection.connect({ address: cp.temporalAddress });
      let mutex: Omit<SerializedAllocations, 'writeToWrite'>;
      let mutexAskedAt = new Map<string, number>();
      try {
        await op.waitReady();
        const client = new Client({ connection, namespace: cp.temporalNamespace });
        if (process.env['BENCH_COLD'] !== '1') await warmUp(kc, client, op.taskQueue);
        // Neither lock exists yet: the first request starts each node's mutex workflow, as the
        // first acquirer creates each node's Lease.
        const t0 = Date.now();
        await mapLimit(mutexPlacements, 50, (p) => requestAllocation(client, op.taskQueue, 'bench-mutex', p));
        // The figures come from Temporal's event times, so the poll only has to notice the end: once
        // a second keeps its lists of every container from taking the apiserver's CPU from the run.
        await waitForContainers(kc, {
          namespace: 'bench-mutex',
          count: o.containers,
          done: isAllocated,
          what: 'allocated',
          timeoutMs: 300_000,
          alive: () => op.running(),
        }).catch((err: unknown) => {
          throw new Error(
            `${err instanceof Error ? err.message : String(err)}\noperator log tail:\n${operatorLogTail(op)}`,
          );
        });
        // The end is the last allocation's completion as Temporal recorded it, not when the poll saw it.
        const runs = (await readSettledMutexRuns(client, op.taskQueue)).filter((r) => r.node !== WARM_UP_NODE);
        mutexAskedAt = allocationAskedAt(runs);
        const allocations = runs.flatMap((r) => r.decisions.filter((d) => isAllocation(d.activity)));
        const ends = allocations.map((d) => d.endedAt ?? Number.NaN);
        const totalMs = Math.max(...ends) - t0;
        const lastArrival = Math.max(...runs.flatMap((r) => r.arrivals.filter(Number.isFinite)));
        const busy = allocations.reduce(
          (sum, d) => sum + ((d.endedAt ?? d.scheduledAt) - (d.startedAt ?? d.scheduledAt)),
          0,
        );
        if (process.env['BENCH_TIMELINE'])
          o.log(`  clock started at ${t0} (ms since the epoch), last allocation at ${t0 + totalMs}`);
        if (process.env['BENCH_TIMELINE']) {
          const rel = (t: number | undefined): string => (t === undefined ? '?' : String(Math.round(t - t0)));
          for (const r of runs) {
            o.log(
              `  ${r.node}: arrivals ${r.arrivals.map(rel).join(',')} | ${r.decisions.map((d) => `${d.requests}@${rel(d.scheduledAt)}/${rel(d.startedAt)}-${rel(d.endedAt)}`).join(' ')}`,
            );
            o.log(
              `    workflow tasks ${r.workflowTasks.map((w) => `${rel(w.scheduledAt)}/${rel(w.startedAt)}-${rel(w.completedAt)}`).join(' ')}`,
            );
          }
        }
        o.log(
          `mutex: last request sent +${lastArrival - t0} ms; allocation activities ran ${Math.round(busy)} ms in all (${Math.round(busy / o.nodes)} ms per node)`,
        );
        mutex = {
          design: 'mutex',
          totalMs,
          perSecond: o.containers / (totalMs / 1000),
          handOver: spread(
            runs
              .flatMap(handOversOf)
              .filter(allocationToAllocation)
              .map((h) => h.ms),
          ),
          perDecision: spread(allocations.map((d) => d.requests)),
        };
      } finally {
        await connection.close();
        await op.stop();
      }
      o.log(`mutex: ${o.containers} allocations in ${Math.round(mutex.totalMs)} ms`);

      // Then the Lease baseline, with the operator stopped.
      const leasePlacements = roundRobin('lease', o.containers, leaseNodes);
      await ensureNamespace(kc, 'bench-lease');
      await createBenchContainers(kc, 'bench-lease', leasePlacements);
      const { holds, ...lease } = await leaseAllocations(kc, 'bench-lease', leasePlacements);
      o.log(`lease: ${o.containers} allocations in ${Math.round(lease.totalMs)} ms`);

      // Last, the floor, in this process too. It runs with the most objects on the apiserver
      // (every side's containers), which can only make it slower: the ratios to it stay fair.
      const floorPlacements = roundRobin('floor', o.containers, floorNodes);
      await ensureNamespace(kc, 'bench-floor');
      await createBenchContainers(kc, 'bench-floor', floorPlacements);
      const { askedAt: floorAskedAt, ...floor } = await floorAllocations(
        kc,
        'bench-floor',
        floorPlacements,
        FLOOR_WARM_UP_NODE,
      );
      o.log(`floor: ${o.containers} allocations in ${Math.round(floor.totalMs)} ms`);

      const writes = parseStatusWrites(await readFile(cp.apiserverAuditLogPath, 'utf8'));
      const writeToWrite = (
        placements: readonly ContainerPlacement[],
        namespace: string,
        fieldManager: string,
        askedAt: ReadonlyMap<string, number>,
      ) =>
        spread(
          allocationGaps(writes, { fieldManager, nodeOf: nodesOf(namespace, placements), askedAt }).map((g) => g.ms),
        );
      const leaseAskedAt = new Map(
        holds.map((h) => [objectKey({ namespace: 'bench-lease', name: h.container }), h.requestedAt]),
      );
      return {
        containers: o.containers,
        nodes: o.nodes,
        mutex: {
          ...mutex,
          writeToWrite: writeToWrite(mutexPlacements, 'bench-mutex', FIELD_MANAGER.allocator, mutexAskedAt),
        },
        lease: {
          ...lease,
          writeToWrite: writeToWrite(leasePlacements, 'bench-lease', LEASE_FIELD_MANAGER, leaseAskedAt),
        },
        floor: {
          design: 'floor',
          ...floor,
          writeToWrite: writeToWrite(floorPlacements, 'bench-floor', FIELD_MANAGER.allocator, floorAskedAt),
        },
      };
    },
    { auditPolicy: STATUS_WRITES_AUDIT_POLICY },
  );
}

/** A node of its own for the warm-up allocation, outside the measured ones. */
const WARM_UP_NODE = 'mutex-warm-up';
/** The floor's warm-up node (floor-allocations.ts). */
const FLOOR_WARM_UP_NODE = 'floor-warm-up';

/**
 * One allocation through the operator before the clock starts, on a node of its own. The Lease
 * side runs in this process, whose Kubernetes client has already created every node and
 * container; without this the mutex side alone would pay a new process's first-use costs (the
 * workflow thread's first tasks, the first TLS connections, code not yet optimised), 0.3-0.6 s
 * on this machine, which an operator that has been running does not. BENCH_COLD=1 skips it.
 */
async function warmUp(kc: KubeConfig, client: Client, taskQueue: string): Promise<void> {
  const [placement] = roundRobin('warm-up', 1, [WARM_UP_NODE]);
  await ensureNamespace(kc, 'bench-warm-up');
  await createBenchContainers(kc, 'bench-warm-up', [placement!]);
  await requestAllocation(client, taskQueue, 'bench-warm-up', placement!);
  await waitForContainers(kc, {
    namespace: 'bench-warm-up',
    count: 1,
    done: isAllocated,
    what: 'allocated (warm-up)',
    timeoutMs: 60_000,
  });
}

/** What the sendMutexRequest activity sends; the reply goes to a requester that does not exist, which the mutex skips. */
async function requestAllocation(
  client: Client,
  taskQueue: string,
  namespace: string,
  p: ContainerPlacement,
): Promise<void> {
  const mutexId = nodeMutexId(p.nodeName);
  await client.workflow.signalWithStart('mutexWorkflow', {
    workflowId: mutexId,
    taskQueue: mutexTaskQueue(taskQueue),
    args: [{ key: mutexId, node: p.nodeName }],
    signal: mutexRequestSignal,
    signalArgs: [
      {
        requestId: randomUUID(),
        kind: 'allocate',
        replyTo: `bench-requester/${p.name}`,
        payload: { namespace, name: p.name, node: p.nodeName },
      },
    ],
  });
}

interface LeaseHold {
  container: string;
  node: string;
  requestedAt: number;
  acquiredAt: number;
  releasedAt: number;
}

/** Every placement's allocation at once, each serialized by its node's Lease (the seed's design). */
export async function leaseAllocations(
  kc: KubeConfig,
  namespace: string,
  placements: readonly ContainerPlacement[],
): Promise<Omit<SerializedAllocations, 'writeToWrite'> & { holds: LeaseHold[] }> {
  const coordination = kc.makeApiClient(CoordinationV1Api);
  const api = new WekaApi(kc);
  const t0 = Date.now();
  const holds = await Promise.all(placements.map((p) => allocateUnderLease(coordination, api, namespace, p)));
  const totalMs = Math.max(...holds.map((h) => h.releasedAt)) - t0;
  // Per node, in the order the lease was held: released -> next holder acquired, for holders that
  // were already waiting when it was released.
  const handOvers: number[] = [];
  const byNode = new Map<string, LeaseHold[]>();
  for (const h of holds) byNode.set(h.node, [...(byNode.get(h.node) ?? []), h]);
  for (const nodeHolds of byNode.values()) {
    const ordered = nodeHolds.sort((a, b) => a.acquiredAt - b.acquiredAt);
    for (let i = 0; i + 1 < ordered.length; i++) {
      const [prev, next] = [ordered[i]!, ordered[i + 1]!];
      if (next.requestedAt <= prev.releasedAt) handOvers.push(next.acquiredAt - prev.releasedAt);
    }
  }
  return {
    design: 'lease',
    totalMs,
    perSecond: placements.length / (totalMs / 1000),
    handOver: spread(handOvers),
    holds,
  };
}

async function allocateUnderLease(
  coordination: CoordinationV1Api,
  api: WekaApi,
  namespace: string,
  p: ContainerPlacement,
): Promise<LeaseHold> {
  const lock = new LeaseLock(
    coordination,
    LEASE_NAMESPACE,
    `weka-allocator-${p.nodeName}`,
    `${namespace}/${p.name}`,
    SEED_LEASE_TIMINGS,
  );
  const requestedAt = Date.now();
  await lock.acquire();
  const acquiredAt = Date.now();
  let lost = false;
  const stopRenewing = lock.startRenewing(() => (lost = true));
  try {
    const ref = { namespace, name: p.name };
    const container = await api.getContainer(ref);
    if (!container) throw new Error(`${namespace}/${p.name} is gone`);
    const node = await api.core.readNode({ name: p.nodeName });
    const decoded = decodeSharedDrivesAnnotation(node.metadata?.annotations?.[SHARED_DRIVES_ANNOTATION] ?? '[]');
    if (!decoded.ok) throw new Error(`node ${p.nodeName}: ${decoded.error.message}`);
    const others = (await api.listContainersOnNode(p.nodeName)).filter(
      (c) => c.metadata.uid !== container.metadata.uid,
    );
    const result = allocateVirtualDrives(
      {
        physicalDrives: [...decoded.drives],
        claimed: others.map((c) => ({
          container: `${c.metadata.namespace}/${c.metadata.name}`,
          virtualDrives: c.status?.allocations?.virtualDrives ?? [],
        })),
        request: allocationRequest(container.spec),
        settings: DEFAULT_ALLOCATION_SETTINGS,
      },
      randomUUID,
    );
    if (!result.ok) throw new Error(`${namespace}/${p.name}: ${result.error.message}`);
    if (lost) throw new Error(`lost the lease of ${p.nodeName} while allocating`);
    await api.applyStatus(
      'WekaContainer',
      ref,
      { allocations: { virtualDrives: [...result.virtualDrives], virtualDriveCount: result.virtualDrives.length } },
      LEASE_FIELD_MANAGER,
      container.metadata.resourceVersion,
    );
  } finally {
    stopRenewing();
    await lock.release();
  }
  return { container: p.name, node: p.nodeName, requestedAt, acquiredAt, releasedAt: Date.now() };
}
