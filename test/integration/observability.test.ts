// What a platform team sees of the operator, from the compiled operator process as the image runs
// it: one /metrics with the operator's and the Temporal SDK's metrics, which every query of the
// chart's Grafana dashboard finds, and each node's books; JSON log lines with level names, the
// workflow of every line written in an activity, and the SDK's own lines; kubectl columns that say
// whether a container is Ready; its pod found by a label naming it; and a sign-drives workflow
// found by its object.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { containerWorkflowId } from '../../src/protocol.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePorts } from '../../deploy/local/ports.js';
import { CONTAINER_NAME_LABEL, CONTAINER_NAMESPACE_LABEL } from '../../src/manifests/pods.js';
import { eventually } from '../support/async.js';
import {
  createDriveContainers,
  deleteContainers,
  isReady,
  listContainers,
  TEST_IMAGE,
  WEKA_CONTAINERS,
} from '../support/containers.js';
import { kubeConfig, temporalAddress, temporalNamespace, uniqueName, uniqueNamespace } from '../support/harness.js';
import { createSignDrivesOperation, deleteOperationObject, waitFinished } from '../support/manual-operation.js';
import { bareSharedDrivesNode, sharedDrivesNode, startOperatorProcess, waitGone } from '../support/operator.js';
import { changeLedger } from '../support/ledger.js';
import { removeNode } from '../support/harness.js';
import { ALLOCATIONS_ANNOTATION, withAllocation } from '../../src/node/allocation-ledger.js';
import type { OperatorProcess } from '../support/operator-process.js';
import { createWekaCluster, sim } from '../support/simulator.js';

const DASHBOARD = fileURLToPath(
  new URL('../../deploy/helm/weka-drives-operator/dashboards/weka-drives.json', import.meta.url),
);
const DEVICES = [
  { path: '/dev/nvme0n1', capacityGiB: 3840, type: 'TLC' as const },
  { path: '/dev/nvme1n1', capacityGiB: 3840, type: 'TLC' as const },
];

let connection: Connection;
let client: Client;
let operator: OperatorProcess | undefined;

beforeAll(async () => {
  connection = await Connection.connect({ address: temporalAddress() });
  client = new Client({ connection, namespace: temporalNamespace() });
});
afterAll(async () => {
  await operator?.kill();
  await connection?.close();
});

/** Every metric name a PromQL expression of the dashboard reads. */
function dashboardMetrics(): string[] {
  const names = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (typeof node !== 'object' || node === null) return;
    for (const [key, value] of Object.entries(node)) {
      if (key === 'expr' && typeof value === 'string') {
        for (const m of value.matchAll(/\b(weka_drives_\w+|temporal_\w+|process_\w+|nodejs_\w+)\b/g)) names.add(m[1]!);
      } else visit(value);
    }
  };
  visit(JSON.parse(readFileSync(DASHBOARD, 'utf8')));
  return [...names].sort();
}

const GIB = 1024 ** 3;

/** A node's books as /metrics exports them: "TLC signed" → GiB. */
function booksOf(text: string, node: string): Record<string, number> {
  const books: Record<string, number> = {};
  const series = new RegExp(
    `^weka_drives_node_capacity_bytes\\{node="${node}",drive_type="(\\w+)",state="(\\w+)"\\} (\\d+)$`,
    'gm',
  );
  for (const [, type, state, bytes] of text.matchAll(series)) books[`${type} ${state}`] = Number(bytes) / GIB;
  return books;
}

const scrape = async (port: number) => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();

/** The names of the series /metrics exports (histograms as their _bucket, _sum and _count). */
function exportedSeries(text: string): Set<string> {
  return new Set(
    text
      .split('\n')
      .filter((l) => l !== '' && !l.startsWith('#'))
      .map((l) => l.split(/[{ ]/)[0]!),
  );
}

describe('what a platform team sees', () => {
  it(
    'metrics for every dashboard query, structured logs, Ready columns, pod labels and search attributes',
    { timeout: 300_000 },
    async () => {
      const node = await sharedDrivesNode(DEVICES, 'observed');
      const guid = await createWekaCluster(node, 'observed');
      // Some Weka commands fail (and are retried), so the SDK counts failed activity attempts too.
      await sim(node, 'faults', '--fail-rate', '0.3', '--seed', '7');
      const [port] = await freePorts(1);
      operator = await startOperatorProcess(
        {
          WEKA_TASK_QUEUE: uniqueName('observed'),
          WEKA_OPERATOR_NAMESPACE: await uniqueNamespace('weka-operator'),
          WEKA_HTTP_PORT: String(port),
          WEKA_HTTP_ADDRESS: '127.0.0.1',
        },
        'compiled',
      );

      const kc = kubeConfig();
      const ns = await uniqueNamespace('observed');
      const [ref] = await createDriveContainers(
        kc,
        ns,
        [
          {
            name: 'drive-0',
            spec: {
              image: 'quay.io/weka.io/weka-in-container:test',
              nodeName: node,
              driveCores: 1,
              numDrives: 2,
              driveCapacity: 500,
            },
          },
        ],
        { clusterGUID: guid },
      );
      await eventually(
        'the drive container to be Ready',
        async () => ((await listContainers(kc, ns)).every(isReady) ? true : undefined),
        180_000,
      );
      await sim(node, 'faults', '--clear');
      // One more container, too big for the node: refused, with the reason in kubectl's Reason column.
      await createDriveContainers(
        kc,
        ns,
        [
          {
            name: 'too-big',
            spec: { image: TEST_IMAGE, nodeName: node, driveCores: 1, numDrives: 2, driveCapacity: 9000 },
          },
        ],
        { clusterGUID: guid },
      );
      const operation = { namespace: ns, name: 'sign-nothing' };
      await createSignDrivesOperation(operation, {
        type: 'device-paths',
        nodeSelector: { 'weka.test/none': 'none' },
        devicePaths: ['/dev/nvme0n1'],
        shared: true,
      });
      await waitFinished(operation);

      // Metrics: the operator's, the SDK's, and every one the dashboard reads.
      const text = await eventually(
        'the SDK metrics to be scraped and the node mutexes sampled',
        async () => {
          const t = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
          return t.includes('temporal_') && t.includes(`weka_drives_node_mutex_queue_depth{node="${node}"}`)
            ? t
            : undefined;
        },
        60_000,
      );
      const exported = exportedSeries(text);
      expect(text).toMatch(/^weka_drives_build_info\{version="\d+\.\d+\.\d+",node_version="v\d+[^"]*"\} 1$/m);
      const missing = dashboardMetrics().filter(
        (name) => !exported.has(name) && !['_bucket', '_sum', '_count'].some((s) => exported.has(`${name}${s}`)),
      );
      expect(dashboardMetrics().length).toBeGreaterThan(10);
      expect(missing, `dashboard metrics /metrics does not export:\n${text.slice(0, 3000)}`).toEqual([]);
      expect([...exported].filter((n) => n.startsWith('weka_') && !n.startsWith('weka_drives_'))).toEqual([]);

      // The node's books: two 3840 GiB drives signed, 2 x 500 GiB given to drive-0, the rest free.
      expect(booksOf(text, node)).toEqual({
        'TLC signed': 7680,
        'TLC allocated': 1000,
        'TLC found': 0,
        'TLC free': 6680,
        'QLC signed': 0,
        'QLC allocated': 0,
        'QLC found': 0,
        'QLC free': 0,
      });
      // A ledger that gives a GiB of a drive the node no longer lists unbalances them; one that cannot
      // be read says so; a node gone takes its series with it.
      const other = await bareSharedDrivesNode('books');
      await changeLedger(other, (ledger) =>
        withAllocation(ledger, 'uid-lost', 'ns/lost', {
          virtualDrives: [
            { virtualUUID: 'v0', physicalUUID: `${other}-p0`, capacityGiB: 1000, serial: `${other}-SN0`, type: 'TLC' },
            { virtualUUID: 'v1', physicalUUID: 'gone', capacityGiB: 500, serial: 'gone', type: 'TLC' },
          ],
        }),
      );
      await eventually(
        'the lost GiB to show in the books',
        async () => {
          const books = booksOf(await scrape(port!), other);
          return books['unknown allocated'] === 500 ? books : undefined;
        },
        30_000,
      ).then((books) =>
        expect(books).toMatchObject({
          'TLC signed': 7680,
          'TLC allocated': 1000,
          'TLC free': 6680,
          'unknown signed': 0,
        }),
      );
      await kc
        .makeApiClient(CoreV1Api)
        .patchNode(
          { name: other, body: { metadata: { annotations: { [ALLOCATIONS_ANNOTATION]: '{' } } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
      await eventually(
        'the unreadable ledger to show',
        async () => {
          const t = await scrape(port!);
          return t.includes(`weka_drives_node_books_readable{node="${other}"} 0`) ? t : undefined;
        },
        30_000,
      ).then((t) => expect(booksOf(t, other)).toEqual({}));
      await removeNode(other);
      await eventually(
        'the removed node to leave /metrics',
        async () => ((await scrape(port!)).includes(`node="${other}"`) ? undefined : true),
        30_000,
      );

      // Logs: JSON lines, level names, the bundle made at build time, the workflow of activity lines.
      const lines = operator
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines.length).toBeGreaterThan(5);
      for (const line of lines) expect(['trace', 'debug', 'info', 'warn', 'error', 'fatal']).toContain(line.level);
      expect(lines.find((l) => l.msg === 'worker running')).toMatchObject({ workflowBundle: 'prebuilt', tls: false });
      expect(lines.some((l) => l.component === 'temporal-sdk' && typeof l.sdkComponent === 'string')).toBe(true);
      const inActivity = lines.filter((l) => typeof l.activity === 'string');
      expect(inActivity.length).toBeGreaterThan(0);
      for (const l of inActivity) expect(l.workflowId, JSON.stringify(l)).toEqual(expect.any(String));

      // kubectl get wekacontainers: the apiserver's table has Ready and Reason.
      await eventually(
        'the big container to be refused',
        async () =>
          (await listContainers(kc, ns)).some((c) =>
            c.status?.conditions?.some((x) => x.type === 'Allocated' && x.status === 'False'),
          )
            ? true
            : undefined,
        60_000,
      );
      const table = (await kc
        .makeApiClient(CustomObjectsApi)
        .listNamespacedCustomObject(
          { ...WEKA_CONTAINERS, namespace: ns },
          setHeaderOptions('Accept', 'application/json;as=Table;v=v1;g=meta.k8s.io'),
        )) as { columnDefinitions: Array<{ name: string }>; rows: Array<{ cells: unknown[] }> };
      const columns = table.columnDefinitions.map((c) => c.name);
      const cell = (name: string, column: string) =>
        table.rows.find((r) => r.cells[columns.indexOf('Name')] === name)?.cells[columns.indexOf(column)];
      expect(cell('drive-0', 'Ready')).toBe('True');
      expect(cell('drive-0', 'Reason')).toBe('Ready');
      expect(cell('too-big', 'Ready')).toBe('False');
      expect(cell('too-big', 'Reason')).toBe('InsufficientDriveCapacity');
      expect(typeof cell('too-big', 'Since')).toBe('string');

      // The container's pod, selected by the labels naming it.
      const pods = await kc.makeApiClient(CoreV1Api).listPodForAllNamespaces({
        labelSelector: `${CONTAINER_NAME_LABEL}=${ref!.name},${CONTAINER_NAMESPACE_LABEL}=${ns}`,
      });
      expect(pods.items).toHaveLength(1);

      // The sign-drives workflow, found by its object.
      const found: string[] = [];
      await eventually(
        'the operation to be listed by WekaOperation',
        async () => {
          found.length = 0;
          for await (const wf of client.workflow.list({ query: `WekaOperation="${ns}/${operation.name}"` }))
            found.push(wf.type);
          return found.length > 0 ? true : undefined;
        },
        30_000,
      );
      expect(found).toEqual(['manualOperationWorkflow']);

      // Each activity of the container's workflow, local ones too, carries a one-line summary for the UI's timeline.
      const uid = (await listContainers(kc, ns)).find((c) => c.metadata.name === ref!.name)!.metadata.uid!;
      const history = await client.workflow.getHandle(containerWorkflowId(uid)).fetchHistory();
      const summaries = (history.events ?? [])
        .filter(
          (e) =>
            e.activityTaskScheduledEventAttributes ||
            e.markerRecordedEventAttributes?.markerName === 'core_local_activity',
        )
        .map((e) =>
          e.userMetadata?.summary ? String(defaultPayloadConverter.fromPayload(e.userMetadata.summary)) : '',
        );
      expect(summaries.length).toBeGreaterThan(3);
      expect(summaries.filter((t) => t === '')).toEqual([]);
      // A status apply names the phase it shows, and the Events that go out with it.
      expect(summaries.some((t) => t.startsWith(`write status ${ns}/${ref!.name} phase Ready`))).toBe(true);
      expect(summaries.some((t) => / Events (.+, )?Allocated\b/.test(t))).toBe(true);

      // Nothing left behind for the test files after this one.
      const all = (await listContainers(kc, ns)).map((c) => ({ namespace: ns, name: c.metadata.name! }));
      await deleteContainers(kc, all);
      await deleteOperationObject(operation);
      for (const r of all) await waitGone(r, 120_000);

      expect(await operator.stop(), operator.output().slice(-4000)).toBe(0);
    },
  );
});
