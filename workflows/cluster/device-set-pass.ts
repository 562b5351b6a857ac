// The pass over a WekaCluster's device sets (workflows/device-sets.ts) that runs beside the
// convergence of its members, started by each convergence pass unless one is under way or the
// sets are settled.
import { isCancellation } from '@temporalio/workflow';
import { messageOf } from '../lifecycle.js';
import { provisionDeviceSets } from '../device-sets.js';
import type { ClusterRun } from './run.js';

/** How often settled device sets are looked at again. */
const DEVICE_SET_REVIEW_MS = 5 * 60_000;

/**
 * Starts a pass over the device sets unless one is under way or they are settled. It runs beside
 * the members' convergence: a member that already holds its allocation (from drives the node
 * shares anyway, or a quicker node's devices) forms the cluster without waiting for the slowest
 * node's signing, which queues behind that node's other work.
 */
export function startDeviceSetPass(run: ClusterRun, selected: string[]): void {
  const key = `${run.cluster.generation}/${selected.join(',')}/${Math.floor(Date.now() / DEVICE_SET_REVIEW_MS)}`;
  if (key === run.deviceSetsSettled || run.deviceSetWork) return;
  run.deviceSetWork = provisionInBackground(run, key).finally(() => {
    run.deviceSetWork = undefined;
  });
}

/** Never rejects: nothing awaits it until the run continues as new. */
async function provisionInBackground(run: ClusterRun, key: string): Promise<void> {
  const { ref, input, mutex, status } = run;
  try {
    if (await provisionDeviceSets({ ref, uid: input.uid, mutex, status })) run.deviceSetsSettled = key;
  } catch (err) {
    // Cancelled with the bring-up (the cluster is being deleted), whose own wait ends with it.
    if (isCancellation(err)) return;
    // The members go on without them: a device set's failure is shown, and looked at again next pass.
    await status.condition('DeviceSetsReady', 'False', 'StepFailed', messageOf(err), 'Warning').catch(() => undefined);
  }
}
