// The chaos checker has teeth for releases: an operator whose release keeps counting, as found on
// the devices, the virtual drives its teardown removed (test/chaos/broken-release-operator.ts, its
// own entry point: nothing in the product can select it) runs a pressure rollout with no fault,
// in which names are deleted and created again. The devices and the statuses agree; only the
// nodes' ledgers show the GiB that were never given back, and the checker must read them.
import { describe, expect, it } from 'vitest';
import { runChaos, reportTable } from '../../chaos/engine.js';
import { chaosRandom } from '../../support/random.js';

describe('chaos: the checker against a release that keeps what it released', () => {
  it(
    'reports the GiB a ledger still counts as found on the devices when no device holds them',
    { timeout: 900_000 },
    async () => {
      const { seed } = chaosRandom('broken-release');
      const report = await runChaos({
        minutes: 0,
        seed,
        faults: [],
        faultsPerStorm: 0,
        operatorMain: 'brokenRelease',
        nodes: 2,
        // Containers that wait for the capacity the ledgers never give back do not settle: a short wait says so.
        settleTimeoutMs: 45_000,
        log: (m) => console.log(m),
      });
      console.log(reportTable(report));
      expect(report.violations.join('\n')).toMatch(
        /ledger of chaos-node-\d still counts found virtual drive [0-9a-f-]+ \(\d+ GiB\), which no device holds/,
      );
    },
  );
});
