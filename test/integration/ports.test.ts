// Ports end to end, on the real servers: each drive container's pod and its join use the ports its
// node's mutex gave it, the simulator refuses a container whose ports overlap another's on the
// node, a basePort override that overlaps another cluster's range is refused, and a cluster's
// singleton ports keep clear of every container's ports.
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { SIMULATED_BACKEND_PREFIX } from '../../deploy/local/shared-drives.js';
import { describe, expect, it } from 'vitest';
import type { WekaCluster } from '../../src/api/index.js';
import { ledgerOf } from '../../activities/kube/node-ledger.js';
import { FINALIZER } from '../../src/api/names.js';
import { wekaPod } from '../../src/manifests/pods.js';
import {
  clusterWorkflowId,
  containerWorkflowId,
  deleteRequestedSignal,
  specChangedSignal,
  WORKFLOW,
  type LifecycleWorkflow,
} from '../../src/protocol.js';
import { eventually } from '../support/async.js';
import { createContainerObject, readObject, TEST_IMAGE, WEKA_API } from '../support/containers.js';
import { warningEvent } from '../support/events.js';
import { kubeConfig, uniqueName, uniqueNamespace } from '../support/harness.js';
import {
  createDriveContainer,
  deleteDriveContainer,
  sharedDrivesNode,
  useTestOperator,
  waitForPhase,
  waitGone,
} from '../support/operator.js';
import { createWekaCluster, joinIpsOf, sim, simulatorLog } from '../support/simulator.js';

const op = useTestOperator();

const DEVICES = [{ path: '/dev/nvme0n1', capacityGiB: 7680, type: 'TLC' as const }];
const CLUSTERS = { ...WEKA_API, plural: 'wekaclusters' };

async function getCluster(namespace: string, name: string): Promise<WekaCluster | null> {
  return readObject<WekaCluster>(kubeConfig(), CLUSTERS, { namespace, name });
}

/** A WekaCluster whose selector matches no node: it gets its ports and then waits for nodes. */
async function startCluster(namespace: string, name: string, ports?: { basePort: number; portRange?: number }) {
  const custom = kubeConfig().makeApiClient(CustomObjectsApi);
  const created = (await custom.createNamespacedCustomObject({
    ...CLUSTERS,
    namespace,
    body: {
      apiVersion: 'weka.weka.io/v1alpha1',
      kind: 'WekaCluster',
      metadata: { name, finalizers: [FINALIZER] },
      spec: {
        image: 'quay.io/weka.io/weka-in-container:test',
        nodeSelector: { 'weka.weka.io/pool': uniqueName('no-node') },
        dynamicTemplate: { driveContainers: 1, driveCores: 1, containerCapacity: 1000 },
        ...(ports ? { ports } : {}),
      },
    },
  })) as WekaCluster;
  return op.client.workflow.start<LifecycleWorkflow>(WORKFLOW.cluster, {
    taskQueue: op.deps.taskQueue,
    workflowId: clusterWorkflowId(created.metadata.uid!),
    args: [{ namespace, name, uid: created.metadata.uid! }],
  });
}

/** Deletes a cluster the way the watcher would, and waits until its teardown released its ports. */
async function deleteCluster(namespace: string, name: string): Promise<void> {
  const cluster = await getCluster(namespace, name);
  await kubeConfig()
    .makeApiClient(CustomObjectsApi)
    .deleteNamespacedCustomObject({ ...CLUSTERS, namespace, name });
  const handle = op.client.workflow.getHandle(clusterWorkflowId(cluster!.metadata.uid!));
  await handle.signal(deleteRequestedSignal);
  await handle.result();
  expect(await getCluster(namespace, name)).toBeNull();
}

/** Every container's ports in every node's ledger, as `node: weka-agent` pairs. */
async function portsHeld(): Promise<string> {
  const nodes = await kubeConfig().makeApiClient(CoreV1Api).listNode();
  return nodes.items
    .flatMap((n) =>
      Object.values(ledgerOf(n).containers).map(
        ({ allocation: a }) => `${n.metadata?.name}: ${a.wekaPort}-${a.agentPort}`,
      ),
    )
    .join(', ');
}

const portsCondition = (c: WekaCluster | null) => c?.status?.conditions?.find((x) => x.type === 'PortsAllocated');

describe('ports end to end', () => {
  it('runs each standalone container on its own ports: pod environment, join, and the simulator', async () => {
    const node = await sharedDrivesNode(DEVICES, 'ports');
    const guid = await createWekaCluster(node, uniqueName('ports'));
    const ns = await uniqueNamespace('ports');
    const refs = ['a', 'b'].map((name) => ({ namespace: ns, name }));
    const spec = { nodeName: node, driveCores: 1, containerCapacity: 1000, driveTypesRatio: { tlc: 1, qlc: 0 } };
    const started = [];
    for (const ref of refs) started.push(await createDriveContainer(op, ref, spec, guid));
    const ready = await Promise.all(refs.map((ref) => waitForPhase(ref, 'Ready')));

    const given = ready.map((c) => c.status!.allocations!);
    // Whichever asks first gets Weka's default ports, the other the next free ones on the node.
    const pairs = given.map((a) => [a.wekaPort!, a.agentPort!]);
    const byPort = (a: number[], b: number[]) => a[0]! - b[0]!;
    expect([...pairs].sort(byPort)).toEqual([
      [14000, 14100],
      [14101, 14201],
    ]);
    const core = kubeConfig().makeApiClient(CoreV1Api);
    for (const [i, ref] of refs.entries()) {
      const pod = await core.readNamespacedPod({ namespace: ns, name: ref.name });
      const env = Object.fromEntries((pod.spec?.containers[0]?.env ?? []).map((e) => [e.name, e.value]));
      expect(env).toMatchObject({
        PORT: String(given[i]!.wekaPort),
        WEKA_PORT: String(given[i]!.wekaPort),
        AGENT_PORT: String(given[i]!.agentPort),
      });
    }
    // The operator's containers joining (not the backend the simulated cluster was made of).
    const joins = (await simulatorLog(node))
      .flatMap((e) => e.changes.filter((c) => c.kind === 'container-add'))
      .filter((c) => !String(c['name']).startsWith(SIMULATED_BACKEND_PREFIX));
    expect(joins.map((j) => [j['basePort'] as number, j['agentPort'] as number]).sort(byPort)).toEqual(
      [...pairs].sort(byPort),
    );

    // A Weka container on the same host on ports another one uses is refused.
    await expect(
      sim(
        node,
        ...['--in-pod', '--weka-name', 'intruder', '--weka-port', '14050', '--agent-port', '15000'],
        ...['--join-ips', (await joinIpsOf(guid)).join(','), '--', 'weka', 'local', 'restart', '--force'],
      ),
    ).rejects.toThrow(/overlap/);

    for (const [i, ref] of refs.entries()) await deleteDriveContainer(op, ref, started[i]!.uid);
    for (const ref of refs) await waitGone(ref);
  });

  it("makes again a running pod whose environment does not carry the container's ports", async () => {
    const node = await sharedDrivesNode(DEVICES, 'stale-pod');
    const guid = await createWekaCluster(node, uniqueName('stale-pod'));
    const ref = { namespace: await uniqueNamespace('stale-pod'), name: 'drive' };
    const spec = { nodeName: node, driveCores: 1, containerCapacity: 1000, driveTypesRatio: { tlc: 1, qlc: 0 } };
    const created = await createContainerObject(kubeConfig(), ref, spec, {
      finalizers: [FINALIZER],
      clusterGUID: guid,
    });
    // A pod of the name made before the container had ports (by hand here; by an older operator, which made it first).
    const core = kubeConfig().makeApiClient(CoreV1Api);
    const manifest = wekaPod({ ...ref, node, image: TEST_IMAGE, role: 'drive', owner: `${ref.namespace}/${ref.name}` });
    const stale = await core.createNamespacedPod({ namespace: ref.namespace, body: manifest as V1Pod });
    await eventually('the stale pod running', async () =>
      (await core.readNamespacedPod(ref)).status?.phase === 'Running' ? true : undefined,
    );

    await op.client.workflow.start<LifecycleWorkflow>(WORKFLOW.driveContainer, {
      taskQueue: op.deps.taskQueue,
      workflowId: containerWorkflowId(created.metadata.uid!),
      args: [{ ...ref, uid: created.metadata.uid! }],
    });
    const ready = await waitForPhase(ref, 'Ready');
    const pod = await core.readNamespacedPod(ref);
    expect(pod.metadata?.uid).not.toBe(stale.metadata?.uid);
    const env = Object.fromEntries((pod.spec?.containers[0]?.env ?? []).map((e) => [e.name, e.value]));
    expect(env['PORT']).toBe(String(ready.status!.allocations!.wekaPort));
    await deleteDriveContainer(op, ref, created.metadata.uid!);
    await waitGone(ref);
  });

  it("refuses a basePort override that overlaps another cluster's range, and leaves that cluster alone", async () => {
    const ns = await uniqueNamespace('port-override');
    await startCluster(ns, 'first');
    const first = await eventually('first has ports', async () => {
      const c = await getCluster(ns, 'first');
      return portsCondition(c)?.status === 'True' ? c! : undefined;
    });
    const range = first.status!.ports!;
    expect(range.range).toBe(`${range.basePort}-${range.basePort! + range.portRange! - 1}`);

    const second = await startCluster(ns, 'second', { basePort: range.basePort! + 100 });
    const refused = await eventually('second refused', async () => {
      const c = await getCluster(ns, 'second');
      return portsCondition(c)?.status === 'False' ? portsCondition(c)! : undefined;
    });
    expect(refused.reason).toBe('PortRangeTaken');
    expect(refused.message).toContain(`overlap ports ${range.range} of WekaCluster ${ns}/first`);
    expect(await warningEvent({ namespace: ns, name: 'second' }, 'PortRangeTaken')).toContain(range.range);
    expect((await getCluster(ns, 'second'))?.status?.ports).toBeUndefined();
    expect((await getCluster(ns, 'first'))?.status?.ports).toEqual(range);

    // A basePort clear of every other range is taken as given.
    const free = range.basePort! + 10_000;
    await kubeConfig()
      .makeApiClient(CustomObjectsApi)
      .patchNamespacedCustomObject(
        { ...CLUSTERS, namespace: ns, name: 'second', body: { spec: { ports: { basePort: free } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    await second.signal(specChangedSignal);
    const fixed = await eventually('second has ports', async () => {
      const c = await getCluster(ns, 'second');
      return portsCondition(c)?.status === 'True' ? c! : undefined;
    });
    expect(fixed.status?.ports).toMatchObject({ basePort: free, portRange: 500, range: `${free}-${free + 499}` });
    await deleteCluster(ns, 'second');
    await deleteCluster(ns, 'first');
  });

  it("keeps a cluster's singleton ports clear of every container's ports on every node", async () => {
    const node = await sharedDrivesNode(DEVICES, 'singletons');
    const guid = await createWekaCluster(node, uniqueName('singletons'));
    const ns = await uniqueNamespace('singletons');
    const spec = { nodeName: node, driveCores: 1, containerCapacity: 1000, driveTypesRatio: { tlc: 1, qlc: 0 } };
    const held = await createDriveContainer(op, { namespace: ns, name: 'held' }, spec, guid);
    const c = await waitForPhase({ namespace: ns, name: 'held' }, 'Ready');
    const agentPort = c.status!.allocations!.agentPort!;
    expect(agentPort).toBe(14100);

    // Its single ports start at base + 300 = 14100: the container's agent port on that node.
    await startCluster(ns, 'low', { basePort: 13800 });
    const low = await eventually(
      'low has ports',
      async () => {
        const cl = await getCluster(ns, 'low');
        return portsCondition(cl)?.status === 'True' ? cl! : undefined;
      },
      30_000,
      // Any container on any node of this control plane counts, other files' too.
      { progress: async () => `${portsCondition(await getCluster(ns, 'low'))?.message}; ${await portsHeld()}` },
    );
    const { lbPort, lbAdminPort, s3Port } = low.status!.ports!;
    for (const port of [lbPort, lbAdminPort, s3Port]) {
      expect(port).not.toBe(agentPort);
      expect(port! >= 14000 && port! < 14100).toBe(false);
    }
    await deleteCluster(ns, 'low');
    await deleteDriveContainer(op, { namespace: ns, name: 'held' }, held.uid);
    await waitGone({ namespace: ns, name: 'held' });
  });
});
