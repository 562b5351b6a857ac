// Typed calls for a Weka cluster's drives, in the forms docs/weka-interface.md gives (`weka cluster
// drive`): adding a signed virtual drive to its pool, or a whole drive by its path; listing a
// container's drives; and taking one out the way Weka asks, deactivated first (its data phased
// out), then removed. The container ID determines the cluster, so no cluster argument is needed.
import type { DriveType } from './sign-drive.js';
import { commandText, ignoreOutput, type WekaCall } from './call.js';
import {
  expectArray,
  expectObject,
  fail,
  intField,
  parseJsonOutput,
  stringField,
  uuidField,
  type JsonObject,
  type OutputContext,
} from './json-output.js';
import { validContainerId, validDevicePath, validUUID } from './validate.js';

export const WEKA_TOOL = 'weka';

/** One drive as `weka cluster drive … --json` prints it. */
export interface ClusterDrive {
  /** Weka's UUID of the drive: for a virtual drive, the virtual UUID it was added by. */
  readonly uuid: string;
  /** The device the drive is on, as Weka reports it; null when it reports none. */
  readonly devicePath: string | null;
  /** Its serial number, without the padding Weka may print; null when it reports none. */
  readonly serial: string | null;
  readonly sizeBytes: number;
  /** `ACTIVE` or `INACTIVE`; anything else is a drive in transition (its data being phased out). */
  readonly status: string;
}

export const DRIVE_ACTIVE = 'ACTIVE';
export const DRIVE_INACTIVE = 'INACTIVE';

/** The pool a virtual drive joins, by its type, as the reference adds them. */
export const DRIVE_POOLS: Readonly<Record<DriveType, string>> = { TLC: 'iu4k', QLC: 'iubig' };

export interface DriveAddRequest {
  readonly containerId: number;
  readonly virtualUUID: string;
  readonly type: DriveType;
}

/** What `drive add` prints on stderr when the drive is in a container already (this one, or another). */
export const DRIVE_ALREADY_IN_USE = /Device is already in use/i;

/** What `drive deactivate|remove` prints on stderr for a drive the cluster does not have. */
export function driveDoesNotExist(uuid: string): RegExp {
  return new RegExp(`The given drive "${uuid}" does not exist`, 'i');
}

export function driveAddCall(req: DriveAddRequest): WekaCall<void> {
  const pool = DRIVE_POOLS[req.type];
  if (!pool) throw new Error(`no pool for drive type ${String(req.type)}`);
  return addCall(req.containerId, validUUID('virtual UUID', req.virtualUUID), '--pool', pool);
}

/** Adds a whole drive signed for exclusive use, by the device path it has on the container's node, in no pool. */
export function wholeDriveAddCall(req: { containerId: number; devicePath: string }): WekaCall<void> {
  return addCall(req.containerId, validDevicePath(req.devicePath));
}

/** `drive add` takes what to add (a virtual UUID or a device path) after the container; it prints nothing to read. */
function addCall(containerId: number, drive: string, ...options: string[]): WekaCall<void> {
  return {
    argv: [WEKA_TOOL, 'cluster', 'drive', 'add', String(validContainerId(containerId)), drive, ...options],
    parse: ignoreOutput,
  };
}

/** The drives of one container. */
export function driveListCall(containerId: number): WekaCall<ClusterDrive[]> {
  const argv = [WEKA_TOOL, 'cluster', 'drive', '--container', String(validContainerId(containerId)), '--json'];
  return { argv, parse: (stdout) => parseDriveList(stdout, commandText(argv)) };
}

/** Every drive of the cluster the command runs in. */
export function clusterDriveListCall(): WekaCall<ClusterDrive[]> {
  const argv = [WEKA_TOOL, 'cluster', 'drive', '--json'];
  return { argv, parse: (stdout) => parseDriveList(stdout, commandText(argv)) };
}

/** One drive by its UUID: an empty list when the cluster has none of that UUID. */
export function driveShowCall(uuid: string): WekaCall<ClusterDrive[]> {
  const argv = [WEKA_TOOL, 'cluster', 'drive', validUUID('drive UUID', uuid), '--json'];
  return { argv, parse: (stdout) => parseDriveList(stdout, commandText(argv)) };
}

/** Starts phasing the drive's data out onto the rest of the cluster; the drive turns INACTIVE once it is done. */
export function driveDeactivateCall(uuid: string): WekaCall<void> {
  return {
    argv: [WEKA_TOOL, 'cluster', 'drive', 'deactivate', validUUID('drive UUID', uuid), '-f'],
    parse: ignoreOutput,
  };
}

/** Takes an inactive drive out of the cluster. */
export function driveRemoveCall(uuid: string): WekaCall<void> {
  return { argv: [WEKA_TOOL, 'cluster', 'drive', 'remove', validUUID('drive UUID', uuid), '-f'], parse: ignoreOutput };
}

export function parseDriveList(stdout: string, command = `${WEKA_TOOL} cluster drive --json`): ClusterDrive[] {
  const ctx: OutputContext = { command, stdout };
  return expectArray(ctx, parseJsonOutput(ctx), 'output').map((entry, i) => readDrive(ctx, entry, `output[${i}]`));
}

function readDrive(ctx: OutputContext, value: unknown, where: string): ClusterDrive {
  const obj = expectObject(ctx, value, where);
  return {
    uuid: uuidField(ctx, obj, 'uuid', where),
    devicePath: optionalText(ctx, obj, 'device_path', where),
    serial: optionalText(ctx, obj, 'serial_number', where),
    sizeBytes: intField(ctx, obj, 'size_bytes', where, 0),
    status: stringField(ctx, obj, 'status', where),
  };
}

/** A string Weka may leave empty, pad with spaces or omit: null then. */
function optionalText(ctx: OutputContext, obj: JsonObject, key: string, where: string): string | null {
  const value = obj[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') fail(ctx, `${where}.${key} is not a string`);
  return value.trim() === '' ? null : value.trim();
}
