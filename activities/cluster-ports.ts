// Cluster port ranges, decided inside the global cluster-ports mutex (src/node/cluster-ports.ts):
// a range of 500 ports per cluster in the first free gap from 35000, or the spec's override when it
// overlaps no other cluster's, and the cluster's singleton ports (LB, LB admin, S3) inside it, clear
// of every container's ports on every node. The allocation lives only in the WekaCluster's status.ports.
import { ApplicationFailure } from '@temporalio/activity';
import { decideClusterPorts, ledgerPortBlocks } from '../src/node/cluster-ports.js';
import { FIELD_MANAGER, refText, type ObjectRef } from '../src/api/names.js';
import type { ActivityDeps } from './deps.js';
import { isConflict } from './kube/errors.js';
import { ledgerOf } from './kube/node-ledger.js';
import { WekaApi } from './kube/weka-api.js';
import type { MutexOutcome } from '../src/protocol.js';

/**
 * A refusal for a release of what a live cluster holds: only its deletion releases its ports and
 * device sets, whoever sends the request (a request is a signal anyone in the namespace can send).
 * A cluster being deleted, gone, or another object of its name by now may be released.
 */
export async function liveClusterRefusal(
  api: WekaApi,
  { uid, ...ref }: ObjectRef & { uid: string },
  what: string,
): Promise<MutexOutcome | undefined> {
  const cluster = await api.getCluster(ref);
  if (cluster?.metadata.uid !== uid || cluster.metadata.deletionTimestamp) return undefined;
  const message = `${refText(ref)} is not being deleted: its ${what} are released only by its deletion`;
  return { ok: false, error: { type: 'NotDeleting', message } };
}

export function createClusterPortDecisions(deps: ActivityDeps) {
  const api = new WekaApi(deps.kubeConfig);
  return {
    async allocateClusterPorts({ uid, ...ref }: ObjectRef & { uid: string }): Promise<MutexOutcome> {
      const cluster = await api.getCluster(ref);
      if (!cluster || cluster.metadata.uid !== uid || cluster.metadata.deletionTimestamp)
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

    /** Releases the ports of the cluster of `uid`; another object of its name keeps its own. */
    async releaseClusterPorts({ uid, ...ref }: ObjectRef & { uid: string }): Promise<MutexOutcome> {
      const refused = await liveClusterRefusal(api, { ...ref, uid }, 'ports');
      if (refused) {
        deps.logger.warn({ cluster: refText(ref) }, "refused to release a live cluster's ports");
        return refused;
      }
      const cluster = await api.getCluster(ref);
      if (cluster?.metadata.uid === uid && cluster.status?.ports)
        await api.applyStatus('WekaCluster', ref, {}, FIELD_MANAGER.allocator, cluster.metadata.resourceVersion);
      deps.logger.info({ cluster: refText(ref) }, 'released cluster ports');
      return { ok: true };
    },
  };
}
