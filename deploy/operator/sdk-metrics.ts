// The Temporal SDK's own metrics (pollers, task slots, sticky cache, task latencies, failures) on the
// operator's /metrics: Core buffers its metric updates (Runtime.install with a MetricsBuffer) and
// they are folded into series here, so one endpoint serves both the operator's and the SDK's
// metrics. prom-client's metric classes fix their label names when created, and Core emits some
// metrics with differing label sets, so the series are kept here and handed to the registry as
// plain metric objects.
import type { Registry } from 'prom-client';

/** One buffered update, as Core hands it over (BufferedMetricUpdate of @temporalio/worker). */
export interface SdkMetricUpdate {
  metric: {
    name: string;
    kind: 'counter' | 'histogram' | 'gauge' | 'up-down-counter';
    description?: string;
    unit?: string;
  };
  /** A delta for counters and up-down counters; the observation itself for gauges and histograms. */
  value: number;
  attributes: Record<string, string | number | boolean>;
}

/** Core's histograms are durations, in seconds once useSecondsForDurations is set. */
export const SDK_HISTOGRAM_BUCKETS = [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

interface Series {
  labels: Record<string, string>;
  value: number;
  /** Histograms: cumulative counts per bucket of SDK_HISTOGRAM_BUCKETS, and the sum. */
  buckets?: number[];
  sum?: number;
}

interface Family {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  series: Map<string, Series>;
}

export class SdkMetrics {
  private readonly families = new Map<string, Family>();

  constructor(private readonly registry: Registry) {}

  /** Folds the updates into their series, registering each metric the first time it is seen. */
  apply(updates: Iterable<SdkMetricUpdate>): void {
    for (const update of updates) {
      const family = this.family(update.metric);
      const labels = Object.fromEntries(Object.entries(update.attributes).map(([k, v]) => [k, String(v)]));
      const key = JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)));
      let series = family.series.get(key);
      if (!series) {
        series = {
          labels,
          value: 0,
          ...(family.type === 'histogram' ? { buckets: SDK_HISTOGRAM_BUCKETS.map(() => 0), sum: 0 } : {}),
        };
        family.series.set(key, series);
      }
      switch (update.metric.kind) {
        case 'counter':
        case 'up-down-counter':
          series.value += update.value;
          break;
        case 'gauge':
          series.value = update.value;
          break;
        case 'histogram':
          series.value += 1;
          series.sum! += update.value;
          SDK_HISTOGRAM_BUCKETS.forEach((le, i) => {
            if (update.value <= le) series.buckets![i]! += 1;
          });
          break;
      }
    }
  }

  /** Takes every SDK series off /metrics: once updates were dropped, they would only mislead. */
  forget(): void {
    for (const name of this.families.keys()) this.registry.removeSingleMetric(name);
    this.families.clear();
  }

  private family(metric: SdkMetricUpdate['metric']): Family {
    const existing = this.families.get(metric.name);
    if (existing) return existing;
    const type = metric.kind === 'histogram' ? 'histogram' : metric.kind === 'counter' ? 'counter' : 'gauge';
    const family: Family = {
      name: metric.name,
      help: `Temporal SDK: ${metric.description || metric.name}${metric.unit ? ` (${metric.unit})` : ''}`,
      type,
      series: new Map(),
    };
    this.families.set(metric.name, family);
    this.registry.registerMetric(asPromMetric(family) as never);
    return family;
  }
}

/** The shape prom-client's Registry reads from a metric: name, help, type and get(). */
function asPromMetric(family: Family) {
  return {
    name: family.name,
    help: family.help,
    type: family.type,
    aggregator: 'sum',
    reset: () => family.series.clear(),
    get: () => ({
      name: family.name,
      help: family.help,
      type: family.type,
      aggregator: 'sum',
      values: [...family.series.values()].flatMap((s) => seriesValues(family, s)),
    }),
  };
}

interface PromValue {
  metricName?: string;
  labels: Record<string, string | number>;
  value: number;
}

function seriesValues(family: Family, s: Series): PromValue[] {
  if (family.type !== 'histogram') return [{ labels: s.labels, value: s.value }];
  return [
    ...SDK_HISTOGRAM_BUCKETS.map((le, i) => ({
      metricName: `${family.name}_bucket`,
      labels: { ...s.labels, le },
      value: s.buckets![i]!,
    })),
    { metricName: `${family.name}_bucket`, labels: { ...s.labels, le: '+Inf' }, value: s.value },
    { metricName: `${family.name}_sum`, labels: s.labels, value: s.sum! },
    { metricName: `${family.name}_count`, labels: s.labels, value: s.value },
  ];
}
