// Replacing virtual drives on a blocked physical drive (block-drives). The node's mutex gives each
// a replacement of the same size and type on another drive, in the allocation; the bring-up signs
// and adds the replacement like any new drive, and only then does this take the old one out of the
// Weka cluster (deactivated, phased out onto the cluster's other drives, removed), unsign it, and
// ask the mutex to forget it. Weka never has fewer drives of the container than before.
import { isCancellation } from '@temporalio/workflow';
import type { ContainerAllocation } from '../../activities/types.js';
import { NO_REPLACEMENT_CAPACITY } from '../../src/node/blocked-drives.js';
import { nodeMutexId } from '../../src/protocol.js';
import { inPod } from '../activities.js';
import { isContinueAsNew } from '../lifecycle.js';
import { done, untilDone } from '../steps.js';
import { phasedOut, phasingOut } from './leave-cluster.js';
import { forgetVirtualDrive, type ContainerRun } from './run.js';

/** The condition that says whether the container's drives on blocked drives are replaced. */
export const DRIVES_REPLACED = 'DrivesReplaced';

/**
 * Removes the allocation's replaced virtual drives from the Weka cluster and the device, once their
 * replacements are added; true when it removed any (the allocation, asked again, then shows them gone).
 */
export async function removeReplacedDrives(c: ContainerRun, allocation: ContainerAllocation): Promise<boolean> {
  const replaced = allocation.replacedVirtualDrives ?? [];
  const { status, node } = c;
  const containerId = status.containerID;
  const guid = status.clusterGUID;
  if (replaced.length === 0 || guid === undefined) return false;
  for (const [i, drive] of replaced.entries()) {
    const what = `replaced virtual drive ${i + 1} of ${replaced.length} (${drive.virtualUUID}, ${drive.capacityGiB} GiB on blocked drive ${drive.serial})`;
    await status.enter(status.phase, `removing ${what} from cluster ${guid} and the device`);
    if (containerId !== undefined) await takeOut(c, containerId, drive.virtualUUID);
    forgetVirtualDrive(c, drive.virtualUUID);
    await inPod.unsignVirtualDrive({ target: c.target, node, drive, clusterGUID: guid });
    await status.publish();
  }
  const virtualUUIDs = replaced.map((d) => d.virtualUUID);
  await c.mutex.call(nodeMutexId(node), 'forget-replaced-drives', { node, uid: c.uid, virtualUUIDs }, node);
  const message = `its virtual drives on blocked drives (${virtualUUIDs.join(', ')}) were replaced: the replacements are in cluster ${guid}, and the old ones are out of it and off the devices`;
  status.stage(DRIVES_REPLACED, 'True', 'Replaced', message);
  await status.event('Normal', DRIVES_REPLACED, message);
  return true;
}

/** Out of the cluster, waiting (said on the object, as a teardown says it) while Weka phases its data out. */
async function takeOut(c: ContainerRun, containerId: number, virtualUUID: string): Promise<void> {
  await untilDone(c.life, async () => {
    try {
      await inPod.removeDriveFromCluster({ target: c.target, containerId, virtualUUID });
      return done(undefined);
    } catch (err) {
      if (isCancellation(err) || isContinueAsNew(err)) throw err;
      const phasing = await phasingOut(c, err, c.status.phase);
      if (!phasing) throw err;
      return phasing;
    }
  });
  await phasedOut(c);
}

/** Whether an allocation answer is pending because drives on a blocked drive have no replacement. */
export const awaitsReplacement = (pending: { error: { type: string } } | undefined): boolean =>
  pending?.error.type === NO_REPLACEMENT_CAPACITY;
