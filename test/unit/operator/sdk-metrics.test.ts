// The Temporal SDK's buffered metric updates, folded into the operator's Prometheus registry.
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { SdkMetrics, type SdkMetricUpdate } from '../../../deploy/operator/sdk-metrics.js';

const counter = {
  name: 'temporal_activity_execution_failed',
  kind: 'counter',
  description: 'Activity failures',
} as const;
const gauge = { name: 'temporal_sticky_cache_size', kind: 'gauge' } as const;
const histogram = { name: 'temporal_workflow_task_schedule_to_start_latency', kind: 'histogram', unit: 's' } as const;

describe('Temporal SDK metrics on /metrics', () => {
  it('adds counter deltas, keeps a gauge at its last value, and counts histogram observations into buckets', async () => {
    const registry = new Registry();
    const sdk = new SdkMetrics(registry);
    const q = { task_queue: 'weka-drives' };
    const updates: SdkMetricUpdate[] = [
      { metric: counter, value: 1, attributes: { ...q, activity_type: 'ensureProxy' } },
      { metric: counter, value: 2, attributes: { activity_type: 'ensureProxy', ...q } },
      { metric: gauge, value: 10, attributes: q },
      { metric: gauge, value: 3, attributes: q },
      { metric: histogram, value: 0.02, attributes: q },
      { metric: histogram, value: 7, attributes: q },
    ];
    sdk.apply(updates);
    const text = await registry.metrics();
    expect(text).toContain('# TYPE temporal_activity_execution_failed counter');
    expect(text).toContain(
      'temporal_activity_execution_failed{task_queue="weka-drives",activity_type="ensureProxy"} 3',
    );
    expect(text).toContain('temporal_sticky_cache_size{task_queue="weka-drives"} 3');
    expect(text).toContain(
      'temporal_workflow_task_schedule_to_start_latency_bucket{task_queue="weka-drives",le="0.01"} 0',
    );
    expect(text).toContain(
      'temporal_workflow_task_schedule_to_start_latency_bucket{task_queue="weka-drives",le="0.05"} 1',
    );
    expect(text).toContain(
      'temporal_workflow_task_schedule_to_start_latency_bucket{task_queue="weka-drives",le="10"} 2',
    );
    expect(text).toContain(
      'temporal_workflow_task_schedule_to_start_latency_bucket{task_queue="weka-drives",le="+Inf"} 2',
    );
    expect(text).toContain('temporal_workflow_task_schedule_to_start_latency_sum{task_queue="weka-drives"} 7.02');
    expect(text).toContain('temporal_workflow_task_schedule_to_start_latency_count{task_queue="weka-drives"} 2');
  });

  it('keeps one metric whose updates come with differing label sets, each set its own series', async () => {
    const registry = new Registry();
    const sdk = new SdkMetrics(registry);
    sdk.apply([{ metric: counter, value: 1, attributes: { task_queue: 'a' } }]);
    sdk.apply([{ metric: counter, value: 1, attributes: { task_queue: 'a', failure_reason: 'timeout' } }]);
    const text = await registry.metrics();
    expect(text).toContain('temporal_activity_execution_failed{task_queue="a"} 1');
    expect(text).toContain('temporal_activity_execution_failed{task_queue="a",failure_reason="timeout"} 1');
    expect(text.match(/# TYPE temporal_activity_execution_failed/g)).toHaveLength(1);
  });
});
