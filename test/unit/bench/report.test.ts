// How the benchmark summarises a figure measured over several runs (npm run bench -- --lease-runs R).
import { describe, expect, it } from 'vitest';
import { overRuns } from '../../bench/report.js';

describe('a figure over several benchmark runs', () => {
  it.each([
    { values: [6.1], median: 6.1 },
    { values: [7, 5, 6], median: 6 },
    { values: [4.9, 8.9, 5.3, 6.0], median: 5.65 },
    { values: [2, 2, 9, 9], median: 5.5 },
  ])('takes the median of $values as $median, whatever order the runs came in', ({ values, median }) => {
    expect(overRuns(values, () => true).median).toBeCloseTo(median, 10);
    expect(overRuns([...values].reverse(), () => true).median).toBeCloseTo(median, 10);
  });

  it('reports the range and how many runs met the goal', () => {
    const ratios = [5.02, 4.92, 6.0, 8.9, 5.3];
    expect(overRuns(ratios, (x) => x >= 5)).toEqual({ n: 5, median: 5.3, min: 4.92, max: 8.9, met: 4 });
    expect(overRuns([58, 360, 47], (ms) => ms < 50)).toEqual({ n: 3, median: 58, min: 47, max: 360, met: 1 });
  });

  it('refuses an empty list rather than reporting NaN as a figure', () => {
    expect(() => overRuns([], () => true)).toThrow(/no runs/);
  });
});
