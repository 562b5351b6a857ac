// Into the Weka cluster: wait until there is one to join (a member's cluster GUID, or a standalone
// container's spec.joinIps), join it, and sign and add every drive the container holds.
import { condition } from '@temporalio/workflow';
import type { ContainerAllocation } from '../../activities/types.js';
import { wekaContainerName } from '../../src/api/names.js';
import { kube, kubeLocal, weka } from '../activities.js';
import { again, done, untilDone } from '../steps.js';
import { forgetVirtualDrive, forgetWholeDrive, type ContainerRun } from './run.js';

export async function waitForClusterGUID(c: ContainerRun): Promise<string> {
  const { life, status, ref } = c;
  if (status.phase !== 'Ready') await status.enter('WaitingForCluster', 'waiting for the cluster GUID');
  return untilDone(life, async (tries) => {
    const delaySeconds = Math.min(2 ** tries, 30);
    // The cluster's wake-up (it has formed) may come while the GUID is read: not missed.
    const received = life.mark();
    const guid = await kubeLocal.readClusterGUID(ref);
    if (guid) return done(guid);
    // The cluster forms from the first member waiting for it: told now, it need not wait for its next look.
    if (delaySeconds === 1 && c.memberOfCluster) await kubeLocal.wakeMemberCluster(ref);
    // A long wait (the cluster forms from a member whose pod runs): a pod that ended meanwhile
    // (evicted) is made again, so that this member can be the one, and can join later.
    if (delaySeconds === 30) c.target = await kube.ensureContainerPod(ref);
    return again(() => life.changed({ wakeUps: true, timeout: `${delaySeconds} seconds`, since: received }));
  });
}

/** A standalone container joins through spec.joinIps: until a person lists some, it waits. */
export async function waitForJoinIps(c: ContainerRun): Promise<void> {
  const { life, status, ref } = c;
  await untilDone(life, async (tries) => {
    const changes = life.specChanges;
    if ((await kubeLocal.readJoinIps(ref)).length > 0) {
      // A pod that ended while the container waited (evicted) is made again, to join from.
      if (tries > 0) c.target = await kube.ensureContainerPod(ref);
      return done(undefined);
    }
    const why =
      'spec.joinIps lists no address (ip:port) of a container of the Weka cluster to join: the container waits until it does';
    await status.enter('WaitingForCluster', why, { kind: 'stalled', reason: 'NoJoinIps', message: why });
    // The watcher signals the spec change; a look now and then covers a signal it could not send.
    return again(() => condition(() => life.specChanges > changes, '1 minute'));
  });
}

/**
 * Joins the cluster and signs and adds every virtual drive the container does not have yet; with
 * `recheck` (its pod was made again), asks the cluster and the devices about every one of them,
 * so that whatever they lost meanwhile is joined or added again. Returns how many drives were
 * added (or found missing and added again).
 */
export async function signAndAdd(
  c: ContainerRun,
  alloc: ContainerAllocation,
  known: string | undefined,
  recheck = false,
): Promise<number> {
  const { status, ref, node } = c;
  if (status.containerID === undefined || known === undefined || recheck) {
    await status.enter('Signing', known ? `joining cluster ${known}` : 'joining its Weka cluster through spec.joinIps');
    c.joinTried = true;
    const joined = await weka.joinCluster({
      target: c.target,
      ref,
      uid: c.uid,
      name: wekaContainerName(ref.namespace, ref.name),
      agentPort: alloc.agentPort,
      clusterGUID: known,
    });
    status.containerID = joined.containerId;
    status.clusterGUID = joined.clusterGUID;
    c.clusterGUID = joined.clusterGUID;
  }
  const containerId = status.containerID;
  const guid = status.clusterGUID ?? known!;
  if (alloc.drives?.length) return addWholeDrives(c, alloc.drives, containerId, guid, recheck);
  const count = alloc.virtualDrives.length;
  let added = 0;
  for (const [i, drive] of alloc.virtualDrives.entries()) {
    if (!recheck && status.addedVirtualDrives.includes(drive.virtualUUID)) continue;
    const doing = recheck ? 'checking' : 'signing';
    await status.enter(
      recheck ? status.phase : 'AddingDrives',
      `${doing} virtual drive ${i + 1} of ${count} (${drive.capacityGiB} GiB on ${drive.serial}) and adding it to the cluster`,
    );
    const target = c.target;
    const { driveUUID, changed } = await weka.signAndAddVirtualDrive({
      target,
      node,
      drive,
      clusterGUID: guid,
      containerId,
    });
    const entry = { uuid: driveUUID, virtualUUID: drive.virtualUUID, serial: drive.serial };
    if (changed === true || !status.addedDrives.some((d) => d.uuid === driveUUID)) added++;
    forgetVirtualDrive(c, drive.virtualUUID);
    status.addedVirtualDrives = [...status.addedVirtualDrives, drive.virtualUUID];
    status.addedDrives = [...status.addedDrives, entry];
  }
  const what = `${count} virtual drives signed and added to cluster ${guid}`;
  status.stage('DrivesAdded', 'True', 'DrivesAdded', what, 'Normal');
  return added;
}

async function addWholeDrives(
  c: ContainerRun,
  serials: readonly string[],
  containerId: number,
  guid: string,
  recheck: boolean,
): Promise<number> {
  const { status, node } = c;
  let added = 0;
  for (const [i, serial] of serials.entries()) {
    if (!recheck && status.addedDrives.some((d) => d.serial === serial && d.virtualUUID === undefined)) continue;
    await status.enter(
      recheck ? status.phase : 'AddingDrives',
      `${recheck ? 'checking' : 'adding'} whole drive ${i + 1} of ${serials.length} (serial ${serial}) in the cluster`,
    );
    const { driveUUID } = await weka.addWholeDriveToCluster({ target: c.target, node, serial, containerId });
    if (!status.addedDrives.some((d) => d.uuid === driveUUID)) added++;
    forgetWholeDrive(c, serial);
    status.addedDrives = [...status.addedDrives, { uuid: driveUUID, serial }];
  }
  const what = `${serials.length} whole drives added to cluster ${guid}`;
  status.stage('DrivesAdded', 'True', 'DrivesAdded', what, 'Normal');
  return added;
}
