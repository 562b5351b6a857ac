// Activities a drive container's workflow runs against the Kubernetes API: read the container,
// its pod, its cluster's GUID; remove the finalizer as the last step of a teardown. Its status and
// Events are written by activities/status.ts.
import { ApplicationFailure } from '@temporalio/activity';
import { imageAllowed, imageNotAllowedMessage } from '../src/manifests/image-policy.js';
import { FINALIZER, WEKA_POD_CONTAINER, proxyName, refText, type ObjectRef } from '../src/api/names.js';
import { decidePod, describePod, driveContainerPod, podOfObject } from '../src/manifests/pods.js';
import { messageOf } from '../src/errors.js';
import { clusterWorkflowId, wakeUpSignal } from '../src/protocol.js';
import type { ActivityDeps } from './deps.js';
import { signalIfRunning } from './signal.js';
import { isConflict, isNotFound, orIfMissing } from './kube/errors.js';
import { deletePod, ensurePod, mustBeMadeAgain, podFacts, POD_START_TIMEOUT_MS, waitPodRunning } from './kube/pods.js';
import { pause } from './heartbeat.js';
import { ledgerOf } from './kube/node-ledger.js';
import { publishPromisedResources } from './kube/node-resources.js';
import { snapshotOf, WekaApi } from './kube/weka-api.js';
import type { ContainerAllocation, ContainerSnapshot, EventInput, ExecTargetRef } from './types.js';

export function createContainerActivities(deps: ActivityDeps) {
  const api = new WekaApi(deps.kubeConfig);

  /** Makes the container's pod if it has none that can run (gone, ended, or being deleted). */
  async function ensureContainerPod(ref: ObjectRef): Promise<ExecTargetRef> {
    const c = await api.getContainer(ref);
    if (!c) throw ApplicationFailure.nonRetryable(`${refText(ref)} does not exist`, 'NotFound');
    if (!c.spec.nodeName)
      throw ApplicationFailure.nonRetryable(`${refText(ref)} has no spec.nodeName`, 'InvalidObject');
    // The pod is privileged and runs on the node the object names: only an allowed image gets
    // one. Checked on every call, as the spec may have changed; never retried (a new spec starts
    // a new attempt), whatever the activity's retry policy says.
    if (!imageAllowed(c.spec.image, deps.allowedImages))
      throw ApplicationFailure.nonRetryable(
        `${refText(ref)}: ${imageNotAllowedMessage(c.spec.image, deps.allowedImages)}`,
        'ImageNotAllowed',
      );
    // Its ports are what its node's ledger gave this uid (never what the status says), so the
    // pod is made after the allocation; a pod of a container not allocated yet has none.
    const node = await orIfMissing(api.core.readNode({ name: c.spec.nodeName }), null);
    const given = node && c.metadata.uid ? ledgerOf(node).containers[c.metadata.uid]?.allocation : undefined;
    // It asks the scheduler for what it was given, so its node must publish what it offers.
    if (node) await publishPromisedResources(api.core, node);
    // A pod that ended (evicted, its node rebooted) is replaced; one being deleted is waited out.
    const pod = await ensurePod(api.core, driveContainerPod(c, given, deps.podPriorityClass), undefined, {
      cordoned: node?.spec?.unschedulable === true,
    });
    if (pod.replaced.length > 0) {
      deps.logger.warn({ container: refText(ref), replaced: pod.replaced }, 'replaced the pod of a drive container');
    }
    return { namespace: ref.namespace, pod: ref.name, container: WEKA_POD_CONTAINER };
  }

  return {
    async readContainer(ref: ObjectRef): Promise<ContainerSnapshot | null> {
      const c = await api.getContainer(ref);
      if (!c) return null;
      const s = c.status ?? {};
      const allocation = s.allocations?.virtualDrives?.length ? (s.allocations as ContainerAllocation) : undefined;
      return {
        ...snapshotOf<ContainerSnapshot['spec']>(c),
        status: {
          ...(s.phase !== undefined ? { phase: s.phase } : {}),
          ...(s.clusterGUID !== undefined ? { clusterGUID: s.clusterGUID } : {}),
          ...(s.containerID !== undefined ? { containerID: s.containerID } : {}),
          ...(allocation ? { allocation } : {}),
          addedVirtualDrives: s.addedVirtualDrives ?? [],
          addedDrives: (s.addedDrives ?? []).map((d) => ({ ...d })),
          conditions: (s.conditions ?? []).map((c) => ({ ...c })),
        },
      };
    },

    ensureContainerPod,

    /**
     * Makes the pod (as ensureContainerPod) and waits for it to run. A pod that never will (it was
     * deleted, it ended, it is being deleted) is made again, as often as it takes until the wait's
     * own time is up: between its making and its run anyone may have deleted it, and waiting on,
     * or trying the same wait again, cannot bring it back.
     */
    async startContainerPod(ref: ObjectRef): Promise<ExecTargetRef> {
      const deadline = Date.now() + POD_START_TIMEOUT_MS;
      const target = await ensureContainerPod(ref);
      for (let remade = 0; ; remade++) {
        try {
          await waitPodRunning(api.core, target.namespace, target.pod, Math.max(deadline - Date.now(), 0));
          return target;
        } catch (err) {
          if (!mustBeMadeAgain(err) || Date.now() >= deadline) throw err;
          deps.logger.warn(
            { container: refText(ref), reason: messageOf(err) },
            'making the pod of a drive container again',
          );
          // Made again at once the first time; a pod that keeps going is not made again in a tight loop.
          if (remade > 0) await pause(1_000);
          await ensureContainerPod(ref);
        }
      }
    },

    /**
     * Deletes the drive container's pod and waits until it is gone. `force` deletes it at once
     * (grace period 0), for a node whose kubelet will never confirm it: only after a person checked.
     */
    async deleteContainerPod(input: ObjectRef & { uid?: string; force?: boolean }): Promise<void> {
      // A pod of another object of the same name (created again since) is that object's.
      const pod = await orIfMissing(api.core.readNamespacedPod({ namespace: input.namespace, name: input.name }), null);
      if (!pod || (input.uid !== undefined && !podOfObject(pod, input.uid))) return;
      await deletePod(api.core, input.namespace, input.name, undefined, input.force === true);
    },

    /**
     * What a Ready container has lost of what it runs on: its own pod (the one of its uid) and,
     * with `proxy`, its node's ssdproxy pod, each named with why it will not run (missing, being
     * deleted, ended); empty while both run or are on their way to running.
     */
    async lostPods(input: { ref: ObjectRef; uid: string; node: string; proxy: boolean }): Promise<string[]> {
      const lost: string[] = [];
      const look = async (namespace: string, name: string, what: string, uid?: string) => {
        const pod = await orIfMissing(api.core.readNamespacedPod({ namespace, name }), null);
        const mine = pod && (uid === undefined || podOfObject(pod, uid)) ? pod : null;
        const facts = mine ? podFacts(mine) : null;
        if (decidePod(facts) !== 'keep') lost.push(`${what} ${namespace}/${name} is ${describePod(facts)}`);
      };
      await look(input.ref.namespace, input.ref.name, 'its pod', input.uid);
      if (input.proxy) await look(deps.operatorNamespace, proxyName(input.node), "its node's ssdproxy pod");
      return lost;
    },

    async nodeExists(node: string): Promise<boolean> {
      return (await orIfMissing(api.core.readNode({ name: node }), null)) !== null;
    },

    async readClusterGUID(ref: ObjectRef): Promise<string | null> {
      const c = await api.getContainer(ref);
      if (!c) return null;
      if (!c.spec.cluster) return c.status?.clusterGUID ?? null;
      const cluster = await api.getCluster({ namespace: ref.namespace, name: c.spec.cluster });
      return cluster?.status?.clusterGUID ?? null;
    },

    /** A standalone container's spec.joinIps (none when it is gone). */
    async readJoinIps(ref: ObjectRef): Promise<string[]> {
      return [...((await api.getContainer(ref))?.spec.joinIps ?? [])];
    },

    /**
     * Wakes the lifecycle workflow of the WekaCluster the container is a member of, so that it looks
     * at its members now instead of at its next pass (up to 15 s later): the cluster forms from the
     * first member waiting for it, and is Ready once its last member is. Says whether a workflow was
     * woken; no cluster, or none running, is nothing to do.
     */
    async wakeMemberCluster(ref: ObjectRef): Promise<boolean> {
      const c = await api.getContainer(ref);
      if (!c?.spec.cluster) return false;
      const cluster = await api.getCluster({ namespace: ref.namespace, name: c.spec.cluster });
      const uid = cluster?.metadata?.uid;
      if (!uid) return false;
      return signalIfRunning(deps.temporal, clusterWorkflowId(uid), (h) => h.signal(wakeUpSignal));
    },

    /** Removes the operator's finalizer; with `uid`, only from that object, never from a successor of its name. */
    async removeFinalizer({
      kind,
      ref,
      uid,
    }: {
      kind: EventInput['kind'];
      ref: ObjectRef;
      uid?: string;
    }): Promise<void> {
      for (let attempt = 0; attempt < 10; attempt++) {
        const obj = await api.get(kind, ref);
        const finalizers = obj?.metadata.finalizers ?? [];
        if (!obj || !finalizers.includes(FINALIZER)) return;
        if (uid !== undefined && obj.metadata.uid !== uid) return;
        try {
          // Conditional on the version read, so another writer's finalizers are never dropped.
          await api.patchMetadata(kind, ref, {
            resourceVersion: obj.metadata.resourceVersion,
            finalizers: finalizers.filter((f) => f !== FINALIZER),
          });
          return;
        } catch (err) {
          if (isNotFound(err)) return;
          if (!isConflict(err)) throw err;
        }
      }
      throw new Error(`could not remove the finalizer of ${refText(ref)}: it kept changing`);
    },
  };
}
