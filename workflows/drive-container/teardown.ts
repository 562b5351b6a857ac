// The teardown, the bring-up in reverse: the drives out of the Weka cluster and off the devices,
// the container out of the cluster, the allocation released, the pod deleted, the node's proxy
// removed if no drive container is left, the finalizer. It runs where nothing can cancel it.
import { condition } from '@temporalio/workflow';
import type { ContainerAllocation, ContainerSnapshot, ExecTargetRef } from '../../activities/types.js';
import { TEARDOWN_WITHOUT_POD_ANNOTATION, wekaContainerName } from '../../src/api/names.js';
import { inPod, kube, kubeLocal } from '../activities.js';
import { ANSWER_NOT_IN_LEDGER, releaseUntilOutOfLedger } from '../ledger-checked.js';
import { failureType, messageOf } from '../lifecycle.js';
import { again, done, untilDone } from '../steps.js';
import { leaveClusterViaPeer, phasedOut, phasingOut, undoFromTheNode } from './leave-cluster.js';
import { forgetVirtualDrive, forgetWholeDrive, type ContainerRun } from './run.js';
import { withReplacedDrives } from '../../src/node/blocked-drives.js';

/** A pod that cannot be made because its namespace is being deleted (activities/kube/pods.ts). */
const NAMESPACE_TERMINATING = 'NamespaceTerminating';

export async function teardown(c: ContainerRun): Promise<void> {
  const { status, ref, node } = c;
  await status.enter('Deleting', 'tearing down');
  if (!node) return finish(c, 'never placed on a node: nothing to undo');
  if (c.nodeMissing && !(await kubeLocal.nodeExists(node)))
    return finish(c, `node ${node} never existed while the container lived: nothing to undo`);
  // Read by name: what is found is this container's only while it has this uid.
  const read: ContainerSnapshot | null = await kubeLocal.readContainer(ref);
  const current = read?.uid === c.uid ? read : null;
  // What the node's ledger gave this uid, never what the status names: a forged status must not
  // make this teardown remove another container's drives.
  const held = (await kubeLocal.readNodeAllocation({ node, uid: c.uid })) ?? c.allocation;
  const alloc = held && withReplacedDrives(held);
  const guid =
    c.clusterGUID ??
    current?.status.clusterGUID ??
    (status.containerID !== undefined && current ? ((await kubeLocal.readClusterGUID(ref)) ?? undefined) : undefined);
  // A vanished node takes its devices and the container's pod with it: nothing can be undone
  // from there. Say what is left behind instead of retrying forever, and go on.
  const nodeGone = !(await kubeLocal.nodeExists(node));
  // Weka state exists only once the container tried to join its cluster (after its allocation);
  // undo it from the pod, finding the container by name if its id is not known. A standalone
  // container whose join's answer was lost knows no GUID: its pod's Weka container says it.
  const joined = alloc && (guid || !c.memberOfCluster) && (status.containerID !== undefined || c.joinTried);
  // A new run that finds the object gone (its finalizer removed by hand) finishes from these.
  c.life.carry({ teardown: { node, ...(guid ? { clusterGUID: guid } : {}), joined: Boolean(joined) } });
  if (nodeGone && alloc && guid) await showNodeGone(c, alloc, guid, Boolean(joined));
  const undone = !nodeGone && joined ? await undoInPod(c, alloc, guid) : 'done';
  // Even when the ledger held nothing at the read above: an allocation the mutex was deciding
  // when the deletion came is written after that read, and this release, queued behind that
  // decision, takes it out again.
  await status.enter('Deleting', 'releasing the allocation');
  await releaseUntilOutOfLedger({
    mutex: c.mutex,
    node,
    container: { ...ref, uid: c.uid },
    warn: (message) => status.event('Warning', ANSWER_NOT_IN_LEDGER, message),
    between: () => c.life.continueAsNewIfLong(),
  });
  await status.enter('Deleting', 'deleting the pod');
  await kube.deleteContainerPod({ ...ref, uid: c.uid, force: undone === 'abandoned' });
  if (undone === 'abandoned') {
    // The proxy pod is on the same unreachable node: it stays until a later teardown finds it unused.
    return finish(
      c,
      `torn down without the pod (${TEARDOWN_WITHOUT_POD_ANNOTATION}); see the TeardownWithoutPod Event`,
    );
  }
  await status.enter('Deleting', "removing the node's proxy if no drive container is left");
  await c.proxyCall('remove-proxy-if-unused');
  await finish(c, 'torn down: no virtual drive, allocation or pod is left');
}

/** Its node is gone with its devices: says what is left behind, after another member took it out of its cluster if it could. */
async function showNodeGone(c: ContainerRun, alloc: ContainerAllocation, guid: string, joined: boolean): Promise<void> {
  const { status, ref, node } = c;
  const left = joined && !(await leaveClusterViaPeer(c, alloc, guid));
  const uuids = alloc.drives?.length
    ? `the cluster claims of whole drives ${alloc.drives.join(', ')}`
    : `the signatures of virtual drives ${alloc.virtualDrives.map((d) => d.virtualUUID).join(', ')}`;
  const message =
    `node ${node} no longer exists, and with it ${uuids} on its devices` +
    (left
      ? `; they may remain in Weka cluster ${guid} (container ${status.containerID ?? wekaContainerName(ref.namespace, ref.name)}), as no other member's pod could remove them: remove them with 'weka cluster drive remove' from another member`
      : '');
  await status.condition('Ready', 'False', 'NodeGone', message, 'Warning');
}

/**
 * Removes the virtual drives from the cluster and the devices, then the container from the Weka
 * cluster, in the container's pod. When the pod cannot be reached (its node is down but still
 * exists), says so on the object and tries again with a growing pause, until it succeeds or a
 * person who checked the node sets the TEARDOWN_WITHOUT_POD_ANNOTATION: then it records what may
 * be left and gives up ('abandoned').
 */
async function undoInPod(
  c: ContainerRun,
  alloc: ContainerAllocation,
  known: string | undefined,
): Promise<'done' | 'abandoned'> {
  const { status, ref, node } = c;
  let guid = known;
  /** Passes in a row that reached the pod but a Weka command failed (a transient failure of the tool). */
  let toolFailures = 0;
  let leftViaPeer = false;
  let pause = 10;
  return untilDone(c.life, async () => {
    const now = await kubeLocal.readContainer(ref);
    // Its finalizer was removed by hand: the pod found by its name is no longer surely its own.
    if (now?.uid !== c.uid) return done(guid ? await undoFromTheNode(c, alloc, guid, 'vanished') : 'done');
    if (now.annotations[TEARDOWN_WITHOUT_POD_ANNOTATION] === 'true') {
      await showAbandoned(c, alloc, guid);
      return done('abandoned');
    }
    try {
      await status.enter('Deleting', 'removing the virtual drives from the cluster and the devices');
      c.target = await inPod.startContainerPod(ref);
      if (status.containerID === undefined) {
        const name = wekaContainerName(ref.namespace, ref.name);
        const target = c.target;
        const found = await inPod.findWekaContainer({ target, clusterGUID: guid, name, agentPort: alloc.agentPort });
        if (found !== null) {
          status.containerID = found.containerId;
          guid ??= found.clusterGUID;
        }
      }
      // In no cluster and none known: its join never got an answer, so nothing was signed either.
      if (guid === undefined) return done('done');
      await removeDrivesInPod(c, alloc, guid);
      if (status.conditions.some((c) => c.type === 'TeardownBlocked')) {
        await status.condition('TeardownBlocked', 'False', 'PodReached', 'the pod was reached again');
      }
      await phasedOut(c);
      return done('done');
    } catch (err) {
      const type = failureType(err);
      if (type === NAMESPACE_TERMINATING)
        return done(guid ? await undoFromTheNode(c, alloc, guid, 'namespace') : 'done');
      const phasing = await phasingOut(c, err);
      if (phasing) return phasing;
      // The pod answered and a Weka command failed after its retries: soon again, a few times,
      // before it is shown as blocked (each pass redoes only what is left).
      if (type === 'WekaCommandFailed' && ++toolFailures < 3) {
        await status.enter('Deleting', `a Weka command failed (${messageOf(err)}); trying again in 5 s`);
        return again(() => condition(() => false, '5 seconds'));
      }
      toolFailures = 0;
      // Its node is down: the cluster must stop counting on the container at once. Another
      // member takes it out; the signatures on the node's devices wait for the node.
      if (!leftViaPeer && guid && !(await kubeLocal.nodeReady(node)))
        leftViaPeer = await leaveClusterViaPeer(c, alloc, guid);
      const message =
        `cannot remove the virtual drives in pod ${ref.namespace}/${ref.name} on node ${node}: ${messageOf(err)}; ` +
        `trying again in ${pause} s. If the node is down for good, set the annotation ` +
        `${TEARDOWN_WITHOUT_POD_ANNOTATION}=true to finish without it (what may remain is then recorded)`;
      await status.condition('TeardownBlocked', 'True', 'PodUnreachable', message, 'Warning');
      await status.enter('Deleting', `waiting ${pause} s to reach the pod again`);
      const waitS = pause;
      pause = Math.min(pause * 2, 300);
      // The new run of an object being deleted goes straight to the teardown, which starts again
      // from the status: the allocation, the container id, the drives still added.
      return again(() => condition(() => false, `${waitS} seconds`));
    }
  });
}

/** Its drives out of the cluster and off the devices, then the container out of the cluster. */
async function removeDrivesInPod(c: ContainerRun, alloc: ContainerAllocation, guid: string): Promise<void> {
  const { status, node, target } = c;
  const containerId = status.containerID;
  for (const drive of alloc.virtualDrives) {
    // Without a Weka container, no drive was added: only signatures can be left.
    if (containerId !== undefined)
      await inPod.removeDriveFromCluster({ target, containerId, virtualUUID: drive.virtualUUID });
    forgetVirtualDrive(c, drive.virtualUUID);
    await inPod.unsignVirtualDrive({ target, node, drive, clusterGUID: guid });
    await status.publish();
  }
  for (const serial of alloc.drives ?? []) {
    if (containerId !== undefined) await inPod.removeWholeDriveFromCluster({ target, node, serial, containerId });
    forgetWholeDrive(c, serial);
    // Signed again, the drive carries no cluster's claim: the next container can be given it.
    await inPod.releaseWholeDrive({ target, node, serial, clusterGUID: guid });
    await status.publish();
  }
  // Its drives are gone, so Weka lets the container leave; the name can then join again. A
  // cluster whose last container leaves is gone with it: Weka has no command to destroy one.
  if (containerId !== undefined) {
    await status.enter('Deleting', `removing container ${containerId} from the Weka cluster`);
    await removeWekaContainer(c, target, containerId);
  }
}

/** Said on the object when a person let the teardown finish without the pod: what may remain, and where. */
async function showAbandoned(c: ContainerRun, alloc: ContainerAllocation, guid: string | undefined): Promise<void> {
  const { status, ref, node } = c;
  const left = [
    ...alloc.virtualDrives.map(
      (d) => `${d.virtualUUID} (${d.capacityGiB} GiB on physical drive ${d.serial}, ${d.physicalUUID})`,
    ),
    ...(alloc.drives ?? []).map((serial) => `whole drive ${serial}`),
  ].join(', ');
  const message =
    `torn down without reaching the pod, as ${TEARDOWN_WITHOUT_POD_ANNOTATION} asked: these drives may ` +
    `remain signed on node ${node}'s devices and in Weka cluster ${guid} (container ${status.containerID ?? wekaContainerName(ref.namespace, ref.name)}): ${left}`;
  await status.condition('TeardownBlocked', 'True', 'TeardownWithoutPod', message);
  await status.event('Warning', 'TeardownWithoutPod', message);
}

/**
 * Removes the container from its Weka cluster. Weka refuses while it still holds drives: drives
 * this object never added (an earlier object of its name that was never torn down joined under
 * the same name). That refusal leaves the container in the cluster and says so; it never holds
 * up the deletion.
 */
async function removeWekaContainer(c: ContainerRun, target: ExecTargetRef, containerId: number): Promise<void> {
  try {
    await inPod.removeWekaContainer({ target, containerId, name: wekaContainerName(c.ref.namespace, c.ref.name) });
  } catch (err) {
    if (failureType(err) !== 'WekaCommandRefused') throw err;
    const message = `container ${containerId} stays in its Weka cluster: ${messageOf(err)}`;
    await c.status.event('Warning', 'WekaContainerLeft', message);
  }
}

async function finish(c: ContainerRun, message: string): Promise<void> {
  const { status } = c;
  status.containerID = undefined;
  status.allocation = undefined;
  await status.condition('Ready', 'False', 'Deleted', message);
  await status.enter('Deleted', 'torn down');
  await kubeLocal.removeFinalizer({ kind: 'WekaContainer', ref: c.ref, uid: c.uid });
}
