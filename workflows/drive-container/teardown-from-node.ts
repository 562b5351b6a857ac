// A drive container's teardown when its own pod cannot be used: its namespace is being deleted
// (no pod can be made there again), or its object vanished mid-teardown (its finalizer removed by
// hand: a pod found by its name may be a successor's). Its virtual drives are removed from the
// devices (its whole drives given back) from the node's ssdproxy pod, in the operator's namespace,
// so that their capacity is free for the node's other tenants; what may remain in the Weka
// cluster is recorded on the Node.
import { condition, continueAsNew } from '@temporalio/workflow';
import { pastHistoryLimit } from '../lifecycle.js';
import type { ContainerAllocation } from '../../activities/types.js';
import { WEKA_POD_CONTAINER, wekaContainerName, type ObjectRef } from '../../src/api/names.js';
import { nodeMutexId, type LifecycleWorkflow, type ObjectWorkflowInput } from '../../src/protocol.js';
import { inPod, kubeLocal, kube } from '../activities.js';
import type { MutexClient } from '../mutex-client.js';
import { withReplacedDrives } from '../../src/node/blocked-drives.js';
import { ANSWER_NOT_IN_LEDGER, releaseUntilOutOfLedger } from '../ledger-checked.js';

export interface FromNode {
  ref: ObjectRef;
  uid: string;
  node: string;
  guid: string;
  alloc: ContainerAllocation;
  mutex: MutexClient;
}

/**
 * Removes the container's drives from the node's devices through its ssdproxy pod; a proxy that
 * cannot be reached is tried again after `pause` (then twice as long, up to 5 minutes), each
 * failure passed to `blocked` first (to show it), and `between` run after each pause (to continue
 * as new at a safe point).
 */
export async function removeDrivesThroughProxy(
  o: FromNode & {
    blocked: (message: string, pauseS: number) => Promise<void>;
    between: () => Promise<void>;
    removedVirtual?: (virtualUUID: string) => void;
    removedWhole?: (serial: string) => void;
  },
): Promise<void> {
  for (let pause = 10; ;) {
    try {
      const answer = await o.mutex.call(nodeMutexId(o.node), 'ensure-proxy', { node: o.node }, o.node);
      if (!answer.ok) throw new Error(answer.error?.message ?? "the node's ssdproxy cannot be ensured");
      const target = { ...(answer.result as { namespace: string; pod: string }), container: WEKA_POD_CONTAINER };
      for (const drive of o.alloc.virtualDrives) {
        await inPod.unsignVirtualDrive({ target, node: o.node, drive, clusterGUID: o.guid });
        o.removedVirtual?.(drive.virtualUUID);
      }
      for (const serial of o.alloc.drives ?? []) {
        await inPod.releaseWholeDrive({ target, node: o.node, serial, clusterGUID: o.guid });
        o.removedWhole?.(serial);
      }
      return;
    } catch (err) {
      await o.blocked(err instanceof Error ? err.message : String(err), pause);
      await condition(() => false, `${pause} seconds`);
      pause = Math.min(pause * 2, 300);
      await o.between();
    }
  }
}

/** Records on the Node that the container may remain in its Weka cluster, with its drives. */
export async function recordLeftInCluster(o: FromNode & { because: string; containerId?: number }): Promise<void> {
  const name = o.containerId ?? wekaContainerName(o.ref.namespace, o.ref.name);
  const drives = [...o.alloc.virtualDrives.map((d) => d.virtualUUID), ...(o.alloc.drives ?? [])].join(', ');
  const message =
    `${o.ref.namespace}/${o.ref.name} (uid ${o.uid}) was torn down without its pod (${o.because}), with no other ` +
    `member's pod to reach its Weka cluster ${o.guid}: its drives were removed from this node's devices, but ` +
    `container ${name} and its drives ${drives} may remain in the Weka cluster: remove them with ` +
    "'weka cluster drive remove' and 'weka cluster container remove' from a member";
  await kubeLocal.recordNodeEvent({ node: o.node, type: 'Warning', reason: 'WekaContainerLeftBehind', message });
}

/**
 * A teardown continued as new whose object vanished before the new run read it: the new run
 * has no status to start from, so it works from what the earlier run carried (its node, its
 * cluster's GUID) and from the node's ledger, never from the name, which may be a successor's.
 */
export async function finishVanishedTeardown(
  input: ObjectWorkflowInput & { teardown: NonNullable<ObjectWorkflowInput['teardown']> },
  mutex: MutexClient,
): Promise<void> {
  // A proxy that cannot be reached is waited for; past the history limit, the same input again.
  const between = async () => {
    if (pastHistoryLimit(input)) await continueAsNew<LifecycleWorkflow>(input);
  };
  const { node, clusterGUID: guid } = input.teardown;
  const ref = { namespace: input.namespace, name: input.name };
  const alloc = withReplacedDrives(await kubeLocal.readNodeAllocation({ node, uid: input.uid }));
  const because = 'its object was removed before its teardown ended (its finalizer removed by hand)';
  if (alloc && guid && (await kubeLocal.nodeExists(node))) {
    const o = { ref, uid: input.uid, node, guid, alloc, mutex };
    await removeDrivesThroughProxy({ ...o, blocked: async () => undefined, between });
    if (input.teardown.joined) await recordLeftInCluster({ ...o, because });
  }
  await releaseUntilOutOfLedger({
    mutex,
    node,
    container: { ...ref, uid: input.uid },
    warn: (message) => kubeLocal.recordNodeEvent({ node, type: 'Warning', reason: ANSWER_NOT_IN_LEDGER, message }),
    between,
  });
  await kube.deleteContainerPod({ ...ref, uid: input.uid });
  await mutex.call(nodeMutexId(node), 'remove-proxy-if-unused', { node }, node);
}
