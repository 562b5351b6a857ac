// A WekaCluster after its first Ready: scaling driveContainers up and down, deletion destroying the
// Weka cluster, and a member whose node is lost (deleted, or NotReady past the grace period)
// replaced on another selected node.
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { WorkflowHandle } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import type { WekaCluster, WekaContainer } from '../../src/api/index.js';
import { deleteRequestedSignal, specChangedSignal } from '../../src/protocol.js';
import { eventually } from '../support/async.js';
import { listContainers, readObject } from '../support/containers.js';
import {
  kubeConfig,
  removeNode,
  startNodeKubelet,
  stopNodeKubelet,
  uniqueName,
  uniqueNamespace,
} from '../support/harness.js';
import { sharedDrivesNode, startWekaCluster, useTestOperator } from '../support/operator.js';
import { clusterContainers, showDevice, wekaClusters } from '../support/simulator.js';
import { POOL_LABEL, SMALL_MEMBER, WEKA_CLUSTERS } from '../support/clusters.js';

/** Short, so that a NotReady node counts as lost within the test. */
const GRACE_MS = 4_000;

const op = useTestOperator({ nodeLossGraceMs: GRACE_MS });

const DEVICES = [
  { path: '/dev/nvme0n1', capacityGiB: 7680, type: 'TLC' as const },
  { path: '/dev/nvme1n1', capacityGiB: 30720, type: 'QLC' as const },
];
const CLUSTERS = WEKA_CLUSTERS;
const custom = () => kubeConfig().makeApiClient(CustomObjectsApi);

async function getCluster(namespace: string, name: string): Promise<WekaCluster | null> {
  return readObject<WekaCluster>(kubeConfig(), CLUSTERS, { namespace, name });
}

async function members(namespace: string, cluster: string): Promise<WekaContainer[]> {
  return listContainers(kubeConfig(), namespace, { fieldSelector: `spec.cluster=${cluster}` });
}

/** Three selected nodes and a cluster of `driveContainers` members on them. */
async function clusterOnThreeNodes(prefix: string, driveContainers: number) {
  const pool = uniqueName('pool');
  const nodes = await Promise.all([0, 1, 2].map(() => sharedDrivesNode(DEVICES, prefix, { [POOL_LABEL]: pool })));
  const ns = await uniqueNamespace(prefix);
  const name = 'tenant';
  const { handle: workflow } = await startWekaCluster(op, { namespace: ns, name }, pool, {
    driveContainers,
    ...SMALL_MEMBER,
  });
  return { ns, name, nodes, workflow };
}

async function patchTemplate(
  cluster: { ns: string; name: string; workflow: WorkflowHandle },
  template: Record<string, unknown>,
): Promise<void> {
  await custom().patchNamespacedCustomObject(
    { ...CLUSTERS, namespace: cluster.ns, name: cluster.name, body: { spec: { dynamicTemplate: template } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
  await cluster.workflow.signal(specChangedSignal);
}

/** The cluster Ready with exactly `names` as members, each Ready. */
async function readyWith(ns: string, name: string, names: string[], timeoutMs = 180_000): Promise<WekaContainer[]> {
  return eventually(
    `${name} Ready with ${names.join(', ')}`,
    async () => {
      const c = await getCluster(ns, name);
      // A replaced member whose node is down stays, being deleted, until the node is back.
      const m = (await members(ns, name)).filter((x) => !x.metadata.deletionTimestamp);
      const ok =
        c?.status?.phase === 'Ready' &&
        m
          .map((x) => x.metadata.name)
          .sort()
          .join() === [...names].sort().join() &&
        m.every((x) => x.status?.phase === 'Ready');
      return ok ? m : undefined;
    },
    timeoutMs,
    {
      progress: async () => {
        const c = await getCluster(ns, name);
        const m = await members(ns, name);
        const conditions = (c?.status?.conditions ?? []).map((x) => `${x.type}=${x.status} ${x.message}`).join('; ');
        return `cluster ${c?.status?.phase} [${conditions}]; members ${m.map((x) => `${x.metadata.name}@${x.spec.nodeName}:${x.status?.phase}${x.metadata.deletionTimestamp ? '(deleting)' : ''}`).join(', ')}`;
      },
    },
  );
}

async function wekaClusterGUIDs(_node: string): Promise<string[]> {
  return wekaClusters();
}

async function wekaContainers(_node: string, guid: string): Promise<string[]> {
  return (await clusterContainers(guid)).map((c) => c.name);
}

/** The Weka cluster's containers once the member named `member` has left it (seen from `node`). */
async function leftWeka(node: string, guid: string, member: string): Promise<string[]> {
  return eventually(
    `${member} out of Weka cluster ${guid}`,
    async () => {
      const names = await wekaContainers(node, guid);
      return names.some((n) => n.endsWith(member)) ? undefined : names;
    },
    60_000,
  );
}

describe('a WekaCluster after its first Ready', () => {
  it(
    'scales driveContainers up, then down one member at a time while staying Ready, and its deletion destroys the Weka cluster',
    { timeout: 480_000 },
    async () => {
      const cluster = await clusterOnThreeNodes('scale', 2);
      const { ns, name, nodes } = cluster;
      await readyWith(ns, name, ['tenant-drive-0', 'tenant-drive-1']);

      await patchTemplate(cluster, { driveContainers: 3 });
      const three = await readyWith(ns, name, ['tenant-drive-0', 'tenant-drive-1', 'tenant-drive-2']);
      expect(new Set(three.map((m) => m.spec.nodeName))).toEqual(new Set(nodes));
      const guid = (await getCluster(ns, name))!.status!.clusterGUID!;
      expect((await wekaContainers(nodes[0]!, guid)).length).toBe(3);

      await patchTemplate(cluster, { driveContainers: 1 });
      // While it shrinks: never two members going at once, and the cluster stays Ready.
      const seen: string[] = [];
      await eventually(
        'shrunk to tenant-drive-0',
        async () => {
          const [c, m] = await Promise.all([getCluster(ns, name), members(ns, name)]);
          const going = m.filter((x) => x.metadata.deletionTimestamp).map((x) => x.metadata.name!);
          expect(going.length, `members going at once: ${going.join(', ')}`).toBeLessThanOrEqual(1);
          const ready = c?.status?.conditions?.find((x) => x.type === 'Ready');
          expect(ready?.status, `cluster Ready condition while shrinking: ${ready?.message}`).toBe('True');
          for (const g of going) if (!seen.includes(g)) seen.push(g);
          return m.length === 1 && m[0]!.metadata.name === 'tenant-drive-0' ? true : undefined;
        },
        180_000,
        { intervalMs: 250, retryErrors: false },
      );
      expect(seen).toEqual(['tenant-drive-2', 'tenant-drive-1']);
      expect(await wekaContainers(nodes[0]!, guid)).toEqual([expect.stringContaining('tenant-drive-0')]);
      await readyWith(ns, name, ['tenant-drive-0'], 60_000);

      await custom().deleteNamespacedCustomObject({ ...CLUSTERS, namespace: ns, name });
      await cluster.workflow.signal(deleteRequestedSignal);
      await eventually(
        'the cluster gone',
        async () => ((await getCluster(ns, name)) === null ? true : undefined),
        120_000,
      );
      expect(await wekaClusterGUIDs(nodes[0]!)).not.toContain(guid);
    },
  );

  it(
    'replaces a member whose node is deleted, and one whose node is NotReady past the grace period, on another selected node; deleted then, its Weka cluster is destroyed and the down node cleaned once back',
    { timeout: 480_000 },
    async () => {
      const cluster = await clusterOnThreeNodes('loss', 2);
      const { ns, name, nodes } = cluster;
      const before = await readyWith(ns, name, ['tenant-drive-0', 'tenant-drive-1']);
      const guid = (await getCluster(ns, name))!.status!.clusterGUID!;
      const lost = before.find((m) => m.metadata.name === 'tenant-drive-1')!;
      const spare = nodes.find((n) => !before.some((m) => m.spec.nodeName === n))!;

      await removeNode(lost.spec.nodeName!);
      const after = await readyWith(ns, name, ['tenant-drive-0', 'tenant-drive-1-1']);
      expect(after.find((m) => m.metadata.name === 'tenant-drive-1-1')!.spec.nodeName).toBe(spare);
      const replaced = (await getCluster(ns, name))!.status!.conditions!.find((c) => c.type === 'MembersReplaced');
      expect(replaced?.message).toContain(`member tenant-drive-1 is replaced by tenant-drive-1-1 on node ${spare}`);
      expect(replaced?.message).toContain(lost.status!.allocations!.virtualDrives![0]!.virtualUUID);
      // The cluster is Ready once the members it counts on are; the lost member's teardown takes
      // it out of the Weka cluster from a peer's pod meanwhile, and may finish a moment later.
      const inWeka = await leftWeka(spare, guid, 'tenant-drive-1');
      expect(inWeka).toHaveLength(2);

      // tenant-drive-0's node stops answering: past the grace period it is replaced too.
      const down = before.find((m) => m.metadata.name === 'tenant-drive-0')!.spec.nodeName!;
      await stopNodeKubelet(down, { markNotReady: true });
      const last = await readyWith(ns, name, ['tenant-drive-0-1', 'tenant-drive-1-1'], 240_000);
      expect(last.every((m) => m.spec.nodeName === spare)).toBe(true);
      const old = (await members(ns, name)).find((m) => m.metadata.name === 'tenant-drive-0');
      expect(old?.metadata.deletionTimestamp).toBeTruthy();
      const inWekaNow = await leftWeka(spare, guid, 'tenant-drive-0');
      expect(inWekaNow).toHaveLength(2);

      // Deleted while that node is still down: the two members left destroy the Weka cluster
      // (tenant-drive-0 was taken out of it already); once the node is back, tenant-drive-0's
      // teardown finds its cluster gone, removes its signatures, and the WekaCluster goes.
      await custom().deleteNamespacedCustomObject({ ...CLUSTERS, namespace: ns, name });
      await cluster.workflow.signal(deleteRequestedSignal);
      await eventually(
        'the Weka cluster destroyed',
        async () => (!(await wekaClusterGUIDs(spare)).includes(guid) ? true : undefined),
        180_000,
      );
      await startNodeKubelet(down);
      await eventually(
        'the WekaCluster gone',
        async () => ((await getCluster(ns, name)) === null ? true : undefined),
        180_000,
      );
      for (const d of DEVICES) expect((await showDevice(down, d.path)).virtualDrives).toEqual([]);
    },
  );
});
