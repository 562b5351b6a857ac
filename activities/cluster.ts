// Activities of a WekaCluster's lifecycle: read it, create its drive WekaContainers on the nodes
// its selector matches, form the Weka cluster from one of their pods, and delete the containers
// on teardown. The containers' own workflows do the per-node work.
import { ApplicationFailure } from '@temporalio/activity';
import { API_GROUP, API_VERSION, WEKA_CONTAINER_PLURAL, type WekaContainer } from '../src/api/index.js';
import { FIELD_MANAGER, FINALIZER, refText, wekaContainerName, type ObjectRef } from '../src/lifecycle/names.js';
import { clusterContainerName, clusterContainerSpec } from '../src/lifecycle/cluster-layout.js';
import { clusterCreateCall, clusterListCall, findClusterByName, planClusterCreate } from '../src/weka/index.js';
import type { ActivityDeps } from './deps.js';
import { createIfAbsent, orIfMissing } from './kube/errors.js';
import { snapshotOf, WekaApi } from './kube/weka-api.js';
import type { ClusterSnapshot, ClusterStatusUpdate, MemberContainer } from './cluster-types.js';
import type { ExecTargetRef } from './types.js';
import { wekaCli } from './weka-cli.js';

export const CLUSTER_LABEL = 'weka.weka.io/cluster';

export function createClusterActivities(deps: ActivityDeps) {
  const api = new WekaApi(deps.kubeConfig);
  const run = wekaCli(deps.exec);

  async function members(ref: ObjectRef): Promise<WekaContainer[]> {
    const list = (await api.custom.listNamespacedCustomObject({
      group: API_GROUP,
      version: API_VERSION,
      plural: WEKA_CONTAINER_PLURAL,
      namespace: ref.namespace,
      fieldSelector: `spec.cluster=${ref.name}`,
    })) as { items: WekaContainer[] };
    return list.items;
  }

  /** Every member of the cluster, as its workflow sees it. */
  async function memberContainers(ref: ObjectRef): Promise<MemberContainer[]> {
    return (await members(ref)).map((c) => ({
      name: c.metadata.name!,
      uid: c.metadata.uid ?? '',
      node: c.spec.nodeName ?? '',
      phase: c.status?.phase ?? 'Pending',
    }));
  }

  return {
    async readCluster(ref: ObjectRef): Promise<ClusterSnapshot | null> {
      const c = await api.getCluster(ref);
      if (!c) return null;
      return {
        ...snapshotOf<ClusterSnapshot['spec']>(c),
        status: {
          ...(c.status?.clusterGUID ? { clusterGUID: c.status.clusterGUID } : {}),
          conditions: [...(c.status?.conditions ?? [])],
        },
      };
    },

    /** Creates the cluster's drive containers that are missing; returns every member. */
    async ensureClusterContainers({ ref, nodes }: { ref: ObjectRef; nodes: string[] }): Promise<MemberContainer[]> {
      const cluster = await api.getCluster(ref);
      if (!cluster) throw ApplicationFailure.nonRetryable(`${refText(ref)} does not exist`, 'NotFound');
      const count = cluster.spec.dynamicTemplate?.driveContainers ?? 0;
      for (let i = 0; i < count; i++) {
        const name = clusterContainerName(ref.name, i);
        const body = {
          apiVersion: `${API_GROUP}/${API_VERSION}`,
          kind: 'WekaContainer',
          // Born with the finalizer: its teardown must run before it goes, whoever deletes it.
          metadata: { name, namespace: ref.namespace, finalizers: [FINALIZER], labels: { [CLUSTER_LABEL]: ref.name } },
          spec: clusterContainerSpec(cluster.spec, ref.name, nodes[i % nodes.length]!),
        } as WekaContainer;
        await createIfAbsent(api.createContainer(body));
      }
      return memberContainers(ref);
    },

    async clusterMembers(ref: ObjectRef): Promise<MemberContainer[]> {
      return memberContainers(ref);
    },

    /** Creates the Weka cluster (or finds it by name) from a member's pod; returns its GUID. */
    async formWekaCluster({ ref, target }: { ref: ObjectRef; target: ExecTargetRef }): Promise<string> {
      const name = wekaContainerName(ref.namespace, ref.name);
      const clusters = await run(target, clusterListCall());
      const plan = planClusterCreate(clusters, name);
      if (typeof plan === 'object') throw ApplicationFailure.nonRetryable(plan.conflict, 'WekaStateConflict');
      return plan === 'already-done'
        ? findClusterByName(clusters, name)!.guid
        : (await run(target, clusterCreateCall(name))).guid;
    },

    async writeClusterStatus({ ref, update }: { ref: ObjectRef; update: ClusterStatusUpdate }): Promise<void> {
      // The object is gone: there is no status left to show.
      await orIfMissing(api.applyStatus('WekaCluster', ref, { ...update }, FIELD_MANAGER.workflow), undefined);
    },

    /** Deletes every member not already being deleted; returns how many members still exist. */
    async deleteClusterContainers(ref: ObjectRef): Promise<number> {
      const remaining = await members(ref);
      for (const c of remaining)
        if (!c.metadata.deletionTimestamp)
          await api.delete('WekaContainer', { namespace: ref.namespace, name: c.metadata.name! });
      return remaining.length;
    },
  };
}
