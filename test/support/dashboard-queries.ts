// The Prometheus queries of the chart's Grafana dashboard (dashboards/weka-drives.json) and the
// metric names they read, so that a test can check every name against the operator's metrics: the
// list in test/unit/helm/metrics.test.ts, or a live /metrics.
import { readFileSync } from 'node:fs';
import { CHART_DIR } from './helm-chart.js';

export const DASHBOARD_PATH = `${CHART_DIR}/dashboards/weka-drives.json`;

export interface DashboardQuery {
  /** Panel title, or "variable <name>" for a templating variable. */
  where: string;
  expr: string;
}

interface Panel {
  title?: string;
  targets?: Array<{ expr?: string }>;
  panels?: Panel[];
}
interface Dashboard {
  panels?: Panel[];
  templating?: { list?: Array<{ name: string; type: string; query?: string | { query?: string } }> };
}

export function readDashboard(path = DASHBOARD_PATH): Dashboard {
  return JSON.parse(readFileSync(path, 'utf8')) as Dashboard;
}

/** Every PromQL expression of every panel (rows' panels included) and query variable. */
export function dashboardQueries(dashboard: Dashboard): DashboardQuery[] {
  const fromPanels = (panels: Panel[]): DashboardQuery[] =>
    panels.flatMap((p) => [
      ...(p.targets ?? []).flatMap((t) => (t.expr ? [{ where: p.title ?? '(untitled)', expr: t.expr }] : [])),
      ...fromPanels(p.panels ?? []),
    ]);
  const fromVariables = (dashboard.templating?.list ?? [])
    .filter((v) => v.type === 'query')
    .map((v) => ({
      where: `variable ${v.name}`,
      expr: typeof v.query === 'string' ? v.query : (v.query?.query ?? ''),
    }));
  return [...fromPanels(dashboard.panels ?? []), ...fromVariables];
}

/** PromQL words that are not metric names where a name could stand. */
const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'offset',
  'and',
  'or',
  'unless',
  'inf',
  'nan',
]);

/**
 * The metric names a PromQL expression (or a Grafana label_values(metric, label) query) reads:
 * every identifier that is not a function call, a keyword, a label (in braces or in a grouping
 * clause), a string, a duration or a Grafana variable.
 */
export function metricNamesInQuery(expr: string): string[] {
  const labelValues = /^\s*label_values\(\s*([^,)]+?)\s*(?:,[^)]*)?\)\s*$/.exec(expr);
  if (labelValues) return metricNamesInQuery(labelValues[1]!);
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, ' ') // strings
    .replace(/\{[^}]*\}/g, ' ') // label matchers
    .replace(/\[[^\]]*\]/g, ' ') // ranges and subqueries
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ') // grouping labels
    .replace(/\$\{?\w+\}?/g, ' '); // Grafana variables
  const names = new Set<string>();
  for (const m of stripped.matchAll(/(?<![\w.])([A-Za-z_:][A-Za-z0-9_:]*)(\s*\()?/g)) {
    const [, word, call] = m;
    if (call || KEYWORDS.has(word!.toLowerCase())) continue;
    names.add(word!);
  }
  return [...names].sort();
}

/** The label names a PromQL expression names: in label matchers and in grouping clauses. */
export function labelNamesInQuery(expr: string): string[] {
  const names = new Set<string>();
  const withoutStrings = expr.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""');
  for (const [, matchers] of withoutStrings.matchAll(/\{([^}]*)\}/g))
    for (const [, label] of matchers!.matchAll(/([A-Za-z_][A-Za-z0-9_]*)\s*(?:=~|!~|!=|=)/g)) names.add(label!);
  for (const [, labels] of withoutStrings.matchAll(
    /\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g,
  ))
    for (const label of labels!.split(',').map((l) => l.trim())) if (label) names.add(label);
  const labelValues = /^\s*label_values\([^,]+,\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)\s*$/.exec(expr);
  if (labelValues) names.add(labelValues[1]!);
  return [...names].sort();
}
