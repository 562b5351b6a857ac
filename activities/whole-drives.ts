// Activities of a drive container given whole drives for its exclusive use, each run in the
// container's pod: add a drive to the container's Weka cluster by the device path it has on the
// node (found by its serial in the host's lsblk, as the Weka operator finds it), take it out of
// the cluster, and release it by signing it again, which wipes the cluster's claim so the next
// container can be given it. Each probes first, so a retry never does a step twice.
import { ApplicationFailure } from '@temporalio/activity';
import {
  containerStatusCall,
  DRIVE_ALREADY_IN_USE,
  driveListCall,
  findWholeDrive,
  listBlockDevicesCall,
  planContainerRemove,
  sameUUID,
  readDriveCall,
  signExclusiveCall,
  WEKA_COMMAND_REFUSED,
  wholeDriveAddCall,
} from '../src/weka/index.js';
import type { ActivityDeps } from './deps.js';
import { stderrOf, takeDriveOut } from './drive-removal.js';
import type { ExecTargetRef } from './types.js';
import { wekaCli } from './weka-cli.js';

export interface WholeDriveRef {
  target: ExecTargetRef;
  /** The node the pod runs on, for messages. */
  node: string;
  serial: string;
}

export function createWholeDriveActivities(deps: ActivityDeps) {
  const run = wekaCli(deps.exec);

  /** The device path of the disk with this serial on the pod's node. */
  async function devicePathOf({ target, node, serial }: WholeDriveRef): Promise<string> {
    const disk = (await run(target, listBlockDevicesCall())).find((d) => d.type === 'disk' && d.serial === serial);
    if (!disk)
      throw ApplicationFailure.nonRetryable(
        `no disk with serial ${serial} on node ${node}: the drive was taken out of the node, or its serial changed`,
        'PhysicalDriveMissing',
      );
    return disk.path;
  }

  return {
    /** Adds the drive to the container's cluster unless it is one of its drives already; returns Weka's drive UUID. */
    async addWholeDriveToCluster(ref: WholeDriveRef & { containerId: number }): Promise<{ driveUUID: string }> {
      const devicePath = await devicePathOf(ref);
      const find = async () =>
        findWholeDrive(await run(ref.target, driveListCall(ref.containerId)), { serial: ref.serial, devicePath });
      const existing = await find();
      if (existing) return { driveUUID: existing.uuid };
      try {
        await run(ref.target, wholeDriveAddCall({ containerId: ref.containerId, devicePath }));
      } catch (err) {
        // An earlier attempt added it and its answer was lost: the list below finds it.
        if (!DRIVE_ALREADY_IN_USE.test(stderrOf(err))) throw err;
      }
      // `drive add` prints nothing to read: Weka's UUID for the drive comes from the list.
      const added = await find();
      if (!added)
        throw ApplicationFailure.nonRetryable(
          `${devicePath} (serial ${ref.serial}) on node ${ref.node} is not among container ${ref.containerId}'s drives after adding it: another container holds it`,
          'WekaStateConflict',
        );
      return { driveUUID: added.uuid };
    },

    /** Deactivates the drive, then removes it once Weka has phased its data out (drive-removal.ts). */
    async removeWholeDriveFromCluster(ref: WholeDriveRef & { containerId: number }): Promise<void> {
      let drives;
      try {
        drives = await run(ref.target, driveListCall(ref.containerId));
      } catch (err) {
        // Refused for a container no longer in the cluster: its drives went with it.
        if (!(err instanceof Error) || err.name !== WEKA_COMMAND_REFUSED) throw err;
        const listed = await run(ref.target, containerStatusCall(ref.containerId));
        if (planContainerRemove(listed, { containerId: ref.containerId }) === 'already-done') return;
        throw err;
      }
      const drive = drives.find((d) => d.serial === ref.serial);
      if (drive) await takeDriveOut(run, ref.target, drive.uuid);
    },

    /**
     * Signs the drive again for exclusive use, which wipes the claim of the cluster it was added to,
     * so that another container can be given it. Only a drive claimed by this container's cluster
     * (or by none) is signed again: another cluster's drive is never erased.
     */
    async releaseWholeDrive(ref: WholeDriveRef & { clusterGUID: string }): Promise<void> {
      const devicePath = await devicePathOf(ref);
      const info = await run(ref.target, readDriveCall(devicePath));
      if (info.signature !== 'exclusive')
        throw ApplicationFailure.nonRetryable(
          `${devicePath} (serial ${ref.serial}) on node ${ref.node} is no longer signed for exclusive use (${info.signature}); leaving it as it is`,
          'WekaStateConflict',
        );
      if (!info.clusterGUID) return;
      if (!sameUUID(info.clusterGUID, ref.clusterGUID))
        throw ApplicationFailure.nonRetryable(
          `${devicePath} (serial ${ref.serial}) on node ${ref.node} is claimed by Weka cluster ${info.clusterGUID}, not ${ref.clusterGUID}; leaving it as it is`,
          'WekaStateConflict',
        );
      await run(ref.target, signExclusiveCall(devicePath, ['--allow-erase-weka-partitions']));
    },
  };
}
