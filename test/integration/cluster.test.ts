// Cluster formation: two WekaClusters share the same three nodes. Each gets its own port range,
// its drive containers on every node, its own Weka cluster; deleting one leaves the other intact.
import { CustomObjectsApi } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { WekaCluster, WekaContainer } from '../../src/api/index.js';
import { proxyName } from '../../src/api/names.js';
import { eventually } from '../support/async.js';
import { listContainers, readObject, WEKA_API } from '../support/containers.js';
import { kubeConfig, uniqueName, uniqueNamespace } from '../support/harness.js';
import { podExists, sharedDrivesNode, startWekaCluster, useTestOperator } from '../support/operator.js';
import { showDevice, wekaClusters } from '../support/simulator.js';
import { recordHistory } from '../support/histories.js';
import { POOL_LABEL, SMALL_MEMBER } from '../support/clusters.js';
import { containerWorkflowId, deleteRequestedSignal } from '../../src/protocol.js';

const op = useTestOperator();

const DEVICES = [
  { path: '/dev/nvme0n1', capacityGiB: 7680, type: 'TLC' as const },
  { path: '/dev/nvme1n1', capacityGiB: 30720, type: 'QLC' as const },
];
const group = WEKA_API;

async function getCluster(namespace: string, name: string): Promise<WekaCluster | null> {
  return readObject<WekaCluster>(kubeConfig(), { ...group, plural: 'wekaclusters' }, { namespace, name });
}

async function members(namespace: string, cluster: string): Promise<WekaContainer[]> {
  return listContainers(kubeConfig(), namespace, { fieldSelector: `spec.cluster=${cluster}` });
}

describe('cluster formation', () => {
  it(
    'forms two clusters on the same three nodes and tears one down without touching the other',
    { timeout: 300_000 },
    async () => {
      const pool = uniqueName('pool');
      const nodes = await Promise.all([0, 1, 2].map(() => sharedDrivesNode(DEVICES, 'shared', { [POOL_LABEL]: pool })));
      const ns = await uniqueNamespace('clusters');
      const custom = kubeConfig().makeApiClient(CustomObjectsApi);
      const handles = [];
      for (const name of ['tenant-a', 'tenant-b']) {
        const { handle } = await startWekaCluster(op, { namespace: ns, name }, pool, {
          driveContainers: 3,
          ...SMALL_MEMBER,
        });
        handles.push(handle);
      }

      const [a, b] = await eventually(
        'both clusters Ready',
        async () => {
          const both = await Promise.all([getCluster(ns, 'tenant-a'), getCluster(ns, 'tenant-b')]);
          return both.every((c) => c?.status?.phase === 'Ready') ? (both as WekaCluster[]) : undefined;
        },
        240_000,
      );
      expect(a!.status?.clusterGUID).toBeTruthy();
      expect(a!.status?.clusterGUID).not.toBe(b!.status?.clusterGUID);
      const [pa, pb] = [a!.status!.ports!, b!.status!.ports!];
      expect(pa.basePort! + pa.portRange! <= pb.basePort! || pb.basePort! + pb.portRange! <= pa.basePort!).toBe(true);

      for (const cluster of [a!, b!]) {
        const m = await members(ns, cluster.metadata.name!);
        expect(m).toHaveLength(3);
        expect(new Set(m.map((c) => c.spec.nodeName))).toEqual(new Set(nodes));
        for (const c of m) {
          expect(c.status?.phase).toBe('Ready');
          expect(c.status?.allocations?.wekaPort).toBeGreaterThanOrEqual(cluster.status!.ports!.basePort!);
        }
      }
      for (const node of nodes) {
        for (const d of DEVICES) {
          const info = await showDevice(node, d.path);
          expect(info.virtualDrives.reduce((s, v) => s + v.sizeGiB, 0)).toBeLessThanOrEqual(info.capacityGiB);
          expect(new Set(info.virtualDrives.map((v) => v.ownerClusterGUID))).toEqual(
            new Set([a!.status!.clusterGUID, b!.status!.clusterGUID]),
          );
        }
      }

      // Members tell their cluster when they start to wait for it and when they become Ready (at
      // least once each, as each became Ready), so that it looks at once instead of at its next pass.
      for (const handle of handles) {
        const events = (await handle.fetchHistory()).events ?? [];
        const wakes = events.filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'wakeUp');
        expect(wakes.length, `${handle.workflowId}: wake-ups from its members`).toBeGreaterThanOrEqual(3);
      }
      const member = (await members(ns, 'tenant-b'))[0]!;
      await recordHistory(containerWorkflowId(member.metadata.uid!), 'drive-container-cluster-member');

      await custom.deleteNamespacedCustomObject({ ...group, plural: 'wekaclusters', namespace: ns, name: 'tenant-a' });
      await handles[0]!.signal(deleteRequestedSignal);
      await handles[0]!.result();
      await recordHistory(handles[0]!.workflowId, 'cluster-formed-and-deleted');
      expect(await getCluster(ns, 'tenant-a')).toBeNull();
      expect(await members(ns, 'tenant-a')).toEqual([]);
      for (const node of nodes) {
        for (const d of DEVICES) {
          const owners = (await showDevice(node, d.path)).virtualDrives.map((v) => v.ownerClusterGUID);
          expect(owners.every((g) => g === b!.status!.clusterGUID)).toBe(true);
        }
        expect(await podExists(op.operatorNamespace, proxyName(node))).toBe(true);
      }
      expect((await getCluster(ns, 'tenant-b'))?.status?.phase).toBe('Ready');
      // With its last member gone, tenant-a's Weka cluster is gone; tenant-b's stays.
      expect(await wekaClusters()).not.toContain(a!.status!.clusterGUID);
      expect(await wekaClusters()).toContain(b!.status!.clusterGUID);

      await custom.deleteNamespacedCustomObject({ ...group, plural: 'wekaclusters', namespace: ns, name: 'tenant-b' });
      await handles[1]!.signal(deleteRequestedSignal);
      await handles[1]!.result();
      for (const node of nodes) {
        for (const d of DEVICES) expect((await showDevice(node, d.path)).virtualDrives).toEqual([]);
        expect(await podExists(op.operatorNamespace, proxyName(node))).toBe(false);
      }
      expect(await wekaClusters()).not.toContain(b!.status!.clusterGUID);
    },
  );
});
