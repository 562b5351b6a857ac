// Cluster port ranges, decided inside the global cluster-ports mutex: a range of 500 ports per
// cluster in the first free gap from 35000, and the cluster's singleton ports (LB, LB admin, S3)
// inside it. The allocation lives only in the WekaCluster's status.ports.
import { ApplicationFailure } from '@temporalio/activity';
import {
  allocateClusterPortRange,
  allocateSingletonPorts,
  CLUSTER_PORT_RANGE_SIZE,
  type PortRange,
} from '../src/allocation/index.js';
import { FIELD_MANAGER, refText, type ObjectRef } from '../src/lifecycle/names.js';
import type { ActivityDeps } from './deps.js';
import { isConflict } from './kube/errors.js';
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
      const current = cluster.status?.ports;
      if (current?.basePort !== undefined && current.portRange !== undefined && current.s3Port !== undefined)
        return { ok: true, result: current };
      let range: PortRange;
      if (cluster.spec.ports?.basePort !== undefined) {
        range = {
          basePort: cluster.spec.ports.basePort,
          size: cluster.spec.ports.portRange ?? CLUSTER_PORT_RANGE_SIZE,
        };
      } else {
        const taken = (await api.listClusters())
          .filter((c) => c.metadata.uid !== cluster.metadata.uid)
          .flatMap((c) =>
            c.status?.ports?.basePort !== undefined && c.status.ports.portRange !== undefined
              ? [{ basePort: c.status.ports.basePort, size: c.status.ports.portRange }]
              : [],
          );
        const found = allocateClusterPortRange(taken, cluster.spec.ports?.portRange ?? CLUSTER_PORT_RANGE_SIZE);
        if (!found.ok) return { ok: false, error: { ...found.error }, waitForCapacity: true };
        range = found.range;
      }
      const singles = allocateSingletonPorts(range, []);
      if (!singles.ok) return { ok: false, error: { ...singles.error } };
      const ports = { basePort: range.basePort, portRange: range.size, ...singles.ports };
      try {
        await api.applyStatus('WekaCluster', ref, { ports }, FIELD_MANAGER.allocator, cluster.metadata.resourceVersion);
      } catch (err) {
        if (isConflict(err))
          throw ApplicationFailure.retryable(
            `${refText(ref)} changed while allocating ports; retrying`,
            'AllocationConflict',
          );
        throw err;
      }
      return { ok: true, result: ports };
    },

    async releaseClusterPorts(ref: ObjectRef): Promise<MutexOutcome> {
      const cluster = await api.getCluster(ref);
      if (cluster?.status?.ports) await api.applyStatus('WekaCluster', ref, {}, FIELD_MANAGER.allocator);
      deps.logger.info({ cluster: refText(ref) }, 'released cluster ports');
      return { ok: true };
    },
  };
}
