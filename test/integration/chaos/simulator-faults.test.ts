// Chaos: every Weka command on every node fails 10% of the time (exit 75, no effect) and "fails
// after effect" another 10% (the change is made, then exit 75 with no answer), with a seeded
// fault sequence, while 30 drive containers roll out over 3 nodes and are deleted again.
// Everything converges, the invariants hold, and nothing is signed, added or removed twice.
import { afterAll, describe, expect, it } from 'vitest';
import {
  ChaosOperator,
  createChaosContainers,
  expectCleanTeardown,
  expectSteadyState,
  prepareChaosEnvironment,
  removeChaosNodes,
  waitAllReady,
  type ChaosEnvironment,
} from '../../support/chaos.js';
import { chaosRandom } from '../../support/random.js';
import { sim, simulatorLog } from '../../support/simulator.js';
import { runAsHeavyFile } from '../../support/heavy-files.js';

const CONTAINERS = 30;

runAsHeavyFile();

let env: ChaosEnvironment | undefined;
let operator: ChaosOperator | undefined;
afterAll(async () => {
  await operator?.stop();
  await removeChaosNodes(env);
});

/** How many Weka commands (the operator's, and the invariant checker's reads) the faults hit so far. */
async function injectedFaults(nodes: readonly string[]): Promise<{ failed: number; failedAfterEffect: number }> {
  const entries = (await Promise.all(nodes.map(simulatorLog))).flat();
  const failedAfterEffect = entries.filter((e) => e.fault === 'fail-after-effect').length;
  return { failed: entries.filter((e) => e.exitCode === 75).length - failedAfterEffect, failedAfterEffect };
}

describe('chaos: the Weka tools failing, before and after their effect', () => {
  it(
    'converges to every container Ready and deletes them all with 10% + 10% of Weka commands failing',
    { timeout: 480_000 },
    async () => {
      const { random } = chaosRandom('simulator-faults');
      env = await prepareChaosEnvironment('faults');
      // Set after the nodes were prepared (their proxy signing must not fail), one seed per node.
      for (const node of env.nodes) {
        await sim(
          node,
          'faults',
          '--fail-rate',
          '0.1',
          '--fail-after-effect-rate',
          '0.1',
          '--seed',
          String(random.int(0, 2 ** 31)),
        );
      }
      operator = new ChaosOperator(env.operatorNamespace, 'faults');
      await operator.start();

      const rolloutStarted = Date.now();
      const refs = await createChaosContainers(env, CONTAINERS);
      await waitAllReady(refs, 360_000);
      const duringRollout = await injectedFaults(env.nodes);
      console.log(
        `simulator-faults: all ${CONTAINERS} containers Ready ${Date.now() - rolloutStarted} ms after the rollout started, through ${duringRollout.failed} failed and ${duringRollout.failedAfterEffect} failed-after-effect Weka commands`,
      );
      // The faults must really have hit the rollout, or this test proves nothing.
      expect(duringRollout.failed).toBeGreaterThan(0);
      expect(duringRollout.failedAfterEffect).toBeGreaterThan(0);
      // The checker's own reads go through the faulty simulator too; it retries them.
      const run = { scenario: 'simulator-faults', env, operator };
      const steady = await expectSteadyState(run);

      // The faults stay on for the teardown, and are cleared before the final check.
      const deletedMs = await expectCleanTeardown(run, refs, steady, async () => {
        const total = await injectedFaults(env!.nodes);
        console.log(
          `simulator-faults: everything deleted through ${total.failed - duringRollout.failed} failed and ${total.failedAfterEffect - duringRollout.failedAfterEffect} failed-after-effect Weka commands`,
        );
        for (const node of env!.nodes) await sim(node, 'faults', '--clear');
      });
      console.log(`simulator-faults: everything deleted in ${deletedMs} ms`);
    },
  );
});
