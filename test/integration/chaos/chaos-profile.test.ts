// The short chaos profile, part of npm test: one round of a pressure rollout (125 % of the nodes'
// capacity over two namespaces and two Weka clusters, names deleted and created again) with two
// operator replicas, under storms drawn from every fault class, on a control plane of the chaos
// engine's own. Everything must settle, the invariants must hold at rest after each storm and at
// every instant of the audit log and the simulator's command logs. The seed is fresh each run and
// printed first (CHAOS_SEED replays its choices); `npm run chaos -- --minutes N` is the long profile.
import { describe, expect, it } from 'vitest';
import { runChaos, reportTable } from '../../chaos/engine.js';
import { FAULT_CLASSES } from '../../chaos/faults.js';
import { chaosRandom } from '../../support/random.js';
import { runAsHeavyFile } from '../../support/heavy-files.js';

runAsHeavyFile();

describe('chaos: the short profile', () => {
  it(
    'settles with every invariant holding through a storm of faults under a rollout larger than the nodes',
    { timeout: 1_500_000 },
    async () => {
      const { seed } = chaosRandom('profile');
      const report = await runChaos({
        minutes: 0,
        seed,
        faults: FAULT_CLASSES,
        faultsPerStorm: 4,
        pace: 'short',
        log: (m) => console.log(m),
      });
      console.log(reportTable(report));
      expect(report.violations).toEqual([]);
      expect(report.checks.statusInstants).toBeGreaterThan(0);
      expect(report.checks.simulatorInstants).toBeGreaterThan(0);
      expect(report.fill.length, 'rounds whose rollout settled').toBeGreaterThan(0);
    },
  );
});
