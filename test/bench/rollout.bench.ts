// Benchmark 2, rollout: N standalone drive WekaContainers over M fake nodes, all created at once,
// through the whole product (the operator process's watcher and worker: proxy, pod, allocation in
// the node mutex, sign and add through Kubernetes exec into the simulator at latency 0), from the
// first create until every one is Ready. The per-node hand-over comes from the mutex histories
// (mutex-handover.ts), and allocation to allocation from the apiserver's audit log (status-writes.ts).
import { Client, Connection } from '@temporalio/client';
import { createSimulatedCluster } from '../../deploy/local/shared-drives.js';
import { ensureNamespace } from '../support/containers.js';
import {
  addSharedDrivesNodes,
  createAndWaitReady,
  driveSpec,
  OPERATOR_NAMESPACE,
  roundRobin,
  startOperator,
  withControlPlane,
  type Log,
} from './bench-env.js';
import { readFile } from 'node:fs/promises';
import { FIELD_MANAGER } from '../../src/api/names.js';
import { WORKFLOW } from '../../src/protocol.js';
import {
  allocationAskedAt,
  allocationToAllocation,
  handOversOf,
  isAllocation,
  readMutexRuns,
  type HandOver,
} from './mutex-handover.js';
import { spread } from './report.js';
import { allocationGaps, nodesOf, parseStatusWrites, STATUS_WRITES_AUDIT_POLICY } from './status-writes.js';

export interface RolloutResult {
  containers: number;
  drives: number;
  nodes: number;
  totalMs: number;
  perSecond: number;
  /** Creation to Ready, per container. */
  readyLatency: ReturnType<typeof spread>;
  /** Every queued hand-over between two decisions on a node (allocations, proxy checks). */
  handOvers: HandOver[];
  /** Only those from one allocation to the next. */
  allocationHandOvers: ReturnType<typeof spread>;
  allHandOvers: ReturnType<typeof spread>;
  /** Allocation to allocation on a node, write to write at the apiserver, where the second had already asked. */
  writeToWrite: ReturnType<typeof spread>;
  /** Allocations decided per allocation activity (queued ones are decided together). */
  perDecision: ReturnType<typeof spread>;
  /** CPU-seconds of the operator process (every thread) from the first create to the last Ready, per container. */
  cpuSecondsPerContainer: number;
  /** History events of each container's workflow once every container is Ready (they wait parked). */
  historyEvents: ReturnType<typeof spread>;
}

/** The history length of every drive container workflow of this operator's task queue. */
async function containerHistoryEvents(client: Client, taskQueue: string): Promise<number[]> {
  const lengths: number[] = [];
  for await (const wf of client.workflow.list({
    query: `WorkflowType="${WORKFLOW.driveContainer}" AND TaskQueue="${taskQueue}"`,
  }))
    // Described, not listed: the visibility record's length is only as new as its last update.
    lengths.push((await client.workflow.getHandle(wf.workflowId, wf.runId).describe()).historyLength);
  return lengths;
}

export async function runRollout(o: {
  containers: number;
  nodes: number;
  /** Virtual drives per container. */
  drives: number;
  log: Log;
}): Promise<RolloutResult> {
  return withControlPlane(
    o.log,
    async (cp) => {
      const kc = cp.kubeConfig();
      const nodes = Array.from({ length: o.nodes }, (_, i) => `bench-node-${i}`);
      const started = Date.now();
      await addSharedDrivesNodes(cp, nodes);
      o.log(`${o.nodes} nodes with signed shared drives in ${Date.now() - started} ms`);
      const guid = await createSimulatedCluster(cp.simulatorRoot, nodes[0]!, 'bench-rollout');
      await ensureNamespace(kc, OPERATOR_NAMESPACE);
      const namespace = 'bench-rollout';
      await ensureNamespace(kc, namespace);

      const placements = roundRobin('drive', o.containers, nodes);
      const op = await startOperator(cp, { logName: 'operator' });
      const connection = await Connection.connect({ address: cp.temporalAddress });
      try {
        await op.waitReady();
        const cpuBefore = (await op.metrics()).get('process_cpu_seconds_total') ?? Number.NaN;
        const { t0, readyAt } = await createAndWaitReady(kc, op, {
          namespace,
          placements,
          clusterGUID: guid,
          timeoutMs: Math.max(300_000, o.containers * 3_000),
          log: o.log,
          drives: driveSpec(o.drives),
        });
        const cpuAfter = (await op.metrics()).get('process_cpu_seconds_total') ?? Number.NaN;
        const totalMs = Math.max(...readyAt.values()) - t0;
        const client = new Client({ connection, namespace: cp.temporalNamespace });
        const runs = await readMutexRuns(client, op.taskQueue);
        const handOvers = runs.flatMap(handOversOf);
        const gaps = allocationGaps(parseStatusWrites(await readFile(cp.apiserverAuditLogPath, 'utf8')), {
          fieldManager: FIELD_MANAGER.allocator,
          nodeOf: nodesOf(namespace, placements),
          askedAt: allocationAskedAt(runs),
        });
        return {
          containers: o.containers,
          drives: o.drives,
          nodes: o.nodes,
          totalMs,
          perSecond: o.containers / (totalMs / 1000),
          readyLatency: spread([...readyAt.values()].map((t) => t - t0)),
          handOvers,
          allocationHandOvers: spread(handOvers.filter(allocationToAllocation).map((h) => h.ms)),
          allHandOvers: spread(handOvers.map((h) => h.ms)),
          writeToWrite: spread(gaps.map((g) => g.ms)),
          perDecision: spread(
            runs.flatMap((r) => r.decisions.filter((d) => isAllocation(d.activity)).map((d) => d.requests)),
          ),
          cpuSecondsPerContainer: (cpuAfter - cpuBefore) / o.containers,
          historyEvents: spread(await containerHistoryEvents(client, op.taskQueue)),
        };
      } finally {
        await connection.close();
        await op.stop();
      }
    },
    { auditPolicy: STATUS_WRITES_AUDIT_POLICY },
  );
}
