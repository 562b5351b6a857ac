import { describe, expect, it } from 'vitest';
import { PHASE_OUT_WARN_AFTER_MS, phaseOutReport } from '../../../src/lifecycle/phase-out.js';

const MIN = 60_000;

describe('what a teardown says while Weka phases a drive out', () => {
  it.each([
    ['just started', 0, false, 'less than a minute', false],
    ['two and a half minutes in', 2.5 * MIN, false, '2 min', false],
    ['at the limit', PHASE_OUT_WARN_AFTER_MS, false, '30 min', true],
    ['past the limit, warned already', PHASE_OUT_WARN_AFTER_MS + 5 * MIN, true, '35 min', false],
    ['with a clock that went back', -MIN, false, 'less than a minute', false],
  ])('%s: waiting for %#', (_what, waitedMs, warned, since, warn) => {
    const report = phaseOutReport({ what: 'drive X is Y', startedMs: 1_000_000, nowMs: 1_000_000 + waitedMs, warned });
    expect(report.message).toContain(`waiting for ${since}, never forcing it`);
    expect(report.message).toContain('(drive X is Y)');
    expect(report.warn).toBe(warn);
  });
});
