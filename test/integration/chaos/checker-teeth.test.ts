// The chaos checker has teeth: an operator broken three ways at once (test/chaos/broken-operator.ts,
// its own entry point: nothing in the product can select it) runs a pressure rollout, in which
// names are deleted and created again, under storms of deleted and evicted pods. Each way it is
// broken must be reported by the check made for it:
// - allocations that do not count one container's claims: the simulator records the over-commit
//   instead of refusing it, so the checker, not the simulator, must tell, at rest and at every
//   instant of the statuses;
// - a release that keeps counting as found on the devices what its teardown removed: the devices
//   and the statuses agree, only the nodes' ledgers show it, and the checker must read them;
// - a watcher that does not watch the operator's pods: a Ready container whose pod was deleted
//   stays Ready with no pod.
import { describe, expect, it } from 'vitest';
import { runChaos, reportTable } from '../../chaos/engine.js';
import { chaosRandom } from '../../support/random.js';
import { runAsHeavyFile } from '../../support/heavy-files.js';

runAsHeavyFile();

describe('chaos: the checker against a broken operator', () => {
  it(
    'reports the double allocation, the GiB a ledger keeps after a release, and a Ready container without its pod',
    { timeout: 900_000 },
    async () => {
      const { seed } = chaosRandom('broken-operator');
      const report = await runChaos({
        minutes: 0,
        seed,
        faults: ['pod-deleted'],
        faultsPerStorm: 3,
        operatorMain: 'broken',
        nodes: 2,
        // Containers refused by the operator's own device check, or waiting for the GiB the ledgers
        // never give back, do not settle: a short wait says so.
        settleTimeoutMs: 45_000,
        // The ledger's bug shows only in a release that removes signed drives: the names deleted and
        // created again are Ready ones.
        recreateReady: true,
        log: (m) => console.log(m),
      });
      console.log(reportTable(report));
      const text = report.violations.join('\n');
      // At rest, from the statuses. (The operator's own device check refuses most of the signings;
      // whether one slips through for the device checks to see is a matter of timing.)
      expect(text).toMatch(/statuses allocate \d+ GiB of chaos-node-\d \/dev\/nvme\dn1, which has \d+ GiB/);
      // At every instant, from the audit log.
      expect(text).toMatch(/statuses at every instant: .*over-committed/);
      expect(text).toMatch(
        /ledger of chaos-node-\d still counts found virtual drive [0-9a-f-]+ \(\d+ GiB\), which no device holds/,
      );
      expect(text).toMatch(/Ready but its (pod|node's ssdproxy pod .*) does not run/);
    },
  );
});
