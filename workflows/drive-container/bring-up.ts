// The bring-up, as its steps: the node, its proxy, the allocation, the pod, the cluster, the
// drives, Ready; then, at each spec change (a growth), release on the node or lost pod, the same
// steps again, each one finding done what is done.
import { condition, isCancellation } from '@temporalio/workflow';
import type { ContainerAllocation } from '../../activities/types.js';
import { needsAPerson } from '../../src/lifecycle/standard-conditions.js';
import { kubeLocal } from '../activities.js';
import { failureType, isContinueAsNew, messageOf } from '../lifecycle.js';
import { again, done, untilDone } from '../steps.js';
import { waitForClusterGUID, waitForJoinIps, signAndAdd } from './join.js';
import { allocate, ensureProxy, waitForNode, type Granted } from './place.js';
import { podsLost, startPod } from './pod.js';
import { awaitsReplacement, DRIVES_REPLACED, removeReplacedDrives } from './replace.js';
import { CAPACITY_RETRY, DRIVES_MISSING, drivesOf, drivesText, gibOf, type ContainerRun } from './run.js';

/** A step that failed for good is tried again after this long, then twice as long each time, up to the max. */
const ERROR_RETRY_FIRST_S = 30;
const ERROR_RETRY_MAX_S = 600;
/** The wait before a bring-up whose pod was found gone runs again (and makes it again). */
const POD_GONE_RETRY_S = 1;

export async function bringUp(c: ContainerRun): Promise<void> {
  const { life, status, mutex } = c;
  await waitForNode(c);
  if (c.resumePastProxy || c.wholeDrives) c.resumePastProxy = false;
  else await ensureProxy(c);
  await status.publish();
  // Asked every run: the node's ledger answers with what it gave before, if it did.
  let podEnsured = false;
  await untilDone(life, async (tries) => {
    if (tries > 0) await c.reread();
    const seen = {
      changes: life.specChanges,
      releases: mutex.releases(),
      podLosses: c.podLosses,
      drivesMissing: c.drivesMissing,
      drivesBlocked: c.drivesBlocked,
    };
    const granted = await allocate(c);
    const grew = c.allocation !== undefined && drivesOf(granted.allocation) > drivesOf(c.allocation);
    const allocation = (c.allocation = granted.allocation);
    status.allocation = allocation;
    // After the first allocation: the pod's environment carries the ports, and a pod's
    // environment never changes once it is made (a growth keeps the ports).
    if (!podEnsured) {
      podEnsured = true;
      if (c.resumePastPod) c.resumePastPod = false;
      else {
        // A lost proxy pod is made again by the node's mutex, as for the container's first pod.
        if (c.recheck && !c.wholeDrives) await ensureProxy(c);
        await startPod(c, allocation);
      }
    }
    await status.publish();
    await joinAndAdd(c, allocation);
    // The replacements are in the cluster: the old drives go, and the mutex, asked again, shows them gone.
    if (await removeReplacedDrives(c, allocation)) return again(() => Promise.resolve());
    await showReady(c, granted, grew);
    // A deletion that comes with a lost pod wins: the pod is not made again for a teardown. It
    // must win however the two signals were split between workflow tasks, so that a replay
    // (which delivers together what a timed-out task saw apart) takes the same path.
    const podLost = () => c.podLosses > seen.podLosses && !life.deleteRequested;
    const drivesMissing = () => c.drivesMissing > seen.drivesMissing && !life.deleteRequested;
    const blocked = () => c.drivesBlocked > seen.drivesBlocked;
    const changed = () => life.specChanges > seen.changes || podLost() || drivesMissing() || blocked();
    return again(async () => {
      if (granted.pending?.waitForCapacity === true)
        await condition(() => changed() || mutex.releases() > seen.releases, CAPACITY_RETRY);
      else await condition(changed);
      if (podLost() && (await podsLost(c))) podEnsured = false;
      else if (drivesMissing()) await drivesFoundMissing(c);
    });
  });
}

/**
 * A member joins the cluster its WekaCluster formed; a standalone container learns its cluster's
 * GUID when it joins through spec.joinIps. Then every drive is signed and added; after a lost
 * pod, every one is checked.
 */
async function joinAndAdd(c: ContainerRun, allocation: ContainerAllocation): Promise<void> {
  if (c.memberOfCluster) c.clusterGUID ??= await waitForClusterGUID(c);
  else if (c.status.containerID === undefined) await waitForJoinIps(c);
  const readded = await signAndAdd(c, allocation, c.clusterGUID, c.recheck);
  if (!c.recheck) return;
  c.recheck = false;
  const drives = readded > 0 ? `${readded} drives were missing and were added again` : 'every drive in place';
  const checked = `checked in Weka cluster ${c.clusterGUID}: container ${c.status.containerID ?? '?'}, ${drives}`;
  if (c.status.conditions.some((x) => x.type === 'Ready' && x.reason === DRIVES_MISSING))
    await c.status.event(
      'Normal',
      'DrivesRestored',
      `its virtual drives are signed on the node and in the cluster again; ${checked}`,
    );
  else await c.status.event('Normal', 'PodRecovered', `its pod runs again on the same ports; ${checked}`);
}

/**
 * After the drive verification told of missing virtual drives: Ready is taken away (DrivesMissing,
 * with a Warning), and the next pass signs and adds every drive that is not in place, as after a
 * lost pod; a drive that cannot be made again fails that pass, which says why on the object.
 */
async function drivesFoundMissing(c: ContainerRun): Promise<void> {
  c.recheck = true;
  const message = `the drive verification found ${c.missingDrives.join(', ')} missing: signing and adding them again`;
  c.status.stage('Ready', 'False', DRIVES_MISSING, message);
  await c.status.event('Warning', DRIVES_MISSING, message);
  await c.status.enter('Pending', 'virtual drives were found missing: signing and adding them again');
  if (c.memberOfCluster) await kubeLocal.wakeMemberCluster(c.ref);
}

/** Ready, and usable, until the spec changes: then it grows if the spec asks for more. */
async function showReady(c: ContainerRun, granted: Granted, grew: boolean): Promise<void> {
  const { status } = c;
  const allocation = granted.allocation;
  status.stage('Ready', 'True', 'Ready', `all its ${drivesText(allocation)} are in the cluster`);
  showGrowth(c, granted, grew);
  const waiting = granted.pending?.waitForCapacity === true;
  const becameReady = status.phase !== 'Ready';
  const growth = granted.pending?.error;
  await status.enter(
    'Ready',
    awaitsReplacement(granted.pending)
      ? `ready with ${gibOf(allocation)} GiB; replacing its drives on a blocked drive waits for capacity on the node`
      : granted.pending
        ? `ready with ${gibOf(allocation)} GiB; growing waits for ${waiting ? 'capacity on the node' : 'a spec change'}`
        : 'ready; waiting for a spec change or deletion',
    // Serving, but not yet what the spec asks: at work while capacity may come, else stalled.
    growth && { kind: waiting ? 'working' : 'stalled', reason: growth.type, message: growth.message },
  );
  // Its cluster is Ready once its last member is: told now, not at the cluster's next look.
  if (becameReady && c.memberOfCluster) await kubeLocal.wakeMemberCluster(c.ref);
}

/**
 * The Grown condition: once the spec asks for more than the container holds, whether it got it.
 * A growth that waits never touches what the container holds: its drives stay in the cluster.
 */
function showGrowth(c: ContainerRun, { allocation, pending }: Granted, grew: boolean): void {
  const { status } = c;
  const holds = drivesText(allocation);
  if (awaitsReplacement(pending)) {
    const message = `${pending!.error.message}; the container keeps using its ${holds}`;
    status.stage(DRIVES_REPLACED, 'False', pending!.error.type, message, 'Warning');
    return;
  }
  // Unblocked meanwhile, or deleted from under it: nothing of it waits for a replacement any more.
  if (status.conditions.some((x) => x.type === DRIVES_REPLACED && x.status === 'False'))
    status.stage(DRIVES_REPLACED, 'True', 'NothingToReplace', 'none of its virtual drives is on a blocked drive');
  if (pending) {
    const when = pending.waitForCapacity
      ? 'asks again when capacity is released on the node, its spec changes, or in 30 s'
      : 'asks again when its spec changes';
    const message = `growing as the spec asks does not fit yet: ${pending.error.message}; the container keeps using its ${holds}, and ${when}`;
    status.stage('Grown', 'False', pending.error.type, message, 'Warning');
  } else if (grew || status.conditions.some((c) => c.type === 'Grown' && c.status === 'False')) {
    status.stage('Grown', 'True', 'Grown', `holds what its spec asks for: ${holds}`, 'Normal');
  }
}

/**
 * A failure the activity's retries could not fix (a refusal by a Weka tool, a state conflict,
 * output that does not parse) is shown, and the container waits instead of failing with
 * resources held: for a spec change, its deletion, or a while. What looked final can have been a
 * glitch (a tool killed mid-print by a kubelet restart), so the step is tried again after
 * ERROR_RETRY_FIRST_S, then less and less often; every step is idempotent. A Weka command that
 * found the pod gone (deleted after it ran) is tried again at once the first time, as the bring-up
 * makes the pod again before it.
 */
export async function retryFailedSteps(c: ContainerRun, steps: () => Promise<void>): Promise<void> {
  const { life, status } = c;
  let podWasGone = false;
  let retryS = ERROR_RETRY_FIRST_S;
  await untilDone(life, async () => {
    try {
      return done(await steps());
    } catch (err) {
      if (isCancellation(err) || isContinueAsNew(err)) throw err;
      const type = failureType(err);
      const podGone = type === 'ExecPodMissing';
      const atOnce = podGone && !podWasGone;
      podWasGone = podGone;
      const waitS = atOnce ? POD_GONE_RETRY_S : retryS;
      if (!atOnce) retryS = Math.min(retryS * 2, ERROR_RETRY_MAX_S);
      const changes = life.specChanges;
      const failure = `${status.step}: ${messageOf(err)}`;
      status.stage('Ready', 'False', 'StepFailed', failure, 'Warning');
      // Tried again all the same: what a person must fix may be fixed outside the spec.
      const person = needsAPerson(type);
      await status.enter(
        person ? 'Refused' : 'Error',
        `failed while ${status.step}; trying again in ${waitS} s, or at a spec change, or deletion`,
        person ? { kind: 'stalled', reason: type ?? 'StepFailed', message: failure } : undefined,
      );
      return again(() => condition(() => life.specChanges > changes, `${waitS} seconds`));
    }
  });
}
