// Destroying an empty Weka cluster: the last step of a WekaCluster's deletion, once every member
// container has left. Weka refuses while any container is in the cluster.
import { ignoreOutput, type WekaCall } from './call.js';
import { WEKA_TOOL } from './cluster-drive.js';
import type { WekaClusterInfo, WekaContainerInfo } from './cluster-formation.js';
import type { Plan } from './plan.js';
import { sameUUID, validUUID } from './validate.js';

export function clusterDestroyCall(clusterGUID: string): WekaCall<void> {
  return { argv: [WEKA_TOOL, 'cluster', 'destroy', validUUID('cluster GUID', clusterGUID)], parse: ignoreOutput };
}

/**
 * From `cluster list` and the cluster's `container list`: destroy it, it is already gone (an earlier
 * attempt whose answer was lost, or another member's teardown), or containers are still in it.
 */
export function planClusterDestroy(
  clusters: readonly WekaClusterInfo[],
  members: readonly WekaContainerInfo[],
  clusterGUID: string,
): Plan {
  if (!clusters.some((c) => sameUUID(c.guid, clusterGUID))) return 'already-done';
  if (members.length > 0) {
    const names = members.map((m) => `${m.containerId} (${m.name})`).join(', ');
    return { conflict: `cluster ${clusterGUID} still has ${members.length} container(s): ${names}` };
  }
  return 'run';
}
