// Idempotency probes. Each mutating call is preceded by a read (a list of the devices, the drives
// or the container); these functions decide from that read whether to run the command, whether an
// earlier attempt already did it (it took effect but its answer was lost), or whether the state
// contradicts the request so that running it would be refused or wrong.
import { DRIVE_ACTIVE, DRIVE_INACTIVE, type ClusterDrive } from './cluster-drive.js';
import {
  CONTAINER_DEACTIVATING,
  CONTAINER_INACTIVE,
  findContainerById,
  type WekaContainerState,
} from './cluster-container.js';
import type { ContainerIdentity } from './cluster-formation.js';
import {
  freeCapacityGiB,
  type DriveInfo,
  type ExpectedDrive,
  type VirtualAddRequest,
  type VirtualRemoveRequest,
} from './sign-drive.js';
import { sameUUID } from './validate.js';

export type Plan = 'run' | 'already-done' | { readonly conflict: string };

export function planVirtualAdd(info: DriveInfo, req: VirtualAddRequest): Plan {
  const mismatch = deviceMismatch(info, req.devicePath) ?? identityMismatch(info, req.expected);
  if (mismatch) return mismatch;
  const existing = info.virtualDrives.find((vd) => sameUUID(vd.virtualUUID, req.virtualUUID));
  if (existing) {
    if (!sameUUID(existing.ownerClusterGUID, req.ownerClusterGUID)) {
      return {
        conflict: `virtual drive ${req.virtualUUID} on ${info.devicePath} belongs to cluster ${existing.ownerClusterGUID}, not ${req.ownerClusterGUID}`,
      };
    }
    if (existing.sizeGiB !== req.sizeGiB) {
      return {
        conflict: `virtual drive ${req.virtualUUID} on ${info.devicePath} has ${existing.sizeGiB} GiB, not the requested ${req.sizeGiB} GiB`,
      };
    }
    return 'already-done';
  }
  if (info.signature !== 'proxy') return { conflict: `${info.devicePath} is not signed for proxy use` };
  const free = freeCapacityGiB(info);
  if (free < req.sizeGiB) {
    return { conflict: `${info.devicePath} has ${free} GiB left, ${req.sizeGiB} GiB requested for ${req.virtualUUID}` };
  }
  return 'run';
}

export function planVirtualRemove(info: DriveInfo, req: VirtualRemoveRequest): Plan {
  const mismatch = deviceMismatch(info, req.devicePath) ?? identityMismatch(info, req.expected);
  if (mismatch) return mismatch;
  const existing = info.virtualDrives.find((vd) => sameUUID(vd.virtualUUID, req.virtualUUID));
  if (!existing) return 'already-done';
  if (!sameUUID(existing.ownerClusterGUID, req.ownerClusterGUID)) {
    return {
      conflict: `virtual drive ${req.virtualUUID} on ${info.devicePath} belongs to cluster ${existing.ownerClusterGUID}, not ${req.ownerClusterGUID}`,
    };
  }
  return 'run';
}

/**
 * From the container's identity: a member of `clusterGUID` (or of any cluster, when none is named
 * yet) has joined; a member of another cluster must not be moved; a stem is to be joined; an
 * agent that cannot say yet is asked again.
 */
export function planJoin(identity: ContainerIdentity, clusterGUID?: string): Plan | { wait: string } {
  switch (identity.state) {
    case 'unknown':
      return { wait: identity.reason };
    case 'stem':
      return 'run';
    case 'member':
      if (clusterGUID === undefined || sameUUID(identity.clusterGUID, clusterGUID)) return 'already-done';
      return {
        conflict: `its Weka container is container ${identity.containerId} of cluster ${identity.clusterGUID}, not of ${clusterGUID}`,
      };
  }
}

/** Which container to take out of its cluster; `name`, when given, guards against a reused ID. */
export interface ContainerRemoveRequest {
  readonly containerId: number;
  readonly name?: string;
}

/** What taking a container out of its cluster needs next. */
export type ContainerRemovalStep = 'already-done' | 'deactivate' | 'remove' | { wait: string } | { conflict: string };

/**
 * `listed` is the output of `weka cluster container <id>` (containerStatusCall): gone, done;
 * INACTIVE, remove it; DEACTIVATING, Weka is still taking its data away, so wait; in any other
 * status, deactivate it. A container of another name under the ID is never touched.
 */
export function nextContainerRemovalStep(
  listed: readonly WekaContainerState[],
  req: ContainerRemoveRequest,
): ContainerRemovalStep {
  const existing = findContainerById(listed, req.containerId);
  if (!existing) return 'already-done';
  const mismatch = containerNameMismatch(existing, req);
  if (mismatch) return mismatch;
  if (existing.status === CONTAINER_INACTIVE) return 'remove';
  if (existing.status === CONTAINER_DEACTIVATING) return { wait: existing.status };
  return 'deactivate';
}

/** `listed` as for nextContainerRemovalStep: whether the container is still there to take out. */
export function planContainerRemove(listed: readonly WekaContainerState[], req: ContainerRemoveRequest): Plan {
  const existing = findContainerById(listed, req.containerId);
  if (!existing) return 'already-done';
  return containerNameMismatch(existing, req) ?? 'run';
}

/** A container's drives as `weka cluster drive --container ID` lists them: Weka names a virtual drive by its virtual UUID. */
export function findDriveByVirtualUUID(drives: readonly ClusterDrive[], virtualUUID: string): ClusterDrive | undefined {
  return drives.find((d) => sameUUID(d.uuid, virtualUUID));
}

/** A whole drive of the container, by the serial its node's lsblk reports or the device path. */
export function findWholeDrive(
  drives: readonly ClusterDrive[],
  drive: { serial: string; devicePath: string },
): ClusterDrive | undefined {
  return drives.find((d) => d.serial === drive.serial || d.devicePath === drive.devicePath);
}

/** What taking a drive out of its cluster needs next. */
export type DriveRemovalStep = 'already-done' | 'deactivate' | 'remove' | { wait: string };

/**
 * `shown` is the output of `weka cluster drive UUID` for the drive: gone, done; ACTIVE, deactivate
 * it (Weka phases its data out onto the rest of the cluster); INACTIVE, remove it, which also takes
 * out a drive whose device failed, since Weka lists such a drive INACTIVE (docs/weka-interface.md,
 * "A failed drive"); in any other status its data is still moving, so wait.
 */
export function nextDriveRemovalStep(shown: readonly ClusterDrive[], uuid: string): DriveRemovalStep {
  const drive = shown.find((d) => sameUUID(d.uuid, uuid));
  if (!drive) return 'already-done';
  if (drive.status === DRIVE_ACTIVE) return 'deactivate';
  if (drive.status === DRIVE_INACTIVE) return 'remove';
  return { wait: drive.status };
}

export function findContainerByName<C extends { name: string }>(containers: readonly C[], name: string): C | undefined {
  return containers.find((c) => c.name === name);
}

function containerNameMismatch(
  existing: WekaContainerState,
  req: ContainerRemoveRequest,
): { conflict: string } | undefined {
  if (req.name === undefined || existing.name === req.name) return undefined;
  return {
    conflict: `container ${req.containerId} is ${existing.name} on ${existing.hostname}, not ${req.name}; refusing to remove it`,
  };
}

/**
 * The device at the path is no longer the drive the node recorded there: NVMe names are not stable
 * across reboots, so another drive may now answer to it. Signing or unsigning there would change
 * the wrong drive's header, so both drives are named and nothing is done.
 */
export function identityMismatch(info: DriveInfo, expected: ExpectedDrive | undefined): Plan | undefined {
  if (!expected) return undefined;
  const sameDrive =
    info.physicalUUID !== null &&
    sameUUID(info.physicalUUID, expected.physicalUUID) &&
    (expected.serial === undefined || expected.serial === '' || info.serial === expected.serial);
  if (sameDrive) return undefined;
  const found = `${info.physicalUUID ? `physical drive ${info.physicalUUID}` : 'a drive not signed for Weka'} (serial ${info.serial})`;
  const recorded = `physical drive ${expected.physicalUUID}${expected.serial ? ` (serial ${expected.serial})` : ''}`;
  return {
    conflict: `${info.devicePath} is now ${found}, not ${recorded} as the node recorded it: the device names changed (a reboot?); refusing to touch it until the node's drives are published again`,
  };
}

function deviceMismatch(info: DriveInfo, devicePath: string): Plan | undefined {
  if (info.devicePath === devicePath) return undefined;
  return { conflict: `probe read ${info.devicePath} but the request is for ${devicePath}` };
}
