// Chaos: 30 drive containers roll out over 3 nodes and a seeded half of them is deleted on the
// way: eight as soon as the first container is allocated (most still waiting for the proxy or
// their allocation), seven as soon as a few are Ready (most signing or adding drives). The other
// half converges to Ready, the deleted ones disappear, the invariants hold, and deleting the rest
// leaves nothing behind.
import { afterAll, describe, expect, it } from 'vitest';
import type { WekaContainer } from '../../../src/api/index.js';
import { eventually } from '../../support/async.js';
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
import { deleteContainers, listContainers, phaseSummary } from '../../support/containers.js';
import { kubeConfig } from '../../support/harness.js';
import { chaosRandom } from '../../support/random.js';
import { runAsHeavyFile } from '../../support/heavy-files.js';

runAsHeavyFile();

const CONTAINERS = 30;

let env: ChaosEnvironment | undefined;
let operator: ChaosOperator | undefined;
afterAll(async () => {
  await operator?.stop();
  await removeChaosNodes(env);
});

describe('chaos: deleting half the containers while the rollout is under way', () => {
  it(
    'brings the other half to Ready, removes the deleted half completely, and deleting the rest leaves nothing',
    { timeout: 480_000 },
    async () => {
      const { random } = chaosRandom('delete-during-rollout');
      env = await prepareChaosEnvironment('delhalf');
      operator = new ChaosOperator(env.operatorNamespace, 'delhalf');
      await operator.start();

      const rolloutStarted = Date.now();
      const refs = await createChaosContainers(env, CONTAINERS);
      const kc = kubeConfig();
      const namespace = env.namespace;
      const doomed = random.sample(refs, CONTAINERS / 2);
      const kept = refs.filter((r) => !doomed.includes(r));
      // Two waves, so that some are caught before their allocation and some while signing and adding.
      const waves = [
        {
          what: 'the first allocation',
          doomed: doomed.slice(0, 8),
          reached: (all: WekaContainer[]) => all.some((c) => (c.status?.allocations?.virtualDrives?.length ?? 0) > 0),
        },
        {
          what: 'the first containers to be Ready',
          doomed: doomed.slice(8),
          reached: (all: WekaContainer[]) => all.filter((c) => c.status?.phase === 'Ready').length >= 3,
        },
      ];
      const phasesAtDeletion: string[] = [];
      for (const wave of waves) {
        const all = await eventually(
          wave.what,
          async () => {
            const all = await listContainers(kc, namespace);
            return wave.reached(all) ? all : undefined;
          },
          240_000,
          { intervalMs: CHAOS_POLL_MS, progress: async () => phaseSummary(await listContainers(kc, namespace)) },
        );
        const names = new Set(wave.doomed.map((r) => r.name));
        const caught = all.filter((c) => names.has(c.metadata.name!));
        await deleteContainers(kc, wave.doomed);
        phasesAtDeletion.push(...caught.map((c) => c.status?.phase ?? 'none'));
        console.log(
          `delete-during-rollout: at ${wave.what}, deleted ${wave.doomed.map((r) => r.name).join(', ')} (${phaseSummary(caught)}; all: ${phaseSummary(all)})`,
        );
      }
      // Most must be caught half-way, some before allocation, or this is just a deletion of Ready containers.
      expect(phasesAtDeletion.filter((p) => p !== 'Ready').length).toBeGreaterThanOrEqual(doomed.length / 2);
      expect(
        phasesAtDeletion.filter((p) => p === 'Pending' || p === 'Allocating' || p === 'none').length,
      ).toBeGreaterThan(0);

      // Exactly the kept half exists, all Ready: the deleted half is gone.
      await waitAllReady(kept, 360_000 - (Date.now() - rolloutStarted));
      console.log(
        `delete-during-rollout: the ${kept.length} kept containers Ready and the ${doomed.length} deleted gone ${Date.now() - rolloutStarted} ms after the rollout started`,
      );
      const steady = await expectSteadyState({ scenario: 'delete-during-rollout', env, operator });
      const deletedMs = await expectCleanTeardown({ scenario: 'delete-during-rollout', env, operator }, kept, steady);
      console.log(`delete-during-rollout: the rest deleted in ${deletedMs} ms`);
    },
  );
});
