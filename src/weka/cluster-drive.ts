// Typed calls for adding signed virtual drives to a Weka cluster and removing them (flow steps
// 5 and 6). The container ID determines the cluster, so no cluster argument is needed.
import { commandText, ignoreOutput, type WekaCall } from './call.js';
import {
  expectArray,
  expectObject,
  fail,
  intField,
  parseJsonOutput,
  stringField,
  uuidField,
  type OutputContext,
} from './json-output.js';
import { validContainerId, validDevicePath, validUUID } from './validate.js';

export const WEKA_TOOL = 'weka';

/** One drive as `weka cluster drive list|add --json` reports it. */
export interface ClusterDrive {
  /** Weka's own ID for the drive, used by `drive remove`. */
  readonly driveUUID: string;
  /** The virtual UUID signed on the physical device, given to `drive add`; null for a whole drive. */
  readonly virtualUUID: string | null;
  /** A whole (exclusive) drive's device path and serial; null for a virtual drive. */
  readonly devicePath: string | null;
  readonly serial: string | null;
  readonly containerId: number;
  readonly sizeGiB: number;
  readonly status: string;
}

export interface DriveAddRequest {
  readonly containerId: number;
  readonly virtualUUID: string;
}

export function driveAddCall(req: DriveAddRequest): WekaCall<ClusterDrive> {
  return addCall(req.containerId, validUUID('virtual UUID', req.virtualUUID));
}

/** Adds a whole drive signed for exclusive use, by the device path it has on the container's node. */
export function wholeDriveAddCall(req: { containerId: number; devicePath: string }): WekaCall<ClusterDrive> {
  return addCall(req.containerId, validDevicePath(req.devicePath));
}

/** `drive add` takes what to add (a virtual UUID or a device path) after the container. */
function addCall(containerId: number, drive: string): WekaCall<ClusterDrive> {
  const argv = [WEKA_TOOL, 'cluster', 'drive', 'add', String(validContainerId(containerId)), drive, '--json'];
  return { argv, parse: (stdout) => parseDriveAdd(stdout, commandText(argv)) };
}

export function driveListCall(containerId: number): WekaCall<ClusterDrive[]> {
  const argv = [WEKA_TOOL, 'cluster', 'drive', 'list', String(validContainerId(containerId)), '--json'];
  return { argv, parse: (stdout) => parseDriveList(stdout, commandText(argv)) };
}

export function driveRemoveCall(driveUUID: string): WekaCall<void> {
  return { argv: [WEKA_TOOL, 'cluster', 'drive', 'remove', validUUID('drive UUID', driveUUID)], parse: ignoreOutput };
}

export function parseDriveAdd(stdout: string, command = `${WEKA_TOOL} cluster drive add`): ClusterDrive {
  const ctx: OutputContext = { command, stdout };
  return readDrive(ctx, parseJsonOutput(ctx), 'output');
}

export function parseDriveList(stdout: string, command = `${WEKA_TOOL} cluster drive list`): ClusterDrive[] {
  const ctx: OutputContext = { command, stdout };
  return expectArray(ctx, parseJsonOutput(ctx), 'output').map((entry, i) => readDrive(ctx, entry, `output[${i}]`));
}

function readDrive(ctx: OutputContext, value: unknown, where: string): ClusterDrive {
  const obj = expectObject(ctx, value, where);
  const absent = (key: string) => obj[key] === null || obj[key] === undefined;
  const devicePath = absent('devicePath') ? null : stringField(ctx, obj, 'devicePath', where);
  const virtualUUID = absent('virtualUUID') ? null : uuidField(ctx, obj, 'virtualUUID', where);
  if ((virtualUUID === null) === (devicePath === null))
    fail(ctx, `${where} must have either a virtualUUID (a virtual drive) or a devicePath (a whole drive)`);
  return {
    driveUUID: uuidField(ctx, obj, 'driveUUID', where),
    virtualUUID,
    devicePath,
    serial: absent('serial') ? null : stringField(ctx, obj, 'serial', where),
    containerId: intField(ctx, obj, 'containerId', where, 0),
    sizeGiB: intField(ctx, obj, 'sizeGiB', where, 1),
    status: stringField(ctx, obj, 'status', where),
  };
}
