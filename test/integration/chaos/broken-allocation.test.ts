// The chaos checker has teeth: an operator whose allocation decisions do not count one
// container's claims (test/chaos/broken-allocation-operator.ts, its own entry point: nothing in
// the product can select it) runs a pressure rollout with no fault at all. The simulator records
// an over-commit instead of refusing it, so the checker, not the simulator, must tell: it does, at
// rest and at every instant.
import { describe, expect, it } from 'vitest';
import { runChaos, reportTable } from '../../chaos/engine.js';
import { chaosRandom } from '../../support/random.js';

describe('chaos: the checker against a broken allocation', () => {
  it('reports the double allocation, at rest and at every instant of the statuses', { timeout: 900_000 }, async () => {
    const { seed } = chaosRandom('broken-allocation');
    const report = await runChaos({
      minutes: 0,
      seed,
      faults: [],
      faultsPerStorm: 0,
      operatorMain: 'brokenAllocation',
      nodes: 2,
      // Containers the operator's own device check refused never settle: a short wait says so.
      settleTimeoutMs: 45_000,
      log: (m) => console.log(m),
    });
    console.log(reportTable(report));
    const text = report.violations.join('\n');
    // At rest, from the statuses. (The operator's own device check refuses most of the signings;
    // whether one slips through for the device checks to see is a matter of timing.)
    expect(text).toMatch(/statuses allocate \d+ GiB of chaos-node-\d \/dev\/nvme\dn1, which has \d+ GiB/);
    // At every instant, from the audit log.
    expect(text).toMatch(/statuses at every instant: .*over-committed/);
  });
});
