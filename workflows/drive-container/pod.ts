// The container's pod: made on the ports of its allocation, and made again when it is lost.
import { condition } from '@temporalio/workflow';
import type { ContainerAllocation } from '../../activities/types.js';
import { podRefusalReason } from '../../src/manifests/pods.js';
import { kube, kubeLocal } from '../activities.js';
import { failureType, messageOf } from '../lifecycle.js';
import { again, done, untilDone } from '../steps.js';
import { CAPACITY_RETRY, POD_LOST, portsText, type ContainerRun } from './run.js';

/**
 * Makes the pod and waits for it to run. A pod the apiserver refuses (its namespace's quota was
 * used up after the node's mutex checked it) or the scheduler cannot place (its node has not the
 * room the scheduler counts) is shown, and tried again every 30 s or at a spec change; the
 * container keeps what it was given meanwhile.
 */
export async function startPod(c: ContainerRun, alloc: ContainerAllocation): Promise<void> {
  const { life, status, ref, node } = c;
  await untilDone(life, async () => {
    await status.enter('Pending', `starting the pod on ${portsText(alloc)}`);
    const changes = life.specChanges;
    const failure = await kube
      .startContainerPod(ref)
      .then((t) => {
        c.target = t;
        return undefined;
      })
      .catch((err: unknown) => {
        const type = failureType(err);
        if (type === 'PodRefused' || type === 'PodUnschedulable') return { type, message: messageOf(err) };
        throw err;
      });
    if (failure === undefined) {
      for (const [type, reason] of [
        ['PodCreated', 'Created'],
        ['PodScheduled', 'Scheduled'],
      ] as const)
        if (status.conditions.some((c) => c.type === type && c.status === 'False'))
          status.stage(type, 'True', reason, `its pod runs on node ${node}`, 'Normal');
      return done(undefined);
    }
    const [type, reason] =
      failure.type === 'PodRefused'
        ? ['PodCreated', podRefusalReason(failure.message)]
        : ['PodScheduled', 'Unschedulable'];
    status.stage(type, 'False', reason, `${failure.message}; tried again in 30 s`, 'Warning');
    await status.enter('Pending', `waiting for the pod (${reason}): ${failure.message}`, {
      kind: 'working',
      reason,
      message: failure.message,
    });
    return again(() => condition(() => life.specChanges > changes, CAPACITY_RETRY));
  });
}

/**
 * After the watcher told of a lost pod: whether the container's pod, or its node's proxy pod,
 * is lost indeed (the signal may be about a pod the container already made again). A lost one
 * takes Ready away, with the PodLost reason and Event, until the next pass made it again.
 */
export async function podsLost(c: ContainerRun): Promise<boolean> {
  const { status, ref, node } = c;
  const lost = await kubeLocal.lostPods({ ref, uid: c.uid, node, proxy: !c.wholeDrives });
  if (lost.length === 0) return false;
  c.recheck = true;
  const message =
    `${lost.join('; ')}: making it again on the same ports (${c.allocation ? portsText(c.allocation) : 'none given'}), ` +
    'then checking its Weka membership and drives';
  status.stage('Ready', 'False', POD_LOST, message);
  await status.event('Warning', POD_LOST, message);
  await status.enter('Pending', 'a pod was lost: making it again');
  // Its cluster is not Ready while a member is not: told now, not at the cluster's next look.
  if (c.memberOfCluster) await kubeLocal.wakeMemberCluster(ref);
  return true;
}
