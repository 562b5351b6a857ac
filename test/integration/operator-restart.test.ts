// The operator as a process (watcher + worker): SIGKILLed in the middle of a rollout and started
// again, it converges — every container Ready, every virtual drive signed and added exactly once
// — and deleting everything then leaves nothing behind. Also: its HTTP endpoint, and SIGTERM (and
// what a stop says while it waits for in-flight work).
import { CustomObjectsApi } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePorts } from '../../deploy/local/ports.js';
import { FINALIZER, proxyName } from '../../src/api/names.js';
import { eventually } from '../support/async.js';
import { createDriveContainers, listContainers, TEST_IMAGE, WEKA_CONTAINERS } from '../support/containers.js';
import {
  kubeConfig,
  startNodeKubelet,
  stopNodeKubelet,
  temporalAddress,
  temporalNamespace,
  uniqueName,
  uniqueNamespace,
} from '../support/harness.js';
import {
  podExists,
  readContainer,
  sharedDrivesNode,
  startOperatorProcess,
  waitGone,
  waitProxiesGone,
} from '../support/operator.js';
import type { OperatorProcess } from '../support/operator-process.js';
import { changeCounts, createWekaCluster, showDevice, sim, simulatorLog } from '../support/simulator.js';
import { containerWorkflowId } from '../../src/protocol.js';

const DEVICES = [
  { path: '/dev/nvme0n1', capacityGiB: 3840, type: 'TLC' as const },
  { path: '/dev/nvme1n1', capacityGiB: 3840, type: 'TLC' as const },
];
const PER_NODE = 3;
const SPEC = { driveCores: 2, numDrives: 2, driveCapacity: 500 };

let connection: Connection;
let client: Client;
const processes: OperatorProcess[] = [];

beforeAll(async () => {
  connection = await Connection.connect({ address: temporalAddress() });
  client = new Client({ connection, namespace: temporalNamespace() });
});
afterAll(async () => {
  for (const p of processes) await p.kill();
  await connection?.close();
});

async function operator(env: Record<string, string>): Promise<OperatorProcess> {
  const p = await startOperatorProcess(env);
  processes.push(p);
  return p;
}

async function runsOf(workflowId: string): Promise<number> {
  let n = 0;
  for await (const _ of client.workflow.list({ query: `WorkflowId="${workflowId}"` })) n++;
  return n;
}

async function metricsText(port: number): Promise<string> {
  return (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
}

/** The value of one sample line of /metrics, e.g. `name{a="b"}`; undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('the operator process', () => {
  it(
    'converges after a SIGKILL mid-rollout, signs every virtual drive exactly once, and leaves nothing after deletion',
    { timeout: 600_000 },
    async () => {
      const nodes = [await sharedDrivesNode(DEVICES, 'restart-a'), await sharedDrivesNode(DEVICES, 'restart-b')];
      const guid = await createWekaCluster(nodes[0]!, 'restart');
      // Slow Weka commands so that the kill lands while containers are being signed.
      for (const node of nodes) await sim(node, 'faults', '--latency-ms', '300');
      const operatorNamespace = await uniqueNamespace('weka-operator');
      const env = {
        WEKA_TASK_QUEUE: uniqueName('restart'),
        WEKA_OPERATOR_NAMESPACE: operatorNamespace,
        WEKA_HTTP_PORT: '0',
      };
      const first = await operator(env);

      const ns = await uniqueNamespace('rollout');
      const kc = kubeConfig();
      const refs = await createDriveContainers(
        kc,
        ns,
        nodes.flatMap((node, n) =>
          Array.from({ length: PER_NODE }, (_, i) => ({
            name: `drive-${n}-${i}`,
            spec: { image: 'weka:test', nodeName: node, ...SPEC },
          })),
        ),
        { clusterGUID: guid },
      );

      await eventually(
        'signing to be under way',
        async () => {
          const adds = (await Promise.all(nodes.map(simulatorLog))).map(
            (log) => changeCounts(log, 'virtual-add', 'virtualUUID').size,
          );
          return adds.some((n) => n > 0) ? true : undefined;
        },
        240_000,
      );
      await first.kill();
      const readyAtKill = (await listContainers(kc, ns)).filter((c) => c.status?.phase === 'Ready').length;
      expect(readyAtKill).toBeLessThan(refs.length);

      const [port] = await freePorts(1);
      const second = await operator({ ...env, WEKA_HTTP_PORT: String(port), WEKA_HTTP_ADDRESS: '127.0.0.1' });
      const ready = await eventually(
        'every container to be Ready',
        async () => {
          const all = await listContainers(kc, ns);
          return all.length === refs.length && all.every((c) => c.status?.phase === 'Ready') ? all : undefined;
        },
        360_000,
      );
      console.log(`${readyAtKill} of ${refs.length} containers were Ready at the kill`);

      for (const node of nodes) await sim(node, 'faults', '--clear');
      const logs = new Map(await Promise.all(nodes.map(async (node) => [node, await simulatorLog(node)] as const)));
      for (const c of ready) {
        const log = logs.get(c.spec.nodeName!)!;
        const drives = c.status?.allocations?.virtualDrives ?? [];
        expect(drives).toHaveLength(SPEC.numDrives);
        for (const d of drives) {
          expect(
            changeCounts(log, 'virtual-add', 'virtualUUID').get(d.virtualUUID),
            `virtual add of ${d.virtualUUID}`,
          ).toBe(1);
          expect(
            changeCounts(log, 'drive-add', 'virtualUUID').get(d.virtualUUID),
            `drive add of ${d.virtualUUID}`,
          ).toBe(1);
        }
        expect(c.metadata.finalizers).toEqual([FINALIZER]);
        expect(c.status?.workflowID).toBe(containerWorkflowId(c.metadata.uid!));
        expect(await runsOf(containerWorkflowId(c.metadata.uid!)), `runs of ${c.metadata.name}`).toBe(1);
      }
      // Nothing signed that no container holds: each node carries exactly its containers' drives.
      for (const node of nodes) {
        const held = ready
          .filter((c) => c.spec.nodeName === node)
          .flatMap((c) => (c.status?.allocations?.virtualDrives ?? []).map((d) => d.virtualUUID));
        const onDevices = (await Promise.all(DEVICES.map((d) => showDevice(node, d.path)))).flatMap((d) =>
          d.virtualDrives.map((v) => v.virtualUUID),
        );
        expect(onDevices.sort()).toEqual(held.sort());
      }

      // The restarted watcher started (use-existing) every container once on its first list.
      const afterRollout = await metricsText(port!);
      expect(
        sample(
          afterRollout,
          'weka_drives_watcher_actions_total{kind="WekaContainer",action="startWorkflow",result="ok"}',
        ),
      ).toBeGreaterThanOrEqual(refs.length);
      // The node mutexes stay running while idle; the sampler reports their (empty) queues.
      const sampled = await eventually(
        'the node mutexes to be sampled',
        async () => {
          const text = await metricsText(port!);
          return nodes.every((n) => sample(text, `weka_drives_node_mutex_queue_depth{node="${n}"}`) === 0)
            ? text
            : undefined;
        },
        60_000,
      );
      expect(sample(sampled, `weka_drives_node_mutex_busy{node="${nodes[0]}"}`)).toBe(0);

      const custom = kc.makeApiClient(CustomObjectsApi);
      for (const ref of refs) await custom.deleteNamespacedCustomObject({ ...WEKA_CONTAINERS, ...ref });
      for (const ref of refs) await waitGone(ref, 240_000);
      expect(await listContainers(kc, ns)).toEqual([]);
      for (const node of nodes) {
        for (const device of DEVICES) expect((await showDevice(node, device.path)).virtualDrives).toEqual([]);
      }
      // The last drive container on each node took the node's ssdproxy container with it.
      await waitProxiesGone(operatorNamespace, nodes, 60_000);
      for (const ref of refs) expect(await readContainer(ref)).toBeNull();

      const afterTeardown = await metricsText(port!);
      const unsigned =
        sample(
          afterTeardown,
          'weka_drives_cli_calls_total{command="weka-sign-drive virtual remove",result="success"}',
        ) ?? 0;
      expect(unsigned).toBeGreaterThanOrEqual(refs.length * SPEC.numDrives);
      expect(
        sample(
          afterTeardown,
          'weka_drives_watcher_actions_total{kind="WekaContainer",action="signalDelete",result="ok"}',
        ),
      ).toBeGreaterThanOrEqual(refs.length);
      expect(
        sample(
          afterTeardown,
          'weka_drives_workflow_step_duration_seconds_count{activity="unsignVirtualDrive",result="ok"}',
        ),
      ).toBeGreaterThanOrEqual(refs.length * SPEC.numDrives);
      // Every release went through a node mutex, and its wait in the queue was measured.
      expect(
        sample(afterTeardown, 'weka_drives_node_mutex_wait_seconds_count{activity="releaseAllocation"}'),
      ).toBeGreaterThanOrEqual(refs.length);

      expect(await second.stop(), second.output().slice(-4000)).toBe(0);
      expect(second.output()).toContain('"msg":"stopped"');
    },
  );

  it('answers /healthz, /readyz and /metrics, and exits 0 on SIGTERM', { timeout: 120_000 }, async () => {
    const [port] = await freePorts(1);
    const p = await operator({
      WEKA_TASK_QUEUE: uniqueName('http'),
      WEKA_OPERATOR_NAMESPACE: await uniqueNamespace('weka-operator'),
      WEKA_HTTP_PORT: String(port),
      WEKA_HTTP_ADDRESS: '127.0.0.1',
    });
    const base = `http://127.0.0.1:${port}`;
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    await eventually(
      '/readyz to answer 200',
      async () => ((await fetch(`${base}/readyz`)).status === 200 ? true : undefined),
      60_000,
    );
    expect(p.output()).toContain('watcher running');

    const metrics = await fetch(`${base}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await metrics.text();
    for (const name of [
      'weka_drives_allocation_duration_seconds',
      'weka_drives_workflow_step_duration_seconds',
      'weka_drives_cli_calls_total',
      'weka_drives_node_mutex_queue_depth',
      'weka_drives_node_mutex_wait_seconds',
      'weka_drives_node_mutex_busy',
      'weka_drives_watcher_actions_total',
      'process_cpu_seconds_total',
    ]) {
      expect(text, name).toContain(`# TYPE ${name} `);
    }
    expect((await fetch(`${base}/nowhere`)).status).toBe(404);

    expect(await p.stop(), p.output().slice(-4000)).toBe(0);
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
  });

  it(
    'on SIGTERM, says what the worker still waits for, and stops once the grace cancels the wait for a pod',
    { timeout: 180_000 },
    async () => {
      const node = await sharedDrivesNode(DEVICES, 'drain');
      const guid = await createWekaCluster(node, uniqueName('drain'));
      // No kubelet: the node's ssdproxy pod stays Pending, and ensure-proxy waits for it.
      await stopNodeKubelet(node);
      const operatorNamespace = await uniqueNamespace('weka-operator');
      const p = await operator({ WEKA_TASK_QUEUE: uniqueName('drain'), WEKA_OPERATOR_NAMESPACE: operatorNamespace });
      const ns = await uniqueNamespace('drain');
      await createDriveContainers(
        kubeConfig(),
        ns,
        [{ name: 'waits', spec: { image: TEST_IMAGE, nodeName: node, ...SPEC } }],
        {
          clusterGUID: guid,
        },
      );
      await eventually(
        'the ssdproxy pod to be created',
        async () => ((await podExists(operatorNamespace, proxyName(node))) ? true : undefined),
        60_000,
      );
      const stopping = Date.now();
      const exit = await p.stop();
      const output = p.output();
      expect(exit, output.slice(-4000)).toBe(0);
      // The 20 s grace, then the cancelled wait ends at once (not at its own 60 s timeout).
      expect(Date.now() - stopping).toBeLessThan(35_000);
      const waits = output
        .split('\n')
        .filter((l) => l.includes('"still waiting for the worker to drain"'))
        .map((l) => JSON.parse(l) as { workers: { running: { activity: string; workflowId: string }[] } });
      expect(waits.length).toBeGreaterThanOrEqual(1);
      expect(waits[0]!.workers.running).toContainEqual(
        expect.objectContaining({ activity: 'ensureProxy', workflowId: `weka-node/${node}` }),
      );
      await startNodeKubelet(node);
    },
  );

  it('loads the workflow bundle it is given, and refuses to start when that file is missing', async () => {
    const given = await operator({
      WEKA_TASK_QUEUE: uniqueName('bundled'),
      WEKA_OPERATOR_NAMESPACE: await uniqueNamespace('weka-operator'),
    });
    const running = given
      .output()
      .split('\n')
      .filter((l) => l.includes('"worker running"'))
      .map((l) => JSON.parse(l) as { workflowBundle?: string });
    expect(running).toEqual([expect.objectContaining({ workflowBundle: 'prebuilt' })]);
    await given.kill();

    await expect(
      operator({
        WEKA_TASK_QUEUE: uniqueName('unbundled'),
        WEKA_WORKFLOW_BUNDLE: '/nonexistent/workflow-bundle.js',
      }),
    ).rejects.toThrow(/WEKA_WORKFLOW_BUNDLE: no workflow bundle at \/nonexistent\/workflow-bundle\.js/);
  }, 120_000);
});
