// `weka cluster drive`: the drives of a cluster, in the forms docs/weka-interface.md gives. A drive
// is either a virtual drive signed on one of this node's proxy devices (`drive add CONTAINER_ID
// VIRTUAL_UUID --pool POOL`; Weka's UUID of the drive is then the virtual UUID) or a whole device
// of this node signed for exclusive use (`drive add CONTAINER_ID DEVICE_PATH`); adding a whole
// drive writes the cluster's claim into the device header, and only signing the device again
// erases it. A drive leaves the cluster as Weka asks: deactivated first, then removed.
import { integerArg, optional, parseArgs, positionals } from './args.js';
import {
  requireContainer,
  type ClusterState,
  type ContainerRecord,
  type DriveRecord,
  type WekaContext,
} from './cluster-state.js';
import { listedStatus } from './failed-drives.js';
import { localContainer, memberOf } from './local-container.js';
import { findDevice, uuidOption, type NodeView } from './node-view.js';
import { SimRefusal, UsageError, type DriveChange, type ToolOutput } from './outcome.js';
import { ERASE_WEKA } from './sign-physical.js';

const GIB = 2 ** 30;

/** One drive as `weka cluster drive … --json` prints it. */
export interface PublicDrive {
  uuid: string;
  added_time: string;
  device_path: string;
  serial_number: string;
  size_bytes: number;
  status: string;
}

export function driveAdd(args: readonly string[], ctx: WekaContext): ToolOutput {
  const parsed = parseArgs(args, { values: ['--pool'] });
  const [idText, target] = positionals(parsed, ['CONTAINER_ID', 'VIRTUAL_UUID|DEVICE_PATH']);
  const pool = optional(parsed, '--pool') ?? null;
  if (pool === '') throw new UsageError('--pool needs a pool name');
  const container = requireContainer(ctx.clusters, integerArg('CONTAINER_ID', idText!, 0));
  const drive = target!.startsWith('/')
    ? wholeDrive(target!, container, pool, ctx)
    : virtualDrive(uuidOption(target!, 'VIRTUAL_UUID'), container, pool, ctx);
  ctx.clusters.drives.push(drive);
  return { stdout: '', changes: [driveChange('drive-add', drive)] };
}

/** A virtual drive signed on this node for the container's cluster, not yet in any container. */
function virtualDrive(
  virtualUUID: string,
  container: ContainerRecord,
  pool: string | null,
  { node, clusters }: WekaContext,
): DriveRecord {
  const signed = [...node.devices.values()].flatMap((d) => d.virtualDrives.map((vd) => ({ device: d, vd })));
  const found = signed.find((s) => s.vd.virtualUUID === virtualUUID);
  if (!found) throw new SimRefusal(`virtual UUID ${virtualUUID} is not signed on any device of node ${node.nodeName}`);
  if (found.vd.ownerClusterGUID !== container.clusterGUID) {
    throw new SimRefusal(
      `virtual drive ${virtualUUID} on ${found.device.devicePath} is signed for cluster ${found.vd.ownerClusterGUID}, but container ${container.containerId} is in cluster ${container.clusterGUID}`,
    );
  }
  const added = clusters.drives.find((d) => d.virtualUUID === virtualUUID);
  if (added) throw new SimRefusal(`${virtualUUID}: Device is already in use by container ${added.containerId}`);
  return record(virtualUUID, container, node, {
    virtualUUID,
    devicePath: found.device.devicePath,
    serial: found.device.serial,
    sizeGiB: found.vd.sizeGiB,
    pool,
  });
}

/**
 * A whole device of this node, signed for exclusive use and claimed by no cluster, added to a
 * container running on this node; the device header then carries the container's cluster GUID.
 */
function wholeDrive(
  path: string,
  container: ContainerRecord,
  pool: string | null,
  { node, clusters, newUUID }: WekaContext,
): DriveRecord {
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
    throw new SimRefusal(`${path}: Device is already in use by container ${added.containerId}${cluster}`);
  }
  if (device.clusterGUID !== null) {
    throw new SimRefusal(
      `${path} carries the signature of cluster ${device.clusterGUID}; sign it again with ${ERASE_WEKA} first`,
    );
  }
  device.clusterGUID = container.clusterGUID;
  return record(newUUID(), container, node, {
    virtualUUID: null,
    devicePath: path,
    serial: device.serial,
    sizeGiB: device.capacityGiB,
    pool,
  });
}

function record(
  driveUUID: string,
  container: ContainerRecord,
  node: NodeView,
  what: Pick<DriveRecord, 'virtualUUID' | 'devicePath' | 'serial' | 'sizeGiB' | 'pool'>,
): DriveRecord {
  return {
    driveUUID,
    ...what,
    containerId: container.containerId,
    node: node.nodeName,
    status: 'ACTIVE',
    addedTime: new Date().toISOString(),
  };
}

/** `weka cluster drive [DRIVE_UUID...] [--container CONTAINER_ID...] [--json]`: the drives asked for. */
export function driveList(args: readonly string[], ctx: WekaContext): ToolOutput {
  const { clusters } = ctx;
  const parsed = parseArgs(args, { values: ['--container'], flags: ['--json'] });
  const uuids = parsed.positionals.map((text) => uuidOption(text, 'DRIVE_UUID'));
  const containerIds = (parsed.values.get('--container') ?? []).map((text) => integerArg('--container', text, 0));
  const drives = visibleDrives(ctx)
    .filter((d) => uuids.length === 0 || uuids.includes(d.driveUUID))
    .filter((d) => containerIds.length === 0 || containerIds.includes(d.containerId))
    .map((d) => publicDrive(d, clusters));
  if (parsed.flags.has('--json')) return { stdout: `${JSON.stringify(drives, null, 2)}\n`, changes: [] };
  const rows = drives.map((d) => `${d.uuid}  ${d.device_path}  ${d.serial_number}  ${d.size_bytes}  ${d.status}`);
  return { stdout: ['UUID  DEVICE PATH  SERIAL  SIZE  STATUS', ...rows].join('\n') + '\n', changes: [] };
}

/**
 * `weka cluster drive deactivate DRIVE_UUID... [-f]`: phases the drives' data out; they turn
 * INACTIVE. A drive whose device failed too: Weka's own scale-down deactivates every drive still
 * meant to be active, failed ones among them (weka/go-cloud-lib, scale_down/scale_down.go).
 */
export function driveDeactivate(args: readonly string[], ctx: WekaContext): ToolOutput {
  const drives = namedDrives(args, visibleDrives(ctx));
  const changed = drives.filter((d) => d.status === 'ACTIVE');
  for (const drive of changed) drive.status = 'INACTIVE';
  return { stdout: '', changes: changed.map((d) => driveChange('drive-deactivate', d)) };
}

/**
 * `weka cluster drive remove DRIVE_UUID... [-f]`: takes inactive drives out of their cluster. A
 * whole drive's device keeps the cluster's claim in its header (what the real drive keeps on disk)
 * until it is signed again with ERASE_WEKA.
 */
export function driveRemove(args: readonly string[], ctx: WekaContext): ToolOutput {
  const { clusters } = ctx;
  const drives = namedDrives(args, visibleDrives(ctx));
  // A failed drive lists INACTIVE, and is removed as it lists: the reference removes a failed drive
  // it reads INACTIVE without deactivating it (weka/weka-operator, removeDriveFromWeka).
  const active = drives.filter((d) => listedStatus(d, clusters) !== 'INACTIVE');
  if (active.length > 0)
    throw new SimRefusal(
      `drive ${active.map((d) => d.driveUUID).join(', ')} is ${active[0]!.status}: deactivate it first (weka cluster drive deactivate)`,
    );
  clusters.drives = clusters.drives.filter((d) => !drives.includes(d));
  return { stdout: '', changes: drives.map((d) => driveChange('drive-remove', d)) };
}

/**
 * The drives a command sees: in a pod, those of the cluster its Weka container is in (the real CLI
 * talks to its own cluster); outside any pod (a test's view of the simulator), every cluster's. A
 * pod whose container is in no cluster (never joined, or removed from it) sees none: what the real
 * CLI prints there is not documented, and no drive of any cluster is this container's then.
 */
function visibleDrives(ctx: WekaContext): DriveRecord[] {
  const { clusters } = ctx;
  if (!ctx.pod) return clusters.drives;
  const member = memberOf(clusters, localContainer(ctx));
  if (!member) return [];
  const ids = new Set(
    clusters.containers.filter((c) => c.clusterGUID === member.clusterGUID).map((c) => c.containerId),
  );
  return clusters.drives.filter((d) => ids.has(d.containerId));
}

/** The drives a deactivate or remove names, each of which must exist. */
function namedDrives(args: readonly string[], all: readonly DriveRecord[]): DriveRecord[] {
  const parsed = parseArgs(args, { flags: ['--force'], aliases: { '-f': '--force' } });
  if (parsed.positionals.length === 0) throw new UsageError('expected DRIVE_UUID...');
  return parsed.positionals.map((text) => {
    const uuid = uuidOption(text, 'DRIVE_UUID');
    const drive = all.find((d) => d.driveUUID === uuid);
    if (!drive) throw new SimRefusal(`The given drive "${uuid}" does not exist`);
    return drive;
  });
}

function publicDrive(d: DriveRecord, clusters: ClusterState): PublicDrive {
  return {
    uuid: d.driveUUID,
    added_time: d.addedTime,
    device_path: d.devicePath,
    serial_number: d.serial,
    size_bytes: d.sizeGiB * GIB,
    status: listedStatus(d, clusters),
  };
}

function driveChange(kind: DriveChange['kind'], d: DriveRecord): DriveChange {
  const { driveUUID, containerId } = d;
  if (d.virtualUUID !== null) return { kind, driveUUID, virtualUUID: d.virtualUUID, containerId, pool: d.pool };
  return { kind, driveUUID, devicePath: d.devicePath, serial: d.serial, containerId, pool: d.pool };
}
