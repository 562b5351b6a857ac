// Cluster port ranges, decided inside the global cluster-ports mutex (src/lifecycle/cluster-ports.ts):
// a range of 500 ports per cluster in the first free gap from 35000, or the spec's override when it
// overlaps no other cluster's, and the cluster's singleton ports (LB, LB admin, S3) inside it, clear
// of every container's ports on every node. The allocation lives only in the WekaCluster's status.ports.
import { ApplicationFailure } from '@temporalio/activity';
import { decideClusterPorts, ledgerPortBlocks } from '../src/lifecycle/cluster-ports.js';
import { FIELD_MANAGER, refText, type ObjectRef } from '../src/lifecycle/names.js';
import type { ActivityDeps } from './deps.js';
import { isConflict } from './kube/errors.js';
import { ledgerOf } from './kube/node-ledger.js';
import { WekaApi } from './kube/weka-api.js';
import type { MutexOutcome } from '../src/protocol.js';

export function createClusterPortDecisions(deps: ActivityDeps) {
  const api = new WekaApi(deps.kubeConfig);
  return {
    async allocateClusterPorts(ref: ObjectRef): Promise<MutexOutcome> {
      const cluster = await api.getCluster(ref);
      if (!cluster || cluster.metadata.deletionTimestamp)
        return {
          ok: false,
          error: { type: 'ClusterGone', message: `${refText(ref)} no longer exists or is being deleted` },
        };
      const [clusters, nodes] = await Promise.all([api.listClusters(), api.core.listNode()]);
      const containerPorts = nodes.items.flatMap((node) => ledgerPortBlocks(ledgerOf(node)));
      const decision = decideClusterPorts({ cluster, clusters, containerPorts });
      if (!decision.ok) return decision;
      if (!decision.write) return { ok: true, result: decision.ports };
      try {
        await api.applyStatus(
          'WekaCluster',
          ref,
          { ports: decision.ports },
          FIELD_MANAGER.allocator,
          cluster.metadata.resourceVersion,
        );
      } catch (err) {
        if (isConflict(err))
          throw ApplicationFailure.retryable(
            `${refText(ref)} changed while allocating ports; retrying`,
            'AllocationConflict',
          );
        throw err;
      }
      return { ok: true, result: decision.ports };
    },

    async releaseClusterPorts(ref: ObjectRef): Promise<MutexOutcome> {
      const cluster = await api.getCluster(ref);
      if (cluster?.status?.ports) await api.applyStatus('WekaCluster', ref, {}, FIELD_MANAGER.allocator);
      deps.logger.info({ cluster: refText(ref) }, 'released cluster ports');
      return { ok: true };
    },
  };
}
