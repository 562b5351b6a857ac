// The summary table every benchmark contributes rows to, and number formatting shared by them.
import { median, percentile } from './bench-env.js';

export interface BenchRow {
  benchmark: string;
  figure: string;
  goal: string;
  /** undefined: no goal, or nothing to compare. */
  met?: boolean;
}

export function printTable(rows: readonly BenchRow[]): string {
  const header = ['benchmark', 'figure', 'goal', 'met?'];
  const cells = rows.map((r) => [r.benchmark, r.figure, r.goal, r.met === undefined ? '-' : r.met ? 'yes' : 'NO']);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => `| ${c.map((x, i) => x.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...cells.map(line)].join('\n');
}

export const seconds = (ms: number): string => `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
export const millis = (ms: number): string =>
  Number.isNaN(ms) ? 'n/a' : ms < 10 ? `${ms.toFixed(1)} ms` : `${Math.round(ms)} ms`;
export const ratio = (x: number): string => `${x.toFixed(1)}x`;

/** p50 / p99 / max of a list of durations, in ms. */
export function spread(values: readonly number[]): { n: number; p50: number; p99: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? Number.NaN,
  };
}

/** A figure over several runs of one benchmark: its median, its range, and how many runs met a goal. */
export interface OverRuns {
  n: number;
  median: number;
  min: number;
  max: number;
  /** Runs whose figure met the goal. */
  met: number;
}

/** `meets` says whether one run's figure met the goal (e.g. a ratio at least 5, a latency under 50 ms). */
export function overRuns(values: readonly number[], meets: (value: number) => boolean): OverRuns {
  if (values.length === 0) throw new Error('overRuns: no runs');
  return {
    n: values.length,
    median: median(values),
    min: Math.min(...values),
    max: Math.max(...values),
    met: values.filter(meets).length,
  };
}
