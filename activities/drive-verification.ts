// The drive verification's activities: which nodes to look at, and which Ready drive containers on
// a node miss a virtual drive: gone from the node's devices (a re-imaged disk, a `weka-sign-drive
// virtual remove` by hand) or from its Weka cluster (a `weka cluster drive remove`). One read of
// the devices in the node's ssdproxy pod and one drive list per Weka cluster on the node, whatever
// the number of containers. What cannot be read is not reported: a drive is missing only when a
// read that worked does not list it. It only reads, so it does not wait for the node's mutex:
// only Ready containers that are not being deleted are looked at, whose drives no decision of the
// mutex is signing or removing; and a report that raced one costs a container a check, never a
// change, since its repair probes every drive before it signs or adds anything.
import { proxyName, WEKA_POD_CONTAINER, type ObjectRef } from '../src/api/names.js';
import type { WekaContainer } from '../src/api/index.js';
import { clusterDriveListCall, listDrivesCall } from '../src/weka/index.js';
import type { ActivityDeps } from './deps.js';
import { orIfMissing } from './kube/errors.js';
import { runningMemberPod } from './kube/member-pod.js';
import { WekaApi } from './kube/weka-api.js';
import type { DrivesMissing, NodeDrivesVerified } from './types.js';
import { wekaCli } from './weka-cli.js';

export function createDriveVerification(deps: ActivityDeps) {
  const api = new WekaApi(deps.kubeConfig);
  const run = wekaCli(deps.exec);

  return {
    /** The nodes with an ssdproxy of the operator's: those where drive containers hold virtual drives. */
    async nodesToVerify(): Promise<string[]> {
      const proxies = (await api.listAllContainers()).filter(
        (c) => c.spec.mode === 'ssdproxy' && c.metadata.namespace === deps.operatorNamespace && c.spec.nodeName,
      );
      return [...new Set(proxies.map((c) => c.spec.nodeName!))].sort();
    },

    async verifyNodeDrives({ node }: { node: string }): Promise<NodeDrivesVerified> {
      const ready = (await api.listContainersOnNode(node)).filter(isVerifiable);
      if (ready.length === 0) return { checked: 0, missing: [] };
      const nodeObject = await orIfMissing(api.core.readNode({ name: node }), null);
      if (!nodeObject?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
        return { checked: 0, missing: [], skipped: `node ${node} is not Ready` };
      const proxy = { namespace: deps.operatorNamespace, pod: proxyName(node), container: WEKA_POD_CONTAINER };
      const pod = await orIfMissing(api.core.readNamespacedPod({ namespace: proxy.namespace, name: proxy.pod }), null);
      if (pod?.status?.phase !== 'Running' || pod.metadata?.deletionTimestamp)
        return { checked: 0, missing: [], skipped: `the ssdproxy of node ${node} does not run` };
      const onDevices = new Set(
        (await run(proxy, listDrivesCall())).flatMap((d) => d.virtualDrives.map((v) => v.virtualUUID.toLowerCase())),
      );
      const inCluster = new Map<string, Set<string> | undefined>();
      for (const guid of new Set(ready.map((c) => c.status!.clusterGUID!)))
        inCluster.set(guid, await clusterDrives(ready.filter((c) => c.status!.clusterGUID === guid)));
      const missing: DrivesMissing[] = [];
      for (const c of ready) {
        const listed = inCluster.get(c.status!.clusterGUID!);
        const gone: string[] = [];
        for (const { virtualUUID } of c.status!.allocations!.virtualDrives!) {
          const where = [
            ...(onDevices.has(virtualUUID.toLowerCase()) ? [] : ["the node's devices"]),
            ...(listed === undefined || listed.has(virtualUUID.toLowerCase()) ? [] : ['its Weka cluster']),
          ];
          if (where.length > 0) gone.push(`${virtualUUID} (not on ${where.join(' nor in ')})`);
        }
        if (gone.length > 0) missing.push({ ref: refOf(c), uid: c.metadata.uid!, missing: gone });
      }
      if (missing.length > 0) deps.logger.warn({ node, missing }, 'Ready drive containers miss virtual drives');
      return { checked: ready.length, missing };
    },
  };

  /** The virtual UUIDs the containers' Weka cluster lists, asked in one of their pods; undefined when none answers. */
  async function clusterDrives(members: readonly WekaContainer[]): Promise<Set<string> | undefined> {
    const target = await runningMemberPod(api, members);
    if (!target) return undefined;
    try {
      return new Set((await run(target, clusterDriveListCall())).map((d) => d.uuid.toLowerCase()));
    } catch (err) {
      deps.logger.warn({ err, pod: `${target.namespace}/${target.pod}` }, "could not list the Weka cluster's drives");
      return undefined;
    }
  }
}

/** A Ready drive container of virtual drives, joined to its Weka cluster, not being deleted. */
function isVerifiable(c: WekaContainer): boolean {
  return (
    c.spec.mode === 'drive' &&
    !c.metadata.deletionTimestamp &&
    c.status?.phase === 'Ready' &&
    c.status.containerID !== undefined &&
    !!c.status.clusterGUID &&
    (c.status.allocations?.virtualDrives?.length ?? 0) > 0
  );
}

const refOf = (c: WekaContainer): ObjectRef => ({ namespace: c.metadata.namespace!, name: c.metadata.name! });
