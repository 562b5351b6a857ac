// The chaos checker has teeth for lost pods: an operator whose watcher does not watch the
// operator's pods (test/chaos/broken-pod-watch-operator.ts, its own entry point: nothing in the
// product can select it) runs a rollout under storms of deleted and evicted pods. Its Ready
// containers whose pods were deleted stay Ready with no pod, and the checker must say so.
import { describe, expect, it } from 'vitest';
import { runChaos, reportTable } from '../../chaos/engine.js';
import { chaosRandom } from '../../support/random.js';

describe('chaos: the checker against an operator that does not watch its pods', () => {
  it('reports a Ready container whose pod does not run', { timeout: 900_000 }, async () => {
    const { seed } = chaosRandom('broken-pod-watch');
    const report = await runChaos({
      minutes: 0,
      seed,
      faults: ['pod-deleted'],
      faultsPerStorm: 3,
      operatorMain: 'brokenPodWatch',
      nodes: 2,
      settleTimeoutMs: 120_000,
      log: (m) => console.log(m),
    });
    console.log(reportTable(report));
    expect(report.violations.join('\n')).toMatch(/Ready but its (pod|node's ssdproxy pod .*) does not run/);
  });
});
