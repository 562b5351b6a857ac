// Finding and removing the stale virtual drives of a node, executed by its mutex (so nothing is
// allocated, signed or released on the node meanwhile). A virtual drive is stale when it is on a
// device of the node and nothing claims it: no entry of the node's ledger, no drive container's
// status (any namespace), and no Weka cluster. The Weka cluster it was made for is asked through a
// running pod of one of its members; a cluster known to exist (a drive container or a WekaCluster
// names it) that none can answer for keeps its drives (what cannot be told is never removed). A removal finds the
// stale drives again first and removes only those it was asked to that are still stale. Reading
// the devices needs the node's ssdproxy; on a node no drive container uses, it goes again after.
import { proxyName, WEKA_POD_CONTAINER } from '../src/api/names.js';
import type { MutexOutcome } from '../src/protocol.js';
import { ledgerOf } from './kube/node-ledger.js';
import { orIfMissing } from './kube/errors.js';
import { WekaApi } from './kube/weka-api.js';
import { knownClusterGUIDs, unclaimedFound, type StaleVirtualDrive } from '../src/node/stale-virtual-drives.js';
import { driveDoesNotExist, driveShowCall, virtualRemoveCall } from '../src/weka/index.js';
import { createClusterActivities } from './cluster.js';
import type { ActivityDeps } from './deps.js';
import { stderrOf } from './drive-removal.js';
import { createNodeDecisions } from './node-decisions.js';
import { createNodeDrivesPublisher } from './node-drives-publisher.js';
import type { ExecTargetRef, KeptVirtualDrive, RemovedOnNode, StaleOnNode } from './types.js';
import { wekaCli } from './weka-cli.js';

export function createStaleVirtualDrives(deps: ActivityDeps) {
  const api = new WekaApi(deps.kubeConfig);
  const run = wekaCli(deps.exec);
  const publisher = createNodeDrivesPublisher(deps);
  const cluster = createClusterActivities(deps);
  const proxies = createNodeDecisions(deps);

  /** `work`, then the node's proxy removed when nothing uses it (as a drive container's teardown would). */
  async function leavingNoIdleProxy<T>(node: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } finally {
      await proxies.removeProxyIfUnused({ node });
    }
  }

  /** Whether the cluster of `guid` lists the drive: a member's pod is asked; undefined when none can be. */
  async function clusterClaims(target: ExecTargetRef, virtualUUID: string): Promise<boolean | undefined> {
    try {
      return (await run(target, driveShowCall(virtualUUID))).length > 0;
    } catch (err) {
      if (driveDoesNotExist(virtualUUID).test(stderrOf(err))) return false;
      deps.logger.warn({ virtualUUID, err }, 'could not ask the Weka cluster whether it holds a virtual drive');
      return undefined;
    }
  }

  /** The node's devices read again (its ledger's found drives made current), then each checked. */
  async function find(node: string): Promise<StaleOnNode> {
    await publisher.publish(node);
    const read = await orIfMissing(api.core.readNode({ name: node }), null);
    if (!read) return { stale: [], kept: [] };
    const [containers, clusters] = await Promise.all([api.listAllContainers(), api.listClusters()]);
    const knownClusters = knownClusterGUIDs(containers, clusters);
    const named = new Set(
      containers.flatMap((c) => (c.status?.allocations?.virtualDrives ?? []).map((v) => v.virtualUUID)),
    );
    const candidates = unclaimedFound(ledgerOf(read).found, named);
    const stale: StaleVirtualDrive[] = [];
    const kept: KeptVirtualDrive[] = [];
    for (const guid of new Set(candidates.map((c) => c.ownerClusterGUID))) {
      const ofCluster = candidates.filter((c) => c.ownerClusterGUID === guid);
      const known = knownClusters.has(guid);
      const peer = known ? await cluster.findPeerPod({ namespace: '', clusterGUID: guid, exceptUid: '' }) : null;
      for (const drive of ofCluster) {
        if (!known) {
          stale.push(drive);
          continue;
        }
        const claimed = peer ? await clusterClaims(peer, drive.virtualUUID) : undefined;
        if (claimed === false) stale.push(drive);
        else
          kept.push({
            virtualUUID: drive.virtualUUID,
            why:
              claimed === true
                ? `Weka cluster ${guid} lists it as one of its drives`
                : `Weka cluster ${guid} has members, but none could be asked whether it holds the drive`,
          });
      }
    }
    return { stale, kept };
  }

  async function remove(node: string, drives: readonly StaleVirtualDrive[]): Promise<RemovedOnNode> {
    const now = await find(node);
    const still = new Set(now.stale.map((d) => `${d.virtualUUID}|${d.physicalUUID}`));
    const target = { namespace: deps.operatorNamespace, pod: proxyName(node), container: WEKA_POD_CONTAINER };
    const result: RemovedOnNode = { removed: [], spared: [] };
    for (const drive of drives) {
      if (!still.has(`${drive.virtualUUID}|${drive.physicalUUID}`)) {
        result.spared.push(drive.virtualUUID);
        continue;
      }
      await run(target, virtualRemoveCall(drive));
      result.removed.push(drive.virtualUUID);
      deps.logger.info({ node, ...drive }, 'removed a stale virtual drive');
    }
    // The devices read again: the removed drives leave the ledger's found ones, and their GiB are offered again.
    if (result.removed.length > 0) await publisher.publish(node);
    return result;
  }

  return {
    async findStaleVirtualDrives({ node }: { node: string }): Promise<MutexOutcome> {
      return { ok: true, result: await leavingNoIdleProxy(node, () => find(node)) };
    },

    async removeStaleVirtualDrives({
      node,
      drives,
    }: {
      node: string;
      drives: StaleVirtualDrive[];
    }): Promise<MutexOutcome> {
      return { ok: true, result: await leavingNoIdleProxy(node, () => remove(node, drives)) };
    },
  };
}
