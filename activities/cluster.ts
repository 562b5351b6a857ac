// Activities of a WekaCluster's lifecycle: read it, create its drive WekaContainers on the nodes
// its selector matches, form the Weka cluster from one of their pods, and delete the containers
// on teardown. The containers' own workflows do the per-node work.
import { ApplicationFailure } from '@temporalio/activity';
import { API_GROUP, API_VERSION, WEKA_CONTAINER_PLURAL, type WekaContainer } from '../src/api/index.js';
import { FINALIZER, WEKA_POD_CONTAINER, refText, wekaContainerName, type ObjectRef } from '../src/api/names.js';
import { OWNER_UID_LABEL } from '../src/manifests/pods.js';
import { labelSelectorText } from '../src/node/sign-drives-request.js';
import {
  clusterContainerSpec,
  type ClusterMemberView,
  type ClusterNodeView,
  type GrowableCapacity,
  type MemberToCreate,
} from '../src/lifecycle/cluster-layout.js';
import { clusterCreateCall, clusterNameCall } from '../src/weka/index.js';
import type { ActivityDeps } from './deps.js';
import { createIfAbsent, orIfMissing } from './kube/errors.js';
import { mergeHeaders, snapshotOf, WekaApi } from './kube/weka-api.js';
import type { ClusterSnapshot, ExecTargetRef, MemberContainer } from './types.js';
import { runningPodIP } from './join-addresses.js';
import { runningMemberPod } from './kube/member-pod.js';
import { wekaCli } from './weka-cli.js';
import { identify } from './weka-identity.js';

export const CLUSTER_LABEL = 'weka.weka.io/cluster';

/** How long a member's node may be NotReady before the member is replaced, unless deps say. */
export const DEFAULT_NODE_LOSS_GRACE_MS = 5 * 60_000;

export function createClusterActivities(deps: ActivityDeps) {
  const api = new WekaApi(deps.kubeConfig);
  const run = wekaCli(deps.exec);

  const members = (ref: ObjectRef, uid?: string) => api.listClusterMembers(ref, uid);
  const deleteMember = (ref: ObjectRef, uid: string) => api.deleteContainerOfUid(ref, uid);

  /** Every member of the cluster of `uid`, as its workflow sees it. */
  async function memberContainers(ref: ObjectRef, uid: string): Promise<MemberContainer[]> {
    return (await members(ref, uid)).map((c) => ({
      name: c.metadata.name!,
      uid: c.metadata.uid ?? '',
      node: c.spec.nodeName ?? '',
      phase: c.status?.phase ?? 'Pending',
    }));
  }

  /**
   * A member's Weka container for a cluster create: its address while it is a stem, the GUID of
   * its cluster once it is in one (only asked of the pod `target`, the first member's), or
   * undefined when its pod does not run (with an IP) or its container is in a cluster already.
   */
  async function stemOf(
    namespace: string,
    member: { name: string; uid: string },
    target?: ExecTargetRef,
  ): Promise<{ ip: string; port: number } | string | undefined> {
    const at = { namespace, name: member.name };
    const container = await api.getContainer(at);
    const wekaPort = container?.status?.allocations?.wekaPort;
    const agentPort = container?.status?.allocations?.agentPort;
    if (!container || container.metadata.uid !== member.uid || wekaPort === undefined || agentPort === undefined)
      return undefined;
    const ip = await runningPodIP(api, namespace, member);
    if (!ip) return undefined;
    const name = wekaContainerName(namespace, member.name);
    const where = target ?? { namespace, pod: member.name, container: WEKA_POD_CONTAINER };
    const identity = await identify(run, where, name, agentPort);
    if (identity.state === 'member') return target ? identity.clusterGUID : undefined;
    return { ip, port: wekaPort };
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

    /**
     * What the cluster's reconcile plans from: every member (its slot, node, phase, capacity and
     * what it holds) and every node that is selected or carries a member, with whether it counts
     * as lost: NotReady for longer than the grace period (deps.nodeLossGraceMs).
     */
    async clusterView({
      ref,
      uid,
    }: {
      ref: ObjectRef;
      uid: string;
    }): Promise<{ members: ClusterMemberView[]; nodes: ClusterNodeView[] }> {
      const cluster = await api.getCluster(ref);
      if (!cluster || cluster.metadata.uid !== uid)
        throw ApplicationFailure.nonRetryable(`${refText(ref)} (uid ${uid}) does not exist`, 'NotFound');
      const list = await members(ref, uid);
      const selector = labelSelectorText(cluster.spec.nodeSelector ?? {});
      const selected = new Set(
        (await api.core.listNode(selector ? { labelSelector: selector } : {})).items.map((n) => n.metadata?.name ?? ''),
      );
      const graceMs = deps.nodeLossGraceMs ?? DEFAULT_NODE_LOSS_GRACE_MS;
      const all = (await api.core.listNode()).items;
      const nodes: ClusterNodeView[] = all
        .filter((n) => selected.has(n.metadata?.name ?? '') || list.some((c) => c.spec.nodeName === n.metadata?.name))
        .map((n) => {
          const ready = n.status?.conditions?.find((c) => c.type === 'Ready');
          const since = ready?.lastTransitionTime ? new Date(ready.lastTransitionTime).getTime() : Date.now();
          const notReadyMs = ready?.status === 'True' ? 0 : Date.now() - since;
          const lost =
            notReadyMs > graceMs
              ? `node ${n.metadata!.name} has not been Ready for ${Math.round(notReadyMs / 1000)} s (grace period ${graceMs / 1000} s)`
              : undefined;
          return {
            name: n.metadata!.name!,
            selected: selected.has(n.metadata!.name!),
            ready: ready?.status === 'True',
            ...(lost ? { lost } : {}),
          };
        });
      return {
        members: list.map((c) => {
          const drives = c.status?.allocations?.virtualDrives ?? [];
          const holds = drives.length
            ? drives.map((d) => `${d.virtualUUID} (${d.capacityGiB} GiB on ${d.serial})`).join(', ')
            : 'no virtual drives';
          const seen = c.status?.observedGeneration === c.metadata.generation;
          const reconciling = (c.status?.conditions ?? []).some((x) => x.type === 'Reconciling' && x.status === 'True');
          return {
            name: c.metadata.name!,
            uid: c.metadata.uid ?? '',
            node: c.spec.nodeName ?? '',
            atWork: !seen || reconciling,
            phase: c.status?.phase ?? 'Pending',
            deleting: Boolean(c.metadata.deletionTimestamp),
            holds,
            ...(c.spec.containerCapacity !== undefined ? { containerCapacity: c.spec.containerCapacity } : {}),
            ...(c.spec.numDrives !== undefined ? { numDrives: c.spec.numDrives } : {}),
          };
        }),
        nodes,
      };
    },

    /** Creates the planned members that do not exist yet (fenced on the cluster's uid); returns every member. */
    async createClusterMembers({
      ref,
      uid,
      create,
    }: {
      ref: ObjectRef;
      uid: string;
      create: MemberToCreate[];
    }): Promise<MemberContainer[]> {
      const cluster = await api.getCluster(ref);
      if (!cluster || cluster.metadata.uid !== uid)
        throw ApplicationFailure.nonRetryable(`${refText(ref)} (uid ${uid}) does not exist`, 'NotFound');
      for (const { name, node } of create) {
        const body = {
          apiVersion: `${API_GROUP}/${API_VERSION}`,
          kind: 'WekaContainer',
          // Born with the finalizer: its teardown must run before it goes, whoever deletes it.
          // Owned by its cluster, so that Kubernetes' garbage collector deletes (and so tears down)
          // a member the cluster's own teardown did not reach (its finalizer was removed by hand).
          metadata: {
            name,
            namespace: ref.namespace,
            finalizers: [FINALIZER],
            labels: { [CLUSTER_LABEL]: ref.name },
            ownerReferences: [
              { apiVersion: `${API_GROUP}/${API_VERSION}`, kind: 'WekaCluster', name: ref.name, uid, controller: true },
            ],
          },
          spec: clusterContainerSpec(cluster.spec, ref.name, node, cluster.status?.driveSharing),
        } as WekaContainer;
        await createIfAbsent(api.createContainer(body));
      }
      return memberContainers(ref, uid);
    },

    /** Raises a member's capacity fields to the template's (its own workflow grows it). */
    async growClusterMember({
      ref,
      uid,
      capacity,
    }: {
      ref: ObjectRef;
      uid: string;
      capacity: GrowableCapacity;
    }): Promise<void> {
      // The uid in the patch is a precondition: a new object of the name is not patched.
      await orIfMissing(
        api.custom.patchNamespacedCustomObject(
          {
            group: API_GROUP,
            version: API_VERSION,
            plural: WEKA_CONTAINER_PLURAL,
            namespace: ref.namespace,
            name: ref.name,
            body: { metadata: { uid }, spec: capacity },
          },
          mergeHeaders,
        ),
        undefined,
      );
    },

    /** Deletes one member (its own workflow tears it down), only the object of that uid. */
    async removeClusterMember({ ref, uid }: { ref: ObjectRef; uid: string }): Promise<void> {
      await deleteMember(ref, uid);
    },

    async clusterMembers({ ref, uid }: { ref: ObjectRef; uid: string }): Promise<MemberContainer[]> {
      return memberContainers(ref, uid);
    },

    /**
     * Creates the Weka cluster of the members' containers (stems), from the first one's running
     * pod, by their pods' IPs and Weka ports, and names it after the WekaCluster. A member whose
     * pod does not run now, or whose container is not a stem, is left out: it joins later through
     * the others. A first member already in a cluster (an earlier attempt whose answer was lost)
     * gives that cluster's GUID.
     */
    async formWekaCluster({
      ref,
      members,
      target,
    }: {
      ref: ObjectRef;
      members: { name: string; uid: string }[];
      target: ExecTargetRef;
    }): Promise<string> {
      const hosts: { ip: string; port: number }[] = [];
      for (const [i, member] of members.entries()) {
        const host = await stemOf(ref.namespace, member, i === 0 ? target : undefined);
        if (typeof host === 'string') return host;
        if (host) hosts.push(host);
        else if (i === 0)
          throw ApplicationFailure.retryable(
            `${member.name} cannot form the cluster now (no running pod)`,
            'PodNotRunning',
          );
      }
      await run(target, clusterCreateCall(hosts));
      await run(target, clusterNameCall(wekaContainerName(ref.namespace, ref.name)));
      const formed = await stemOf(ref.namespace, members[0]!, target);
      if (typeof formed !== 'string')
        throw ApplicationFailure.retryable(
          `${members[0]!.name}: created the cluster, but is not in it yet`,
          'JoinPending',
        );
      return formed;
    },

    /**
     * A running pod of another member of the cluster, on a node that still exists: where the
     * Weka commands of a member whose own node is lost can run instead.
     */
    async findPeerPod({
      namespace,
      cluster,
      clusterGUID,
      exceptUid,
    }: {
      namespace: string;
      /** Its WekaCluster, whose members are asked first. */
      cluster?: string | undefined;
      /** Its Weka cluster: then any drive container joined to it, in any namespace. */
      clusterGUID?: string | undefined;
      exceptUid: string;
    }): Promise<ExecTargetRef | null> {
      const candidates = [
        ...(cluster ? await members({ namespace, name: cluster }) : []),
        ...(clusterGUID
          ? (await api.listAllContainers()).filter(
              (c) => c.spec.mode === 'drive' && c.status?.clusterGUID === clusterGUID,
            )
          : []),
      ];
      return runningMemberPod(api, candidates, exceptUid);
    },

    /** Whether the member's own pod (of its uid) runs and is not being deleted: one to run a Weka command in. */
    async memberPodRunning({
      namespace,
      name,
      uid,
    }: {
      namespace: string;
      name: string;
      uid: string;
    }): Promise<boolean> {
      const pod = await orIfMissing(api.core.readNamespacedPod({ namespace, name }), null);
      return (
        pod?.status?.phase === 'Running' &&
        !pod.metadata?.deletionTimestamp &&
        pod.metadata?.labels?.[OWNER_UID_LABEL] === uid
      );
    },

    /** Whether the node exists and its kubelet reports Ready. */
    async nodeReady(node: string): Promise<boolean> {
      const found = await orIfMissing(api.core.readNode({ name: node }), null);
      return found?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
    },

    /** Deletes every member not already being deleted; returns how many members still exist. */
    async deleteClusterContainers({ ref, uid }: { ref: ObjectRef; uid: string }): Promise<number> {
      const remaining = await members(ref, uid);
      for (const c of remaining)
        if (!c.metadata.deletionTimestamp)
          await deleteMember({ namespace: ref.namespace, name: c.metadata.name! }, c.metadata.uid!);
      return remaining.length;
    },
  };
}
