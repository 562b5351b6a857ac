// Scraping the operator: the metrics Service, the prometheus-operator ServiceMonitor or PodMonitor,
// the Grafana dashboard and the PrometheusRule, whose every query must read only metrics the
// operator exports.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  dashboardQueries,
  DASHBOARD_PATH,
  labelNamesInQuery,
  metricNamesInQuery,
  readDashboard,
} from '../../support/dashboard-queries.js';
import {
  HELM_BUILD_TIMEOUT_MS,
  helmBinary,
  onlyOne,
  renderChart,
  type Manifest,
  type RenderOptions,
} from '../../support/helm-chart.js';

/**
 * The metrics the operator exports (/metrics): its own, the Temporal SDK's and prom-client's
 * defaults, with their labels. Histograms are read through _bucket, _sum and _count.
 */
const OPERATOR_METRICS: Record<string, { type: 'gauge' | 'counter' | 'histogram'; labels: string[] }> = {
  weka_drives_build_info: { type: 'gauge', labels: ['version', 'node_version'] },
  weka_drives_allocation_duration_seconds: { type: 'histogram', labels: ['result'] },
  weka_drives_workflow_step_duration_seconds: { type: 'histogram', labels: ['activity', 'result'] },
  weka_drives_cli_calls_total: { type: 'counter', labels: ['command', 'result'] },
  weka_drives_node_mutex_queue_depth: { type: 'gauge', labels: ['node'] },
  weka_drives_node_mutex_busy: { type: 'gauge', labels: ['node'] },
  weka_drives_node_mutex_wait_seconds: { type: 'histogram', labels: ['activity'] },
  weka_drives_watcher_actions_total: { type: 'counter', labels: ['kind', 'action', 'result'] },
  weka_drives_workqueue_depth: { type: 'gauge', labels: [] },
  weka_drives_bringups_in_flight: { type: 'gauge', labels: [] },
  weka_drives_bringups_waiting: { type: 'gauge', labels: [] },
  weka_drives_workqueue_queue_duration_seconds: { type: 'histogram', labels: [] },
  weka_drives_workqueue_work_duration_seconds: { type: 'histogram', labels: [] },
  weka_drives_workqueue_retries_total: { type: 'counter', labels: [] },
  weka_drives_node_capacity_bytes: { type: 'gauge', labels: ['node', 'drive_type', 'state'] },
  weka_drives_node_books_readable: { type: 'gauge', labels: ['node'] },
  temporal_workflow_task_schedule_to_start_latency: { type: 'histogram', labels: [] },
  temporal_activity_execution_failed: { type: 'counter', labels: [] },
  temporal_sticky_cache_size: { type: 'gauge', labels: [] },
  temporal_worker_task_slots_available: { type: 'gauge', labels: ['worker_type'] },
  process_resident_memory_bytes: { type: 'gauge', labels: [] },
  process_cpu_seconds_total: { type: 'counter', labels: [] },
  nodejs_eventloop_lag_seconds: { type: 'gauge', labels: [] },
};
/** Labels Prometheus adds to every scraped series. */
const TARGET_LABELS = ['job', 'instance'];

/** Every series name a query may read, each with the labels it has. */
const SERIES: Map<string, string[]> = new Map(
  Object.entries(OPERATOR_METRICS).flatMap(([name, { type, labels }]) =>
    type === 'histogram'
      ? [
          [`${name}_bucket`, [...labels, 'le']],
          [`${name}_sum`, labels],
          [`${name}_count`, labels],
        ]
      : [[name, labels]],
  ),
);

describe('metric and label names in a query', () => {
  it.each([
    ['rate(weka_drives_cli_calls_total{job=~"$job"}[$__rate_interval])', ['weka_drives_cli_calls_total'], ['job']],
    [
      'histogram_quantile(0.95, sum by (le, activity) (rate(a_bucket{job=~"x", result="error"}[5m])))',
      ['a_bucket'],
      ['activity', 'job', 'le', 'result'],
    ],
    [
      'sum without (instance) (up) / on (job) group_left (version) b offset 5m',
      ['b', 'up'],
      ['instance', 'job', 'version'],
    ],
    ['count(max by (node) (m{a="{not} a, label"}) > 0) and bool n', ['m', 'n'], ['a', 'node']],
    ['label_values(weka_drives_build_info, job)', ['weka_drives_build_info'], ['job']],
  ])('%s', (expr, metrics, labels) => {
    expect(metricNamesInQuery(expr)).toEqual(metrics);
    expect(labelNamesInQuery(expr)).toEqual(labels);
  });
});

describe('the Grafana dashboard', () => {
  const queries = dashboardQueries(readDashboard());

  it('has queries in every panel', () => {
    const panels = (readDashboard().panels ?? []) as Array<{ type: string; title: string; targets?: unknown[] }>;
    const empty = panels.filter((p) => p.type !== 'row' && !p.targets?.length).map((p) => p.title);
    expect(empty).toEqual([]);
    expect(queries.length).toBeGreaterThan(15);
  });

  it('reads only metrics the operator exports', () => {
    const unknown = queries.flatMap((q) =>
      metricNamesInQuery(q.expr)
        .filter((name) => !SERIES.has(name))
        .map((name) => `${q.where}: ${name}`),
    );
    expect(unknown).toEqual([]);
  });

  it("names only labels those metrics have, or the scrape's job and instance", () => {
    const unknown = queries.flatMap((q) => {
      const known = new Set([...TARGET_LABELS, ...metricNamesInQuery(q.expr).flatMap((n) => SERIES.get(n) ?? [])]);
      return labelNamesInQuery(q.expr)
        .filter((label) => !known.has(label))
        .map((label) => `${q.where}: ${label}`);
    });
    expect(unknown).toEqual([]);
  });

  it('shows every metric the operator exports', () => {
    const read = new Set(queries.flatMap((q) => metricNamesInQuery(q.expr)));
    const unshown = Object.keys(OPERATOR_METRICS).filter(
      (name) => ![name, `${name}_bucket`, `${name}_sum`, `${name}_count`].some((series) => read.has(series)),
    );
    expect(unshown).toEqual([]);
  });
});

const rendered = (o: RenderOptions, kind: string) => renderChart(o).then((m) => m.filter((x) => x.kind === kind));
type Selecting = Manifest & { spec: { selector: { matchLabels: Record<string, string> } } };
const matches = (selector: Record<string, string>, labels: Record<string, string> = {}) =>
  Object.entries(selector).every(([k, v]) => labels[k] === v);

let defaults: Manifest[];
beforeAll(async () => {
  await helmBinary();
  defaults = await renderChart({ release: 'weka', namespace: 'weka-system' });
}, HELM_BUILD_TIMEOUT_MS);

describe('the metrics Service', () => {
  it("exposes the operator's HTTP port as http, selecting only the operator's pods", async () => {
    const service = onlyOne(await renderChart({ values: { http: { port: 9191 } } }), 'Service') as Selecting & {
      spec: { selector: Record<string, string>; ports: unknown[] };
    };
    expect(service.spec.ports).toEqual([{ name: 'http', port: 9191, targetPort: 'http', protocol: 'TCP' }]);
    const deployment = onlyOne(defaults, 'Deployment') as Selecting;
    expect(service.spec.selector).toEqual(deployment.spec.selector.matchLabels);
  });

  it.each([
    ['http.port is 0', { http: { port: 0 } }],
    ['metrics.service.enabled is false', { metrics: { service: { enabled: false } } }],
  ])('is left out when %s', async (_name, values) => {
    expect(await rendered({ values }, 'Service')).toEqual([]);
  });
});

describe('the ServiceMonitor and PodMonitor', () => {
  it('are off by default, and so is the dashboard', () => {
    expect(defaults.map((m) => m.kind)).not.toContain('ServiceMonitor');
    expect(defaults.map((m) => m.kind)).not.toContain('PodMonitor');
    expect(defaults.map((m) => m.kind)).not.toContain('ConfigMap');
  });

  it("scrape /metrics on the metrics Service's http port, with the given interval, timeout, labels and namespace", async () => {
    const values = {
      metrics: {
        serviceMonitor: {
          enabled: true,
          namespace: 'monitoring',
          interval: '15s',
          scrapeTimeout: '5s',
          labels: { release: 'kube-prometheus-stack' },
        },
      },
    };
    const manifests = await renderChart({ namespace: 'weka-system', values });
    const monitor = onlyOne(manifests, 'ServiceMonitor') as Selecting & {
      spec: { namespaceSelector: unknown; endpoints: unknown[] };
    };
    expect(monitor.apiVersion).toBe('monitoring.coreos.com/v1');
    expect(monitor.metadata.namespace).toBe('monitoring');
    expect(monitor.metadata.labels).toMatchObject({ release: 'kube-prometheus-stack' });
    expect(monitor.spec.namespaceSelector).toEqual({ matchNames: ['weka-system'] });
    expect(monitor.spec.endpoints).toEqual([{ port: 'http', path: '/metrics', interval: '15s', scrapeTimeout: '5s' }]);
    const service = onlyOne(manifests, 'Service');
    expect(matches(monitor.spec.selector.matchLabels, service.metadata.labels)).toBe(true);
  });

  it("scrape each operator pod's http port with a PodMonitor, in the release namespace by default", async () => {
    const manifests = await renderChart({
      namespace: 'weka-system',
      values: { metrics: { podMonitor: { enabled: true } } },
    });
    const monitor = onlyOne(manifests, 'PodMonitor') as Selecting & {
      spec: { namespaceSelector: unknown; podMetricsEndpoints: unknown[] };
    };
    expect(monitor.metadata.namespace).toBe('weka-system');
    expect(monitor.spec.namespaceSelector).toEqual({ matchNames: ['weka-system'] });
    expect(monitor.spec.podMetricsEndpoints).toEqual([
      { port: 'http', path: '/metrics', interval: '30s', scrapeTimeout: '10s' },
    ]);
    const pods = (
      onlyOne(manifests, 'Deployment') as unknown as {
        spec: { template: { metadata: { labels: Record<string, string> } } };
      }
    ).spec.template.metadata.labels;
    expect(matches(monitor.spec.selector.matchLabels, pods)).toBe(true);
  });

  it.each([
    [
      'both at once',
      { metrics: { serviceMonitor: { enabled: true }, podMonitor: { enabled: true } } },
      /metrics.serviceMonitor.enabled and metrics.podMonitor.enabled are both true: turn on one of them/,
    ],
    [
      'a ServiceMonitor without the Service',
      { metrics: { serviceMonitor: { enabled: true }, service: { enabled: false } } },
      /metrics.serviceMonitor.enabled needs metrics.service.enabled/,
    ],
    [
      'a monitor with the HTTP port off',
      { http: { port: 0 }, metrics: { podMonitor: { enabled: true } } },
      /need the operator's HTTP port: http.port is 0/,
    ],
  ])('refuse %s', async (_name, values, message) => {
    await expect(renderChart({ values })).rejects.toThrow(message);
  });
});

describe("the Grafana dashboard's ConfigMap", () => {
  type ConfigMap = Manifest & { data: Record<string, string> };

  it('holds dashboards/weka-drives.json, labelled for the Grafana sidecar', async () => {
    const values = { metrics: { grafanaDashboard: { enabled: true } } };
    const map = onlyOne(await renderChart({ namespace: 'weka-system', values }), 'ConfigMap') as ConfigMap;
    expect(map.metadata.namespace).toBe('weka-system');
    expect(map.metadata.labels).toMatchObject({ grafana_dashboard: '1' });
    expect(map.data).toEqual({ 'weka-drives.json': readFileSync(DASHBOARD_PATH, 'utf8').trimEnd() });
  });

  it('takes its label, annotations and namespace from the values', async () => {
    const values = {
      metrics: {
        grafanaDashboard: {
          enabled: true,
          namespace: 'grafana',
          labelKey: 'dashboards',
          labelValue: 'weka',
          annotations: { grafana_folder: 'Weka' },
        },
      },
    };
    const map = onlyOne(await renderChart({ values }), 'ConfigMap') as ConfigMap;
    expect(map.metadata.namespace).toBe('grafana');
    expect(map.metadata.labels).toMatchObject({ dashboards: 'weka' });
    expect(map.metadata.labels).not.toHaveProperty('grafana_dashboard');
    expect(map.metadata.annotations).toEqual({ grafana_folder: 'Weka' });
  });
});

describe('the PrometheusRule', () => {
  type Rule = Manifest & {
    spec: { groups: Array<{ rules: Array<{ alert: string; expr: string; for: string; labels: unknown }> }> };
  };
  const rules = (rule: Rule) => rule.spec.groups.flatMap((g) => g.rules);

  it('is off by default', () => {
    expect(defaults.map((m) => m.kind)).not.toContain('PrometheusRule');
  });

  it("alerts on the nodes' books, with the given duration, severity, labels and namespace", async () => {
    const values = {
      metrics: {
        prometheusRule: {
          enabled: true,
          namespace: 'monitoring',
          for: '15m',
          severity: 'critical',
          labels: { a: 'b' },
        },
      },
    };
    const rule = onlyOne(await renderChart({ values }), 'PrometheusRule') as Rule;
    expect(rule.apiVersion).toBe('monitoring.coreos.com/v1');
    expect(rule.metadata.namespace).toBe('monitoring');
    expect(rule.metadata.labels).toMatchObject({ a: 'b' });
    expect(rules(rule).map((r) => [r.alert, r.for, r.labels])).toEqual([
      ['WekaDrivesBooksUnbalanced', '15m', { severity: 'critical' }],
      ['WekaDrivesBooksUnreadable', '15m', { severity: 'critical' }],
    ]);
  });

  it('reads only metrics the operator exports, by labels they have', async () => {
    const values = { metrics: { prometheusRule: { enabled: true } } };
    const rule = onlyOne(await renderChart({ values }), 'PrometheusRule') as Rule;
    for (const { alert, expr } of rules(rule)) {
      const metrics = metricNamesInQuery(expr);
      expect(
        metrics.filter((name) => !SERIES.has(name)),
        alert,
      ).toEqual([]);
      const known = new Set(metrics.flatMap((n) => SERIES.get(n) ?? []));
      expect(
        labelNamesInQuery(expr).filter((label) => !known.has(label)),
        alert,
      ).toEqual([]);
    }
  });
});
