// The chart's alert rules, run by Prometheus's own rule tester (promtool test rules) over series
// shaped as the operator exports them: the books' alert fires for a node and drive type whose
// books do not balance for the rule's duration, whatever the number of replicas exporting them,
// and the unreadable alert fires only when every replica fails to read the node.
import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { helmBinary, HELM_BUILD_TIMEOUT_MS, onlyOne, renderChart } from '../../support/helm-chart.js';
import { testToolBinary } from '../../support/tool-binary.js';

const PROMTOOL_BUILD_TIMEOUT_MS = 15 * 60_000;
const GIB = 1024 ** 3;

interface Series {
  series: string;
  values: string;
}
interface AlertTest {
  eval_time: string;
  alertname: string;
  exp_alerts: Array<{ exp_labels: Record<string, string>; exp_annotations?: Record<string, string> }>;
}

let dir: string;
let promtool: string;

beforeAll(async () => {
  [promtool] = await Promise.all([testToolBinary('promtool', PROMTOOL_BUILD_TIMEOUT_MS), helmBinary()]);
  dir = await mkdtemp(join(tmpdir(), 'weka-alert-rules-'));
  const rule = onlyOne(
    await renderChart({ values: { metrics: { prometheusRule: { enabled: true } } } }),
    'PrometheusRule',
  ) as unknown as { spec: { groups: unknown[] } };
  await writeFile(join(dir, 'rules.yaml'), stringify({ groups: rule.spec.groups }));
}, PROMTOOL_BUILD_TIMEOUT_MS + HELM_BUILD_TIMEOUT_MS);

/** promtool's verdict on one test of the rules: its output, and whether it passed. */
async function promtoolTest(input_series: Series[], alert_rule_test: AlertTest[]): Promise<string> {
  const file = join(dir, `test-${Math.random().toString(36).slice(2)}.yaml`);
  await writeFile(
    file,
    stringify({
      rule_files: [join(dir, 'rules.yaml')],
      evaluation_interval: '1m',
      tests: [{ interval: '1m', input_series, alert_rule_test }],
    }),
  );
  return new Promise((resolve, reject) =>
    execFile(promtool, ['test', 'rules', file], (err, stdout, stderr) =>
      err ? reject(new Error(`promtool test rules failed:\n${stdout}${stderr}`)) : resolve(stdout),
    ),
  );
}

/** A replica's four series of a node's books for one drive type, each GiB held for 20 minutes. */
function books(
  instance: string,
  node: string,
  type: string,
  gib: { signed: number; allocated: number; found: number; free: number },
): Series[] {
  return Object.entries(gib).map(([state, value]) => ({
    series: `weka_drives_node_capacity_bytes{instance="${instance}",node="${node}",drive_type="${type}",state="${state}"}`,
    values: `${value * GIB}x20`,
  }));
}

const unbalanced = (node: string, type: string, by: string): AlertTest['exp_alerts'][number] => ({
  exp_labels: { severity: 'warning', node, drive_type: type },
  exp_annotations: {
    summary: `Node ${node}: its ${type} drives' books do not balance`,
    description:
      `On node ${node}, the ${type} GiB allocated by the node's ledger, found on its devices and free differ from the GiB ` +
      `signed for sharing by ${by}: a virtual drive sits on a drive the node no longer lists, or a drive is given out ` +
      `beyond its capacity. See docs/observability.md, "The ledger's books".`,
  },
});

describe('WekaDrivesBooksUnbalanced', () => {
  it('stays quiet for balanced books exported by two replicas', async () => {
    const balanced = { signed: 7680, allocated: 1000, found: 200, free: 6480 };
    await promtoolTest(
      [...books('a', 'n1', 'TLC', balanced), ...books('b', 'n1', 'TLC', balanced)],
      [{ eval_time: '15m', alertname: 'WekaDrivesBooksUnbalanced', exp_alerts: [] }],
    );
  });

  it('fires for a drive given out beyond its capacity and for a claim on a drive no longer listed', async () => {
    await promtoolTest(
      [
        ...books('a', 'n1', 'TLC', { signed: 1000, allocated: 1400, found: 0, free: 0 }),
        ...books('a', 'n1', 'QLC', { signed: 4000, allocated: 1000, found: 0, free: 3000 }),
        ...books('a', 'n1', 'unknown', { signed: 0, allocated: 500, found: 0, free: 0 }),
      ],
      [
        { eval_time: '5m', alertname: 'WekaDrivesBooksUnbalanced', exp_alerts: [] },
        {
          eval_time: '15m',
          alertname: 'WekaDrivesBooksUnbalanced',
          exp_alerts: [unbalanced('n1', 'TLC', '400GiB'), unbalanced('n1', 'unknown', '500GiB')],
        },
      ],
    );
  });

  it('does not fire for books that balance again within its duration', async () => {
    const series = books('a', 'n1', 'TLC', { signed: 1000, allocated: 0, found: 0, free: 1000 });
    series[1] = { ...series[1]!, values: `${500 * GIB}x5 0x15` };
    await promtoolTest(series, [{ eval_time: '15m', alertname: 'WekaDrivesBooksUnbalanced', exp_alerts: [] }]);
  });
});

describe('WekaDrivesBooksUnreadable', () => {
  it('fires for a node no replica can read, not for one that one replica reads', async () => {
    const readable = (instance: string, node: string, value: number): Series => ({
      series: `weka_drives_node_books_readable{instance="${instance}",node="${node}"}`,
      values: `${value}x20`,
    });
    const output = await promtoolTest(
      [readable('a', 'n1', 0), readable('b', 'n1', 0), readable('a', 'n2', 0), readable('b', 'n2', 1)],
      [
        {
          eval_time: '15m',
          alertname: 'WekaDrivesBooksUnreadable',
          exp_alerts: [
            {
              exp_labels: { severity: 'warning', node: 'n1' },
              exp_annotations: {
                summary: 'Node n1: its drive annotations cannot be read',
                description:
                  'The weka.io/shared-drives or weka.weka.io/allocations annotation of node n1 is malformed: the ' +
                  "operator allocates nothing on the node until it is repaired. The operator's log names the " +
                  'annotation and what is wrong with it.',
              },
            },
          ],
        },
      ],
    );
    expect(output).toContain('SUCCESS');
  });
});
