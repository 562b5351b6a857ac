// The operator's activity instrumentation: step times for every activity, and for the activities a
// mutex executes, how long their request waited in the queue.
import { describe, expect, it } from 'vitest';
import { OperatorMetrics } from '../../../deploy/operator/metrics.js';
import { stampQueuedAt } from '../../../src/node/mutex-queue.js';

async function waitSamples(metrics: OperatorMetrics): Promise<Map<string, { count: number; sum: number }>> {
  const byActivity = new Map<string, { count: number; sum: number }>();
  for (const v of (await metrics.mutexWait.get()).values) {
    const activity = String(v.labels.activity);
    const entry = byActivity.get(activity) ?? { count: 0, sum: 0 };
    if (v.metricName === 'weka_drives_node_mutex_wait_seconds_count') entry.count = v.value;
    if (v.metricName === 'weka_drives_node_mutex_wait_seconds_sum') entry.sum = v.value;
    byActivity.set(activity, entry);
  }
  return byActivity;
}

describe('operator metrics instrumentation', () => {
  it('observes the queue wait of a stamped request when the mutex executes it', async () => {
    const metrics = new OperatorMetrics({ processMetrics: false });
    const release = metrics.instrument('releaseAllocation', async (_input: unknown) => ({ ok: true }));
    await release(stampQueuedAt({ namespace: 'ns', name: 'a', node: 'n1' }, Date.now() - 2_000));
    const samples = await waitSamples(metrics);
    expect(samples.get('releaseAllocation')?.count).toBe(1);
    expect(samples.get('releaseAllocation')?.sum).toBeGreaterThanOrEqual(2);
    expect(samples.get('releaseAllocation')?.sum).toBeLessThan(10);
  });

  it('observes no wait for activities outside a mutex or requests without a stamp', async () => {
    const metrics = new OperatorMetrics({ processMetrics: false });
    await metrics.instrument(
      'addDrivesToCluster',
      async (_input: unknown) => undefined,
    )(stampQueuedAt({ node: 'n1' }, Date.now() - 1_000));
    await metrics.instrument('releaseAllocation', async (_input: unknown) => ({ ok: true }))({
      namespace: 'ns',
      name: 'a',
      node: 'n1',
    });
    expect([...(await waitSamples(metrics)).values()].every((s) => s.count === 0)).toBe(true);
  });

  it('still times the step and passes the error on when the activity fails', async () => {
    const metrics = new OperatorMetrics({ processMetrics: false });
    const failing = metrics.instrument('ensureProxy', async (_input: unknown) => {
      throw new Error('apiserver down');
    });
    await expect(failing(stampQueuedAt({ node: 'n1' }, Date.now()))).rejects.toThrow('apiserver down');
    expect((await waitSamples(metrics)).get('ensureProxy')?.count).toBe(1);
    const steps = (await metrics.stepDuration.get()).values.find(
      (v) => v.metricName === 'weka_drives_workflow_step_duration_seconds_count',
    );
    expect(steps?.labels).toEqual({ activity: 'ensureProxy', result: 'error' });
  });

  it('observes each container of a batch allocation: its own queue wait, and an allocation time by its own result', async () => {
    const metrics = new OperatorMetrics({ processMetrics: false });
    const batch = metrics.instrument('allocateForContainers', async (_input: unknown) => [
      { ok: true },
      { ok: false, error: { type: 'InsufficientDriveCapacity', message: 'full' } },
      { ok: true },
    ]);
    const now = Date.now();
    const containers = [3_000, 1_000, 0].map((ago, i) =>
      stampQueuedAt({ namespace: 'ns', name: `c${i}`, node: 'n1' }, now - ago),
    );
    await batch({ node: 'n1', containers });
    const waits = (await waitSamples(metrics)).get('allocateForContainers');
    expect(waits?.count).toBe(3);
    expect(waits?.sum).toBeGreaterThanOrEqual(4);
    expect(waits?.sum).toBeLessThan(10);
    const counts = Object.fromEntries(
      (await metrics.allocationDuration.get()).values
        .filter((v) => v.metricName === 'weka_drives_allocation_duration_seconds_count')
        .map((v) => [String(v.labels.result), v.value]),
    );
    expect(counts).toEqual({ allocated: 2, refused: 1 });
    const step = (await metrics.stepDuration.get()).values.find(
      (v) => v.metricName === 'weka_drives_workflow_step_duration_seconds_count',
    );
    expect(step?.labels).toEqual({ activity: 'allocateForContainers', result: 'ok' });
  });

  it('names its version and the Node.js version in weka_drives_build_info', async () => {
    const metrics = new OperatorMetrics({ processMetrics: false, version: '1.2.3' });
    const text = await metrics.registry.metrics();
    expect(text).toContain(`weka_drives_build_info{version="1.2.3",node_version="${process.version}"} 1`);
  });

  it('exports every metric under the weka_drives_ prefix, apart from the process metrics', async () => {
    const metrics = new OperatorMetrics({ processMetrics: false });
    const names = metrics.registry.getMetricsAsArray().map((m) => m.name);
    expect(names.length).toBeGreaterThan(10);
    expect(names.filter((n) => !n.startsWith('weka_drives_'))).toEqual([]);
  });
});

describe("the nodes' books", () => {
  const series = async (metrics: OperatorMetrics) =>
    (await metrics.nodeCapacity.get()).values
      .map((v) => `${v.labels.node} ${v.labels.drive_type} ${v.labels.state} ${v.value / 1024 ** 3}`)
      .sort();
  const readable = async (metrics: OperatorMetrics) =>
    Object.fromEntries((await metrics.nodeBooksReadable.get()).values.map((v) => [v.labels.node, v.value]));
  const books = (signedGiB: number, allocatedGiB: number) => ({
    signedGiB,
    allocatedGiB,
    foundGiB: 0,
    freeGiB: Math.max(0, signedGiB - allocatedGiB),
  });

  it('exports every state of each type as bytes, and drops a type the node no longer has', async () => {
    const metrics = new OperatorMetrics({ processMetrics: false });
    metrics.nodeBooksRead('n1', { ok: true, books: { TLC: books(100, 40), unknown: books(0, 10) } });
    expect(await series(metrics)).toEqual([
      'n1 TLC allocated 40',
      'n1 TLC found 0',
      'n1 TLC free 60',
      'n1 TLC signed 100',
      'n1 unknown allocated 10',
      'n1 unknown found 0',
      'n1 unknown free 0',
      'n1 unknown signed 0',
    ]);
    metrics.nodeBooksRead('n1', { ok: true, books: { TLC: books(100, 50) } });
    expect(await series(metrics)).toEqual([
      'n1 TLC allocated 50',
      'n1 TLC found 0',
      'n1 TLC free 50',
      'n1 TLC signed 100',
    ]);
    expect(await readable(metrics)).toEqual({ n1: 1 });
  });

  it('says a node is unreadable without figures, and forgets a node gone', async () => {
    const metrics = new OperatorMetrics({ processMetrics: false });
    metrics.nodeBooksRead('n1', { ok: true, books: { TLC: books(100, 40) } });
    metrics.nodeBooksRead('n2', { ok: true, books: { QLC: books(200, 0) } });
    metrics.nodeBooksRead('n1', { ok: false, message: 'annotation weka.weka.io/allocations is not JSON' });
    expect(await series(metrics)).toEqual([
      'n2 QLC allocated 0',
      'n2 QLC found 0',
      'n2 QLC free 200',
      'n2 QLC signed 200',
    ]);
    expect(await readable(metrics)).toEqual({ n1: 0, n2: 1 });
    metrics.nodeBooksRead('n2', undefined);
    expect(await series(metrics)).toEqual([]);
    expect(await readable(metrics)).toEqual({ n1: 0 });
  });
});
