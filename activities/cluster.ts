// Activities of a WekaCluster's lifecycle: read it, create its drive WekaContainers on the nodes
// its selector matches, form the Weka cluster from one of their pods, and delete the containers
// on teardown. The containers' own workflows do the per-node work.
import { ApplicationFailure } from '@temporalio/activity';
import { API_GROUP, API_VERSION, WEKA_CONTAINER_PLURAL, type WekaContainer } from '../src/api/index.js';
import { FIELD_MANAGER, FINALIZER, refText, wekaContainerName, type ObjectRef } from '../src/lifecycle/names.js';
import { clusterContainerName, clusterContainerSpec } from '../src/lifecycle/cluster-layout.js';
import {
  clusterCreateCall,
  clusterListCall,
  completeCall,
  findClusterByName,
  planClusterCreate,
} from '../src/weka/index.js';
import type { ActivityDeps } from './deps.js';
import { isAlreadyExists, isNotFound } from './kube/errors.js';
import { WekaApi } from './kube/weka-api.js';
import type { ClusterActivities, ClusterSnapshot, MemberContainer } from './cluster-types.js';

export const CLUSTER_LABEL = 'weka.weka.io/cluster';

export function createClusterActivities(deps: ActivityDeps): ClusterActivities {
  const api = new WekaApi(deps.kubeConfig);

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

  return {
    async readCluster(ref): Promise<ClusterSnapshot | null> {
      const c = await api.getCluster(ref);
      if (!c) return null;
      return {
        uid: c.metadata.uid ?? '',
        generation: c.metadata.generation ?? 0,
        deleting: c.metadata.deletionTimestamp !== undefined,
        spec: JSON.parse(JSON.stringify(c.spec)) as ClusterSnapshot['spec'],
        status: { ...(c.status?.clusterGUID ? { clusterGUID: c.status.clusterGUID } : {}) },
      };
    },

    async ensureClusterContainers({ ref, nodes }): Promise<MemberContainer[]> {
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
        try {
          await api.createContainer(body);
        } catch (err) {
          if (!isAlreadyExists(err)) throw err;
        }
      }
      return (await members(ref)).map((c) => ({
        name: c.metadata.name!,
        uid: c.metadata.uid ?? '',
        node: c.spec.nodeName ?? '',
        phase: c.status?.phase ?? 'Pending',
      }));
    },

    async clusterMembers(ref): Promise<MemberContainer[]> {
      return (await members(ref)).map((c) => ({
        name: c.metadata.name!,
        uid: c.metadata.uid ?? '',
        node: c.spec.nodeName ?? '',
        phase: c.status?.phase ?? 'Pending',
      }));
    },

    async formWekaCluster({ ref, target }): Promise<string> {
      const name = wekaContainerName(ref.namespace, ref.name);
      const run = async <T>(call: { argv: readonly string[]; parse(stdout: string): T }): Promise<T> =>
        completeCall(call, await deps.exec.run(target, call.argv, { timeoutMs: 60_000 }));
      const clusters = await run(clusterListCall());
      const plan = planClusterCreate(clusters, name);
      if (typeof plan === 'object') throw ApplicationFailure.nonRetryable(plan.conflict, 'WekaStateConflict');
      return plan === 'already-done'
        ? findClusterByName(clusters, name)!.guid
        : (await run(clusterCreateCall(name))).guid;
    },

    async writeClusterStatus({ ref, update }): Promise<void> {
      try {
        await api.applyStatus('WekaCluster', ref, { ...update }, FIELD_MANAGER.workflow);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    },

    async deleteClusterContainers(ref): Promise<number> {
      const remaining = await members(ref);
      for (const c of remaining)
        if (!c.metadata.deletionTimestamp)
          await api.delete('WekaContainer', { namespace: ref.namespace, name: c.metadata.name! });
      return remaining.length;
    },
  };
}
