// The teardown of a deleted WekaCluster, the bring-up in reverse: its drive containers first (their
// workflows undo their drives), then its port range, then its device sets, then the finalizer.
import { condition } from '@temporalio/workflow';
import { CLUSTER_PORTS_MUTEX_ID, deleteRequestedSignal } from '../../src/protocol.js';
import { kube, kubeLocal } from '../activities.js';
import { releaseDeviceSets } from '../device-sets.js';
import { again, done, untilDone } from '../steps.js';
import { tellMembers } from './members.js';
import { RETRY_WAIT, type ClusterRun } from './run.js';

/** Deletes the member drive containers and waits until every one has torn down. */
export async function deleteMembers(run: ClusterRun): Promise<void> {
  const { ref, input, status } = run;
  await status.enter('Deleting', 'deleting the drive containers');
  // A member's teardown may wait long (its pod unreachable): the new run of a cluster being
  // deleted goes straight to this teardown, which starts again from the members that are left.
  await untilDone(run.life, async () => {
    const members = await kubeLocal.clusterMembers({ ref, uid: input.uid });
    await kube.deleteClusterContainers({ ref, uid: input.uid });
    await tellMembers(members, deleteRequestedSignal);
    if (members.length === 0) return done(undefined);
    await status.enter('Deleting', `waiting for ${members.length} drive containers to tear down`);
    return again(() => condition(() => false, '2 seconds'));
  });
}

/** Gives the cluster's port range back to the cluster-ports mutex. */
export async function releasePorts(run: ClusterRun): Promise<void> {
  const { ref, input } = run;
  await run.status.enter('Deleting', 'releasing the port range');
  await run.mutex.call(CLUSTER_PORTS_MUTEX_ID, 'release-cluster-ports', { ...ref, uid: input.uid });
}

/** Releases the cluster's device sets, trying again until every node has let its devices go. */
export async function releaseEveryDeviceSet(run: ClusterRun): Promise<void> {
  const { ref, input, mutex, status } = run;
  await untilDone(run.life, async () => {
    await status.enter('Deleting', 'releasing the device sets');
    if (await releaseDeviceSets({ ref, uid: input.uid, mutex, status })) return done(undefined);
    return again(() => condition(() => false, RETRY_WAIT));
  });
}

/** Says the cluster is torn down, and lets the apiserver delete it. */
export async function removeFinalizer(run: ClusterRun): Promise<void> {
  await run.status.enter('Deleted', 'torn down');
  await kubeLocal.removeFinalizer({ kind: 'WekaCluster', ref: run.ref, uid: run.input.uid });
}
