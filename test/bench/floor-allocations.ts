// The floor of benchmark 3: the same allocations made by this process alone, each node serialized
// by an in-memory lock (batching-node-locks.ts), nothing durable, nothing between two decisions
// but a resolved promise. Each decision is the product's own allocation activity,
// allocateForContainers (activities/allocations.ts), called in-process: the same reads, dry-runs
// and writes the node mutex's activity makes, under the allocator's field manager. So the gap
// between the mutex and the floor is what Temporal costs (signals, workflow tasks, activity
// scheduling, durable history), and no design serializing these writes through this apiserver
// can go below the floor.
import type { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { createAllocationDecisions } from '../../activities/allocations.js';
import type { ActivityDeps } from '../../activities/deps.js';
import type { ExecTransport } from '../../activities/exec/transport.js';
import { objectKey } from '../../src/node/node-allocations.js';
import type { ContainerOnNode, MutexOutcome } from '../../src/protocol.js';
import { DEFAULT_ALLOCATION_SETTINGS } from '../../src/allocation/settings.js';
import { ensureNamespace } from '../support/containers.js';
import { createBenchContainers, roundRobin, type ContainerPlacement } from './bench-env.js';
import { BatchingNodeLocks, lockHandOvers, preciseNow } from './batching-node-locks.js';
import { spread } from './report.js';

/** The node mutex's bound on allocations decided in one activity (MAX_BATCH in workflows/mutex/execute.ts). */
const MAX_BATCH = 50;

/** Bench nodes carry their drives in the annotation, typed: nothing is adopted, so nothing is exec'd. */
const NO_EXEC: ExecTransport = {
  run: () => Promise.reject(new Error('the floor runs no command on a node')),
};

export interface FloorAllocations {
  totalMs: number;
  perSecond: number;
  handOver: ReturnType<typeof spread>;
  perDecision: ReturnType<typeof spread>;
  /** When each container's allocation was asked for, by `namespace/name` (for write to write). */
  askedAt: Map<string, number>;
}

/** The allocation decisions the operator's worker runs, built as its main builds them, minus Temporal. */
function floorDecider(kc: KubeConfig) {
  const deps: ActivityDeps = {
    kubeConfig: kc,
    exec: NO_EXEC,
    // Never used by the allocation decisions: they only read and write the apiserver.
    temporal: undefined as never,
    taskQueue: 'bench-floor',
    logger: pino({ level: 'warn' }, pino.destination(2)),
    settings: DEFAULT_ALLOCATION_SETTINGS,
    operatorNamespace: 'weka-operator-system',
    proxyImage: 'unused',
    allowedImages: [],
  };
  const { allocateForContainers } = createAllocationDecisions(deps);
  return new BatchingNodeLocks<ContainerOnNode, MutexOutcome>(
    (node, containers) => allocateForContainers({ node, containers }),
    MAX_BATCH,
  );
}

/** Every placement's allocation at once, through the floor's per-node locks. */
export async function floorAllocations(
  kc: KubeConfig,
  namespace: string,
  placements: readonly ContainerPlacement[],
  warmUpNode: string,
): Promise<FloorAllocations> {
  const locks = floorDecider(kc);
  if (process.env['BENCH_COLD'] !== '1') await warmUp(kc, locks, warmUpNode);
  const warmUpDecisions = locks.decisions.length;
  const askedAt = new Map<string, number>();
  const t0 = preciseNow();
  await Promise.all(
    placements.map(async (p) => {
      const ask = { namespace, name: p.name, node: p.nodeName };
      askedAt.set(objectKey(ask), preciseNow());
      const outcome = await locks.request(p.nodeName, ask);
      if (!outcome.ok) throw new Error(`${objectKey(ask)}: ${outcome.error.type}: ${outcome.error.message}`);
    }),
  );
  const decisions = locks.decisions.slice(warmUpDecisions);
  const totalMs = Math.max(...decisions.map((d) => d.endedAt)) - t0;
  return {
    totalMs,
    perSecond: placements.length / (totalMs / 1000),
    handOver: spread(lockHandOvers(decisions)),
    perDecision: spread(decisions.map((d) => d.requests)),
    askedAt,
  };
}

/**
 * One allocation on a node of its own before the clock starts, as the mutex side has: the
 * allocation code's first run in this process (not yet optimised) is not the floor's.
 * BENCH_COLD=1 skips it, as it skips the mutex's.
 */
async function warmUp(
  kc: KubeConfig,
  locks: BatchingNodeLocks<ContainerOnNode, MutexOutcome>,
  node: string,
): Promise<void> {
  const [placement] = roundRobin('floor-warm-up', 1, [node]);
  const namespace = 'bench-floor-warm-up';
  await ensureNamespace(kc, namespace);
  await createBenchContainers(kc, namespace, [placement!]);
  const outcome = await locks.request(node, { namespace, name: placement!.name, node });
  if (!outcome.ok) throw new Error(`floor warm-up: ${outcome.error.message}`);
}
