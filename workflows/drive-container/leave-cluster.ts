// Leaving the Weka cluster without the container's own pod: from another member's pod (its node is
// lost, or its pod gone for good), or its drives off the devices through the node's ssdproxy (its
// namespace is being deleted, or its object vanished mid-teardown). And the wait, shown on the
// object, while Weka phases a deactivated drive's data out to the rest of the cluster.
import { condition, isCancellation } from '@temporalio/workflow';
import type { ContainerAllocation } from '../../activities/types.js';
import { wekaContainerName } from '../../src/api/names.js';
import { phaseOutReport } from '../../src/lifecycle/phase-out.js';
import { DRIVE_PHASING_OUT } from '../../src/weka/errors.js';
import { inPod, kube, kubeLocal } from '../activities.js';
import { failureType, isContinueAsNew, messageOf } from '../lifecycle.js';
import { again, done, untilDone, type Tried } from '../steps.js';
import { forgetVirtualDrive, forgetWholeDrive, type ContainerRun } from './run.js';
import { recordLeftInCluster, removeDrivesThroughProxy } from './teardown-from-node.js';

/** On a drive container that waits for Weka to phase a drive's data out (a teardown, a replaced drive). */
const PHASING_OUT_CONDITION = 'DrivesPhasingOut';

/**
 * When `err` says Weka is still moving a deactivated drive's (or container's) data to the rest of
 * the cluster: says so on the object (in `phase`: Deleting for a teardown, the phase it is in for a
 * replaced drive) and gives the 15 s wait before the next try, never forcing it. Null for any
 * other error.
 */
export async function phasingOut(c: ContainerRun, err: unknown, phase = 'Deleting'): Promise<Tried<never> | null> {
  if (failureType(err) !== DRIVE_PHASING_OUT) return null;
  const { status } = c;
  // A new run starts the wait's clock again: it warns later, never sooner.
  const phaseOut = (c.phaseOut ??= { startedMs: Date.now(), warned: false });
  const report = phaseOutReport({ what: messageOf(err), nowMs: Date.now(), ...phaseOut });
  await status.condition(PHASING_OUT_CONDITION, 'True', 'PhasingOut', report.message);
  if (report.warn) {
    phaseOut.warned = true;
    await status.event('Warning', 'PhaseOutSlow', report.message);
  }
  await status.enter(phase, 'waiting 15 s for Weka to phase the drives out');
  return again(() => condition(() => false, '15 seconds'));
}

/** Ends a wait phasingOut showed; the next wait's clock starts afresh. */
export async function phasedOut(c: ContainerRun): Promise<void> {
  if (!c.phaseOut) return;
  c.phaseOut = undefined;
  await c.status.condition(PHASING_OUT_CONDITION, 'False', 'PhasedOut', 'Weka phased the drives out');
}

/**
 * Takes the container's drives, then the container, out of its Weka cluster from another
 * member's pod (of its WekaCluster, or else any drive container joined to the same Weka cluster,
 * in any namespace): for a container whose node is lost or whose own pod is gone for good, so
 * that the cluster stops counting on it; while Weka phases its drives' data out, waits (said on
 * the object), as its own pod would. False when no other member's pod can be reached (or a
 * command failed): the caller says what may remain.
 */
export async function leaveClusterViaPeer(c: ContainerRun, alloc: ContainerAllocation, guid: string): Promise<boolean> {
  return untilDone(c.life, async () => {
    try {
      return done(await leaveClusterViaPeerOnce(c, alloc, guid));
    } catch (err) {
      if (isCancellation(err) || isContinueAsNew(err)) throw err;
      return (await phasingOut(c, err)) ?? done(false);
    }
  });
}

async function leaveClusterViaPeerOnce(c: ContainerRun, alloc: ContainerAllocation, guid: string): Promise<boolean> {
  const { status, ref, node } = c;
  const peer = await kube.findPeerPod({
    namespace: ref.namespace,
    cluster: c.snapshot.spec.cluster,
    clusterGUID: guid,
    exceptUid: c.uid,
  });
  if (!peer) return false;
  // Found by its Weka name only while the name is still this object's: another object created
  // under it since may have joined under the same Weka name, and that container is the successor's.
  if (status.containerID === undefined && !(await nameStillOurs(c))) return false;
  await status.enter(
    'Deleting',
    `taking the container out of Weka cluster ${guid} from member ${peer.namespace}/${peer.pod}`,
  );
  const name = wekaContainerName(ref.namespace, ref.name);
  const containerId =
    status.containerID ?? (await inPod.findWekaContainer({ target: peer, clusterGUID: guid, name }))?.containerId;
  if (containerId !== undefined) {
    for (const drive of alloc.virtualDrives)
      await inPod.removeDriveFromCluster({ target: peer, containerId, virtualUUID: drive.virtualUUID });
    for (const serial of alloc.drives ?? [])
      await inPod.removeWholeDriveFromCluster({ target: peer, node, serial, containerId });
    await inPod.removeWekaContainer({ target: peer, containerId, name });
  }
  status.addedVirtualDrives = [];
  status.addedDrives = [];
  status.containerID = undefined;
  await status.publish();
  const message = `its own pod cannot: member ${peer.namespace}/${peer.pod} took container ${containerId ?? name} and its drives out of Weka cluster ${guid}`;
  await status.event('Normal', 'LeftClusterViaPeer', message);
  await phasedOut(c);
  return true;
}

/** Whether no other object (another uid) holds the container's name now. */
async function nameStillOurs(c: ContainerRun): Promise<boolean> {
  const now = await kubeLocal.readContainer(c.ref);
  return now === null || now.uid === c.uid;
}

/**
 * The teardown of a container that cannot use its own pod: its namespace is being deleted and
 * its pod is gone (nothing can be made there again, neither a pod nor an Event), or its object
 * vanished mid-teardown (its finalizer removed by hand: the pod of its name may be a successor's).
 * Takes the container out of its Weka cluster from another member's pod where one still runs;
 * removes its virtual drives from the devices (and gives its whole drives back) from its node's
 * ssdproxy pod, which lives in the operator's namespace, so that its capacity is free for the
 * node's other tenants; records on the Node what may remain in the Weka cluster. A proxy that
 * cannot be reached is shown and tried again with a growing pause.
 */
export async function undoFromTheNode(
  c: ContainerRun,
  alloc: ContainerAllocation,
  guid: string,
  why: 'namespace' | 'vanished',
): Promise<'done'> {
  const { status, ref, node, mutex } = c;
  const because =
    why === 'namespace'
      ? 'its namespace is being deleted and its pod is gone'
      : 'its object was removed before its teardown ended (its finalizer removed by hand)';
  const left = (status.containerID !== undefined || c.joinTried) && !(await leaveClusterViaPeer(c, alloc, guid));
  const o = { ref, uid: c.uid, node, guid, alloc, mutex };
  await status.enter('Deleting', `${because}: removing its drives through the node's ssdproxy`);
  await removeDrivesThroughProxy({
    ...o,
    blocked: async (error, pauseS) => {
      const message = `${because}, and node ${node}'s ssdproxy cannot remove its drives: ${error}; trying again in ${pauseS} s`;
      await status.condition('TeardownBlocked', 'True', 'ProxyUnreachable', message);
    },
    between: () => c.life.continueAsNewIfLong(),
    removedVirtual: (uuid) => forgetVirtualDrive(c, uuid),
    removedWhole: (serial) => forgetWholeDrive(c, serial),
  });
  await status.publish();
  if (left)
    await recordLeftInCluster({
      ...o,
      because,
      ...(status.containerID !== undefined ? { containerId: status.containerID } : {}),
    });
  return 'done';
}
