// `weka cluster drive add|list|remove`: the drives of a cluster. A drive is either a virtual drive
// signed on one of this node's proxy devices (drive sharing: `drive add CONTAINER_ID VIRTUAL_UUID`)
// or a whole device of this node signed for exclusive use (`drive add CONTAINER_ID DEVICE_PATH`,
// as the reference operator adds one); adding a whole drive writes the cluster's claim into the
// device header, and only signing the device again erases it.
import { integerArg, jsonOrText, parseArgs, positionals } from './args.js';
import { requireContainer, type ContainerRecord, type DriveRecord, type WekaContext } from './cluster-state.js';
import { findDevice, uuidOption, type NodeView } from './node-view.js';
import { SimRefusal, type DriveChange, type ToolOutput } from './outcome.js';
import { ERASE_WEKA } from './sign-physical.js';

/** What `drive list|add --json` shows of a drive: every key for both kinds, null where it does not apply. */
export type PublicDrive = Omit<DriveRecord, 'node'>;

export function driveAdd(args: readonly string[], ctx: WekaContext): ToolOutput {
  const parsed = parseArgs(args, { flags: ['--json'] });
  const [idText, target] = positionals(parsed, ['CONTAINER_ID', 'VIRTUAL_UUID|DEVICE_PATH']);
  const container = requireContainer(ctx.clusters, integerArg('CONTAINER_ID', idText!, 0));
  const drive = target!.startsWith('/')
    ? wholeDrive(target!, container, ctx)
    : virtualDrive(uuidOption(target!, 'VIRTUAL_UUID'), container, ctx);
  ctx.clusters.drives.push(drive);
  const what = drive.virtualUUID ? `virtual ${drive.virtualUUID}` : `${drive.devicePath}, serial ${drive.serial}`;
  return {
    stdout: jsonOrText(
      parsed,
      publicDrive(drive),
      `Added drive ${drive.driveUUID} (${what}) to container ${container.containerId}`,
    ),
    changes: [driveChange('drive-add', drive)],
  };
}

/** A virtual drive signed on this node for the container's cluster, not yet in any container. */
function virtualDrive(virtualUUID: string, container: ContainerRecord, { node, clusters, newUUID }: WekaContext) {
  const signed = [...node.devices.values()].flatMap((d) => d.virtualDrives.map((vd) => ({ device: d.devicePath, vd })));
  const found = signed.find((s) => s.vd.virtualUUID === virtualUUID);
  if (!found) throw new SimRefusal(`virtual UUID ${virtualUUID} is not signed on any device of node ${node.nodeName}`);
  if (found.vd.ownerClusterGUID !== container.clusterGUID) {
    throw new SimRefusal(
      `virtual drive ${virtualUUID} on ${found.device} is signed for cluster ${found.vd.ownerClusterGUID}, but container ${container.containerId} is in cluster ${container.clusterGUID}`,
    );
  }
  const added = clusters.drives.find((d) => d.virtualUUID === virtualUUID);
  if (added)
    throw new SimRefusal(
      `virtual drive ${virtualUUID} is already added as drive ${added.driveUUID} of container ${added.containerId}`,
    );
  return record(newUUID(), container, node, { virtualUUID, sizeGiB: found.vd.sizeGiB });
}

/**
 * A whole device of this node, signed for exclusive use and claimed by no cluster, added to a
 * container running on this node; the device header then carries the container's cluster GUID.
 */
function wholeDrive(path: string, container: ContainerRecord, { node, clusters, newUUID }: WekaContext) {
  const id = container.containerId;
  if (container.hostname !== node.nodeName) {
    throw new SimRefusal(
      `container ${id} (${container.name}) runs on ${container.hostname}, not on node ${node.nodeName}; add a drive on the container's host`,
    );
  }
  const device = findDevice(node, path);
  if (device.signature !== 'exclusive') {
    throw new SimRefusal(`${path} is not signed for exclusive use (signature: ${device.signature})`);
  }
  const added = clusters.drives.find((d) => d.node === node.nodeName && d.devicePath === path);
  if (added) {
    const holder = clusters.containers.find((c) => c.containerId === added.containerId);
    const cluster = holder ? `, cluster ${holder.clusterGUID}` : '';
    throw new SimRefusal(
      `${path}: Device is already in use as drive ${added.driveUUID} of container ${added.containerId}${cluster}`,
    );
  }
  if (device.clusterGUID !== null) {
    throw new SimRefusal(
      `${path} carries the signature of cluster ${device.clusterGUID}; sign it again with ${ERASE_WEKA} first`,
    );
  }
  device.clusterGUID = container.clusterGUID;
  return record(newUUID(), container, node, { devicePath: path, serial: device.serial, sizeGiB: device.capacityGiB });
}

function record(
  driveUUID: string,
  container: ContainerRecord,
  node: NodeView,
  what: { virtualUUID: string; sizeGiB: number } | { devicePath: string; serial: string; sizeGiB: number },
): DriveRecord {
  return {
    driveUUID,
    virtualUUID: null,
    devicePath: null,
    serial: null,
    ...what,
    containerId: container.containerId,
    node: node.nodeName,
    status: 'ACTIVE',
  };
}

export function driveList(args: readonly string[], { clusters }: WekaContext): ToolOutput {
  const parsed = parseArgs(args, { flags: ['--json'] });
  const [idText] = positionals(parsed, ['CONTAINER_ID']);
  const container = requireContainer(clusters, integerArg('CONTAINER_ID', idText!, 0));
  const drives = clusters.drives.filter((d) => d.containerId === container.containerId).map(publicDrive);
  const text = drives
    .map((d) => {
      const what = d.virtualUUID ? `virtual ${d.virtualUUID}` : `${d.devicePath} serial ${d.serial}`;
      return `${d.driveUUID}\t${what}\t${d.sizeGiB} GiB\t${d.status}`;
    })
    .join('\n');
  return { stdout: jsonOrText(parsed, drives, text), changes: [] };
}

/**
 * Takes a drive out of its cluster, either kind. A whole drive's device keeps the cluster's claim
 * in its header (what the real drive keeps on disk) until it is signed again with ERASE_WEKA.
 */
export function driveRemove(args: readonly string[], { clusters }: WekaContext): ToolOutput {
  const parsed = parseArgs(args, { flags: ['--force'], aliases: { '-f': '--force' } });
  const [uuidText] = positionals(parsed, ['DRIVE_UUID']);
  const driveUUID = uuidOption(uuidText!, 'DRIVE_UUID');
  const index = clusters.drives.findIndex((d) => d.driveUUID === driveUUID);
  const drive = clusters.drives[index];
  if (!drive) throw new SimRefusal(`no drive with UUID ${driveUUID}`);
  clusters.drives.splice(index, 1);
  return { stdout: `Removed drive ${driveUUID}\n`, changes: [driveChange('drive-remove', drive)] };
}

/** The record minus simulator bookkeeping, in a fixed key order. */
function publicDrive(d: DriveRecord): PublicDrive {
  return {
    driveUUID: d.driveUUID,
    virtualUUID: d.virtualUUID,
    devicePath: d.devicePath,
    serial: d.serial,
    containerId: d.containerId,
    sizeGiB: d.sizeGiB,
    status: d.status,
  };
}

function driveChange(kind: DriveChange['kind'], d: DriveRecord): DriveChange {
  const { driveUUID, containerId } = d;
  if (d.virtualUUID !== null) return { kind, driveUUID, virtualUUID: d.virtualUUID, containerId };
  return { kind, driveUUID, devicePath: d.devicePath!, serial: d.serial!, containerId };
}
