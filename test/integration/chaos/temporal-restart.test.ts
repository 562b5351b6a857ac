// Chaos: the Temporal server is stopped in the middle of a rollout of 30 drive containers over 3
// nodes and started again on the same SQLite file. The operator process keeps running through it
// (its worker and clients reconnect); everything converges to Ready, the invariants hold, and
// deleting everything leaves nothing behind.
// The harness's Temporal is shared by every integration test file, so afterAll makes sure it
// runs again even when this test fails half-way.
import { Connection } from '@temporalio/client';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually, sleep } from '../../support/async.js';
import {
  CHAOS_POLL_MS,
  ChaosOperator,
  createChaosContainers,
  expectCleanTeardown,
  expectSteadyState,
  prepareChaosEnvironment,
  removeChaosNodes,
  waitAllReady,
  type ChaosEnvironment,
} from '../../support/chaos.js';
import { listContainers, phaseSummary } from '../../support/containers.js';
import { kubeConfig, startTemporal, stopTemporal, temporalAddress } from '../../support/harness.js';
import { chaosRandom } from '../../support/random.js';

const CONTAINERS = 30;

let env: ChaosEnvironment | undefined;
let operator: ChaosOperator | undefined;
afterAll(async () => {
  await startTemporal();
  await operator?.stop();
  await removeChaosNodes(env);
});

/** Temporal answers a health check (the harness's start already waits for it; this is the client's view). */
async function temporalHealthy(): Promise<void> {
  const connection = await Connection.connect({ address: temporalAddress(), connectTimeout: 10_000 });
  try {
    await connection.healthService.check({});
  } finally {
    await connection.close();
  }
}

describe('chaos: the Temporal server restarted during a rollout', () => {
  it(
    'converges to every container Ready with the same operator process, and deleting them all leaves nothing',
    { timeout: 480_000 },
    async () => {
      const { random } = chaosRandom('temporal-restart');
      env = await prepareChaosEnvironment('temporal');
      operator = new ChaosOperator(env.operatorNamespace, 'temporal');
      await operator.start();

      const rolloutStarted = Date.now();
      const refs = await createChaosContainers(env, CONTAINERS);
      const kc = kubeConfig();
      const namespace = env.namespace;
      // "In the middle": some containers are Ready, most are still on their way.
      const atStop = await eventually(
        'the first containers to be Ready',
        async () => {
          const all = await listContainers(kc, namespace);
          return all.filter((c) => c.status?.phase === 'Ready').length >= 3 ? all : undefined;
        },
        240_000,
        { intervalMs: CHAOS_POLL_MS, progress: async () => phaseSummary(await listContainers(kc, namespace)) },
      );
      const downMs = random.int(3_000, 10_000);
      const complaintsBefore = operator.logLines(40).length;
      await stopTemporal();
      console.log(`temporal-restart: stopped Temporal for ${downMs} ms at ${phaseSummary(atStop)}`);
      await sleep(downMs);
      const { startupMs } = await startTemporal();
      await temporalHealthy();
      const complaints = operator.logLines(40).slice(complaintsBefore);
      console.log(
        `temporal-restart: Temporal was back after ${startupMs} ms; meanwhile the operator logged ${complaints.length} warnings or errors${complaints.length > 0 ? `, the first: ${complaints[0]!.slice(0, 400)}` : ''}`,
      );
      expect(atStop.filter((c) => c.status?.phase === 'Ready').length).toBeLessThan(CONTAINERS);
      expect(operator.running(), `the operator process exited while Temporal was down:\n${operator.outputTail()}`).toBe(
        true,
      );

      await waitAllReady(refs, 360_000 - (Date.now() - rolloutStarted));
      console.log(
        `temporal-restart: all ${CONTAINERS} containers Ready ${Date.now() - rolloutStarted} ms after the rollout started`,
      );
      expect(operator.running(), 'the same operator process converged').toBe(true);
      const steady = await expectSteadyState({ scenario: 'temporal-restart', env, operator });
      const deletedMs = await expectCleanTeardown({ scenario: 'temporal-restart', env, operator }, refs, steady);
      console.log(`temporal-restart: everything deleted in ${deletedMs} ms`);
    },
  );
});
