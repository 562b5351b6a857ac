// The local control plane, each part proven for real: the apiserver stores our CRs, fake nodes go
// Ready, their pods Running, exec through the apiserver runs a local command, and Temporal runs a
// workflow, finds it by search attribute and keeps it across a restart on the same SQLite file.
import { fileURLToPath } from 'node:url';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { defineSearchAttributeKey, SearchAttributeType, TypedSearchAttributes } from '@temporalio/common';
import { NativeConnection, Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { KubeExecTransport } from '../../activities/exec/kube-exec.js';
import { greet } from './fixtures/smoke-workflows.js';
import { eventually } from '../support/async.js';
import { createWekaCluster, joinIpsOf } from '../support/simulator.js';
import { containerIdentityCall, joinCalls, parseContainerIdentity, parseHostAddress } from '../../src/weka/index.js';
import {
  addNode,
  kubeConfig,
  removeNode,
  startTemporal,
  stopTemporal,
  temporalAddress,
  temporalNamespace,
  uniqueName,
  uniqueNamespace,
} from '../support/harness.js';

const WekaNode = defineSearchAttributeKey('WekaNode', SearchAttributeType.KEYWORD);

// The operator's production exec path: @kubernetes/client-node's Exec through the apiserver.
async function execInPod(ns: string, pod: string, command: string[]): Promise<{ stdout: string; exitCode: number }> {
  const transport = KubeExecTransport.fromKubeConfig(kubeConfig());
  const { stdout, exitCode } = await transport.run({ namespace: ns, pod, container: 'main' }, command, {
    timeoutMs: 20_000,
  });
  return { stdout, exitCode };
}

describe('local control plane', () => {
  it('stores and returns a WekaContainer custom resource', async () => {
    const ns = await uniqueNamespace('smoke');
    const api = kubeConfig().makeApiClient(CustomObjectsApi);
    const body = {
      apiVersion: 'weka.weka.io/v1alpha1',
      kind: 'WekaContainer',
      metadata: { name: 'proxy-a' },
      spec: { mode: 'ssdproxy', nodeName: 'node-a', image: 'weka/weka-in-container:4.4' },
    };
    await api.createNamespacedCustomObject({
      group: 'weka.weka.io',
      version: 'v1alpha1',
      namespace: ns,
      plural: 'wekacontainers',
      body,
    });
    const read = (await api.getNamespacedCustomObject({
      group: 'weka.weka.io',
      version: 'v1alpha1',
      namespace: ns,
      plural: 'wekacontainers',
      name: 'proxy-a',
    })) as typeof body;
    expect(read.spec).toEqual(body.spec);
  });

  it('runs a fake node whose pods go Running and answer exec through the apiserver', async () => {
    const node = uniqueName('smoke-node');
    await addNode({ name: node });
    const core = kubeConfig().makeApiClient(CoreV1Api);
    const ready = await core.readNode({ name: node });
    expect(ready.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(ready.status?.addresses?.find((a) => a.type === 'InternalIP')?.address).toBe('127.0.0.1');

    const ns = await uniqueNamespace('smoke');
    await core.createNamespacedPod({
      namespace: ns,
      body: { metadata: { name: 'shell' }, spec: { nodeName: node, containers: [{ name: 'main', image: 'busybox' }] } },
    });
    await eventually('pod Running', async () => {
      const pod = await core.readNamespacedPod({ namespace: ns, name: 'shell' });
      return pod.status?.phase === 'Running' ? pod : undefined;
    });

    const ok = await execInPod(ns, 'shell', ['sh', '-c', 'echo "hello from $WEKA_SIM_STATE"']);
    expect(ok.exitCode).toBe(0);
    expect(ok.stdout).toContain(`hello from `);
    expect(ok.stdout.trim().endsWith(`/nodes/${node}`)).toBe(true);
    const failed = await execInPod(ns, 'shell', ['sh', '-c', 'echo partial; exit 3']);
    expect(failed).toEqual({ stdout: 'partial\n', exitCode: 3 });
  });

  it('gives the nodes that name a set of simulated Weka clusters that set, and no other node', async () => {
    const set = uniqueName('site');
    const [a, b, other] = [uniqueName('set-a'), uniqueName('set-b'), uniqueName('no-set')];
    await addNode({ name: a, simulatedClusters: set });
    await addNode({ name: b, simulatedClusters: set });
    await addNode({ name: other });
    const core = kubeConfig().makeApiClient(CoreV1Api);
    const ns = await uniqueNamespace('sets');
    // Pods that run a Weka container each (a stem), as the operator's drive pods do.
    const runPod = async (name: string, node: string) => {
      const env = [
        { name: 'NAME', value: `${ns}_${name}` },
        { name: 'PORT', value: '35000' },
        { name: 'AGENT_PORT', value: '35100' },
      ];
      await core.createNamespacedPod({
        namespace: ns,
        body: { metadata: { name }, spec: { nodeName: node, containers: [{ name: 'main', image: 'busybox', env }] } },
      });
    };
    for (const node of [a, b, other]) await runPod(node, node);
    const ipOf = (pod: string) =>
      eventually(`pod ${pod} Running with an IP`, async () => {
        const p = await core.readNamespacedPod({ namespace: ns, name: pod });
        return p.status?.phase === 'Running' ? p.status.podIP : undefined;
      });
    /** The cluster GUID of the pod's Weka container, once its exec environment has set it up. */
    const clusterOf = (pod: string) =>
      eventually(`pod ${pod}'s Weka container`, async () => {
        const argv = containerIdentityCall(`${ns}_${pod}`, 35100).argv;
        const out = await execInPod(ns, pod, [...argv]);
        if (out.exitCode !== 0) return undefined;
        const identity = parseContainerIdentity(out.stdout);
        return identity.state === 'member' ? identity.clusterGUID : identity.state === 'stem' ? '' : undefined;
      });
    const joinThrough = async (pod: string, address: string) => {
      for (const call of joinCalls([parseHostAddress(address)!]))
        expect((await execInPod(ns, pod, [...call.argv])).exitCode).toBe(0);
    };
    const ipA = await ipOf(a);
    expect(await clusterOf(a)).toBe('');
    expect((await execInPod(ns, a, ['weka', 'cluster', 'create', ipA, '--host-ips', `${ipA}:35000`])).exitCode).toBe(0);
    const guid = await clusterOf(a);
    for (const pod of [b, other]) {
      await ipOf(pod);
      expect(await clusterOf(pod)).toBe('');
      await joinThrough(pod, `${ipA}:35000`);
    }
    // Only the node of the same set reaches the cluster.
    expect(await clusterOf(b)).toBe(guid);
    expect(await clusterOf(other)).toBe('');
    // Added again without a set, a node keeps its disks and sees the shared clusters.
    await removeNode(b, { keepObject: true });
    await addNode({ name: b });
    const again = await createWekaCluster(b, uniqueName('tenant'));
    const [address] = await joinIpsOf(again);
    await joinThrough(other, address!);
    expect(await clusterOf(other)).toBe(again);
    await runPod('a-2', a);
    await ipOf('a-2');
    expect(await clusterOf('a-2')).toBe('');
    await joinThrough('a-2', address!);
    expect(await clusterOf('a-2')).toBe('');
  });

  it('runs a workflow, finds it by search attribute, and keeps it across a server restart', async () => {
    const taskQueue = uniqueName('smoke');
    const nodeTag = uniqueName('node');
    const workerConnection = await NativeConnection.connect({ address: temporalAddress() });
    const worker = await Worker.create({
      connection: workerConnection,
      namespace: temporalNamespace(),
      taskQueue,
      workflowsPath: fileURLToPath(new URL('./fixtures/smoke-workflows.ts', import.meta.url)),
    });
    const workflowId = uniqueName('smoke-wf');
    let connection = await Connection.connect({ address: temporalAddress() });
    try {
      await worker.runUntil(async () => {
        const client = new Client({ connection, namespace: temporalNamespace() });
        const handle = await client.workflow.start(greet, {
          taskQueue,
          workflowId,
          args: ['weka'],
          typedSearchAttributes: new TypedSearchAttributes([{ key: WekaNode, value: nodeTag }]),
        });
        expect(await handle.result()).toBe('hello weka');
      });
      const client = new Client({ connection, namespace: temporalNamespace() });
      const found = await eventually('workflow visible by WekaNode', async () => {
        const ids: string[] = [];
        for await (const wf of client.workflow.list({ query: `WekaNode="${nodeTag}"` })) ids.push(wf.workflowId);
        return ids.length > 0 ? ids : undefined;
      });
      expect(found).toEqual([workflowId]);
    } finally {
      await connection.close();
      await workerConnection.close();
    }

    await stopTemporal();
    const { startupMs } = await startTemporal();
    console.log(`temporal restarted on the same SQLite file in ${startupMs} ms`);
    connection = await Connection.connect({ address: temporalAddress() });
    try {
      const client = new Client({ connection, namespace: temporalNamespace() });
      const description = await client.workflow.getHandle(workflowId).describe();
      expect(description.status.name).toBe('COMPLETED');
      expect(await client.workflow.getHandle(workflowId).result()).toBe('hello weka');
    } finally {
      await connection.close();
    }
  });
});
