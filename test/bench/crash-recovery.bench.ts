// Benchmark 4, crash recovery: the operator process is SIGKILLed while the node mutex is running
// an allocateForContainer for a container, and started again at once; the figure is the time
// from the restarted process's `worker running` log line until that container's
// status.allocations appears. Each sample creates a few fresh containers on one node (simulator
// latency 0), polls the mutex's state query until the holder is one of their allocate requests,
// and kills. A sample whose allocation had
// already been written when the kill landed, or was written by the killed process's request still
// in flight, was not interrupted and is left out (counted as "missed").
//
// The baseline's figure: a Lease holder that dies without releasing (renewing every 2 s until
// then), and a waiter that has been polling all along; from the holder's last write until the
// waiter holds the lease.
import { CoordinationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { createSimulatedCluster } from '../../deploy/local/shared-drives.js';
import type { WekaContainer } from '../../src/api/index.js';
import { eventually, sleep } from '../support/async.js';
import { ensureNamespace, isAllocated, isReady, readObject, WEKA_CONTAINERS } from '../support/containers.js';
import type { OperatorProcess } from '../support/operator-process.js';
import {
  addSharedDrivesNodes,
  createBenchContainers,
  median,
  OPERATOR_NAMESPACE,
  roundRobin,
  startOperator,
  waitForContainers,
  withControlPlane,
  type Log,
} from './bench-env.js';
import { LeaseLock, SEED_LEASE_TIMINGS } from './lease-lock.js';
import { nodeMutexId, mutexStateQuery } from '../../src/protocol.js';

export interface CrashSample {
  container: string;
  /** The activity's state in Temporal right after the kill: STARTED (running on the dead worker) or SCHEDULED. */
  activityState: string;
  /** Spawn of the new process to its `worker running` line. */
  restartMs: number;
  /** `worker running` to status.allocations: the benchmark's figure. */
  recoveryMs: number;
  /** The kill to status.allocations. */
  sinceKillMs: number;
}

export interface CrashRecoveryResult {
  samples: CrashSample[];
  /** Attempts where the allocation was already written when the kill landed, or no allocation was caught. */
  missed: number;
  /** The baseline: holder killed without release, until the next holder acquires. */
  leaseTakeoverMs: number[];
}

const CONTAINERS_PER_SAMPLE = 6;
const LOG_WORKER_RUNNING = 'worker running';
const ACTIVITY_STATES: Record<number, string> = { 1: 'SCHEDULED', 2: 'STARTED', 3: 'CANCEL_REQUESTED' };

export async function runCrashRecovery(o: { samples: number; log: Log }): Promise<CrashRecoveryResult> {
  return withControlPlane(o.log, async (cp) => {
    const kc = cp.kubeConfig();
    const node = 'crash-node';
    await addSharedDrivesNodes(cp, [node]);
    const guid = await createSimulatedCluster(cp.simulatorRoot, node, 'bench-crash');
    await ensureNamespace(kc, OPERATOR_NAMESPACE);
    const connection = await Connection.connect({ address: cp.temporalAddress });
    const client = new Client({ connection, namespace: cp.temporalNamespace });
    // info level: the `worker running` line carries the restart's time.
    const start = (i: number) => startOperator(cp, { logName: `operator-${i}`, logLevel: 'info' });
    let op: OperatorProcess = await start(0);
    const samples: CrashSample[] = [];
    let missed = 0;
    try {
      await op.waitReady();
      for (let attempt = 1; samples.length < o.samples && attempt <= o.samples * 3; attempt++) {
        const namespace = `crash-${attempt}`;
        await ensureNamespace(kc, namespace);
        await createBenchContainers(kc, namespace, roundRobin('drive', CONTAINERS_PER_SAMPLE, [node]), guid);
        const { victim, killedAt } = await killDuringAllocation(client, node, namespace, op);
        const interrupted = victim !== undefined && !isAllocated(await readContainer(kc, namespace, victim));
        const pending = (await client.workflow.getHandle(nodeMutexId(node)).describe()).raw.pendingActivities?.[0];
        op = await start(attempt);
        if (!interrupted) {
          missed++;
          o.log(
            `  attempt ${attempt}: ${victim === undefined ? 'no allocation caught' : `${victim} was already allocated when the kill landed`}; not counted`,
          );
        } else {
          const allocatedAt = (
            await waitForContainers(kc, {
              namespace,
              count: 1,
              done: (c) => c.metadata.name === victim && isAllocated(c),
              what: `allocated (${victim})`,
              timeoutMs: 120_000,
            })
          ).get(victim)!;
          const runningAt = await logTimeOf(op, LOG_WORKER_RUNNING);
          if (allocatedAt < runningAt) {
            // The killed process's write was already on its way to the apiserver: nothing was
            // left for the new process to recover.
            missed++;
            o.log(
              `  attempt ${attempt}: ${victim}'s allocation landed ${allocatedAt - killedAt} ms after the kill, before the new worker ran (the killed process's write in flight); not counted`,
            );
          } else {
            const sample: CrashSample = {
              container: `${namespace}/${victim}`,
              activityState: ACTIVITY_STATES[pending?.state ?? 0] ?? 'none',
              restartMs: runningAt - op.spawnedAt,
              recoveryMs: allocatedAt - runningAt,
              sinceKillMs: allocatedAt - killedAt,
            };
            samples.push(sample);
            o.log(
              `  attempt ${attempt}: ${sample.container} (${sample.activityState}): restart ${sample.restartMs} ms, then allocated ${sample.recoveryMs} ms after "worker running" (${sample.sinceKillMs} ms after the kill)`,
            );
          }
        }
        // Let the rest of this sample's containers finish, so the next sample starts quiet.
        await waitForContainers(kc, {
          namespace,
          count: CONTAINERS_PER_SAMPLE,
          done: isReady,
          what: 'Ready',
          timeoutMs: 180_000,
        });
      }
    } finally {
      await op.stop();
      await connection.close();
    }
    const leaseTakeoverMs = await leaseTakeovers(kc, Math.max(3, o.samples));
    o.log(`  lease takeover after a holder's crash: ${leaseTakeoverMs.map((m) => `${m} ms`).join(', ')}`);
    return { samples, missed, leaseTakeoverMs };
  });
}

async function readContainer(kc: KubeConfig, namespace: string, name: string): Promise<WekaContainer> {
  const c = await readObject<WekaContainer>(kc, WEKA_CONTAINERS, { namespace, name });
  if (c === null) throw new Error(`${namespace}/${name} is gone`);
  return c;
}

/**
 * Polls the node mutex until it holds an allocate request of `namespace`, then SIGKILLs the
 * operator; returns that request's container (undefined if every allocation went by unseen) and
 * when the signal was sent.
 */
async function killDuringAllocation(
  client: Client,
  node: string,
  namespace: string,
  op: OperatorProcess,
): Promise<{ victim?: string; killedAt: number }> {
  const handle = client.workflow.getHandle(nodeMutexId(node));
  const victim = await eventually(
    `an allocation of ${namespace} to be running`,
    async () => {
      const view = await handle.query(mutexStateQuery);
      const running = view.running.find(
        (r) => r.kind === 'allocate' && (r.payload as { namespace?: string }).namespace === namespace,
      );
      return (running?.payload as { namespace?: string; name?: string } | undefined)?.name;
    },
    120_000,
    { intervalMs: 2 },
  ).catch(() => undefined);
  // Kill at once: an allocation takes tens of milliseconds, less than asking Temporal whether its
  // activity has started. Whether it had (STARTED) or was still waiting for a worker (SCHEDULED)
  // is read after the kill and reported with the sample; either way the new process must finish
  // it. When every allocation went by unseen, kill all the same.
  const killedAt = Date.now();
  await op.kill();
  return victim === undefined ? { killedAt } : { victim, killedAt };
}

async function logTimeOf(op: OperatorProcess, message: string): Promise<number> {
  return eventually(`the operator to log "${message}"`, () => op.logTime(message), 60_000, {
    intervalMs: 50,
    progress: () => `see ${op.logPath}`,
    log: () => undefined,
  });
}

/**
 * The seed's crash case, `count` times at once on separate Leases: a holder renews for a while,
 * then dies without releasing; a waiter that has been polling all along takes over after expiry.
 */
async function leaseTakeovers(kc: KubeConfig, count: number): Promise<number[]> {
  const api = kc.makeApiClient(CoordinationV1Api);
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const name = `weka-allocator-crash-${i}`;
      const holder = new LeaseLock(api, OPERATOR_NAMESPACE, name, 'crashing/holder', SEED_LEASE_TIMINGS);
      await holder.acquire();
      const stopRenewing = holder.startRenewing(() => undefined);
      const waiter = new LeaseLock(api, OPERATOR_NAMESPACE, name, 'waiting/next', SEED_LEASE_TIMINGS);
      const acquired = waiter.acquire().then(() => Date.now());
      // Crash at a random point of the holder's renew cycle, after it renewed at least twice.
      await sleep(5_000 + Math.random() * SEED_LEASE_TIMINGS.retryPeriodMs);
      stopRenewing();
      const acquiredAt = await acquired;
      // Read after the takeover: a renewal in flight when the holder "died" still counts as its last write.
      return acquiredAt - holder.lastWriteAt!;
    }),
  );
}

export function summarizeCrash(r: CrashRecoveryResult): { min: number; median: number; max: number } {
  const v = r.samples.map((s) => s.recoveryMs);
  return { min: Math.min(...v), median: median(v), max: Math.max(...v) };
}
