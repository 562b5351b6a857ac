// Chaos: the operator process (watcher + worker) is SIGKILLed at seeded random moments while 30
// drive containers roll out over 3 nodes, and started again each time. Everything converges to
// Ready, the invariants hold, and deleting everything leaves nothing behind.
import { afterAll, describe, expect, it } from 'vitest';
import { sleep } from '../../support/async.js';
import {
  ChaosOperator,
  createChaosContainers,
  expectCleanTeardown,
  expectSteadyState,
  prepareChaosEnvironment,
  removeChaosNodes,
  waitAllReady,
  type ChaosRun,
} from '../../support/chaos.js';
import { listContainers, phaseSummary } from '../../support/containers.js';
import { kubeConfig } from '../../support/harness.js';
import { chaosRandom } from '../../support/random.js';

const CONTAINERS = 30;
const KILLS = 10;

let run: ChaosRun | undefined;
afterAll(async () => {
  await run?.operator.stop();
  await removeChaosNodes(run?.env);
});

describe('chaos: the operator process SIGKILLed during a rollout', () => {
  it(
    'converges to every container Ready through ten SIGKILLs, and deleting them all leaves nothing',
    { timeout: 480_000 },
    async () => {
      const { random } = chaosRandom('operator-kills');
      const env = await prepareChaosEnvironment('kills');
      const operator = new ChaosOperator(env.operatorNamespace, 'kills');
      run = { scenario: 'operator-kills', env, operator };
      await operator.start();

      const rolloutStarted = Date.now();
      const refs = await createChaosContainers(env, CONTAINERS);
      const atKills: string[] = [];
      let notReadyAtKill = 0;
      for (let k = 0; k < KILLS; k++) {
        // Spread over the rollout: the operator gets 2 to 12 s of work between restarts.
        await sleep(random.int(2_000, 12_000));
        await operator.kill();
        const all = await listContainers(kubeConfig(), env.namespace);
        atKills.push(phaseSummary(all));
        if (all.some((c) => c.status?.phase !== 'Ready')) notReadyAtKill++;
        await operator.start();
      }
      console.log(
        `operator-kills: phases at each of the ${KILLS} kills:\n  ${atKills.join('\n  ')}\nrestarts took ${operator.startTimes.slice(1).join(', ')} ms`,
      );
      // The kills must land in the rollout, not after it, or this test proves nothing.
      expect(notReadyAtKill, 'kills that landed before every container was Ready').toBeGreaterThanOrEqual(KILLS / 2);

      await waitAllReady(refs, 420_000 - (Date.now() - rolloutStarted));
      console.log(
        `operator-kills: all ${CONTAINERS} containers Ready ${Date.now() - rolloutStarted} ms after the rollout started`,
      );
      const steady = await expectSteadyState(run);
      const deletedMs = await expectCleanTeardown(run, refs, steady);
      console.log(`operator-kills: everything deleted in ${deletedMs} ms`);
    },
  );
});
