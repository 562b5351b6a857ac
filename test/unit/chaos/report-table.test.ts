import { describe, expect, it } from 'vitest';
import { reportTable, type ChaosReport } from '../../chaos/engine.js';
import { FAULT_CLASSES } from '../../chaos/faults.js';

function report(over: Partial<ChaosReport> = {}): ChaosReport {
  return {
    seed: 42,
    rounds: 3,
    elapsedMs: 61 * 60_000,
    faults: Object.fromEntries(
      FAULT_CLASSES.map((f, i) => [f, { injected: i + 1, survived: i + 1 }]),
    ) as ChaosReport['faults'],
    checks: {
      settled: 6,
      steadyState: 6,
      allDeleted: 3,
      containersChecked: 150,
      statusInstants: 4000,
      simulatorInstants: 900,
    },
    fill: [1, 0.97],
    watchExpiries: 5,
    violations: [],
    ...over,
  };
}

describe('the chaos report table', () => {
  it('lists every fault class with its counts, a total, the checks made and the violations', () => {
    const text = reportTable(report());
    for (const [i, f] of FAULT_CLASSES.entries()) expect(text).toMatch(new RegExp(`^${f} +${i + 1} +${i + 1}$`, 'm'));
    const total = (FAULT_CLASSES.length * (FAULT_CLASSES.length + 1)) / 2;
    expect(text).toMatch(new RegExp(`^all +${total} +${total}$`, 'm'));
    expect(text).toContain('seed 42 (replay the choices with CHAOS_SEED=42), 3 rounds in 61 min');
    expect(text).toContain(
      '6 settled, 6 steady-state (150 containers), 3 all-deleted, 4000 status writes and 900 device changes replayed',
    );
    expect(text).toContain('100.0 %, 97.0 %');
    expect(text).toMatch(/^violations: 0$/m);
  });

  it('shows the violations and where the evidence is kept', () => {
    const text = reportTable(report({ violations: ['round 1: device over-committed'], artifacts: '/tmp/x' }));
    expect(text).toMatch(/^violations: 1\n {2}round 1: device over-committed$/m);
    expect(text).toContain('evidence kept in /tmp/x');
  });
});
