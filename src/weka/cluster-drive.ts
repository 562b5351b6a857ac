// Typed calls for adding signed virtual drives to a Weka cluster and removing them (flow steps
// 5 and 6). The container ID determines the cluster, so no cluster argument is needed.
import { commandText, ignoreOutput, type WekaCall } from './call.js';
import {
  expectArray,
  expectObject,
  intField,
  parseJsonOutput,
  stringField,
  uuidField,
  type OutputContext,
} from './json-output.js';
import { validContainerId, validUUID } from './validate.js';

export const WEKA_TOOL = 'weka';

/** One drive as `weka cluster drive list|add --json` reports it. */
export interface ClusterDrive {
  /** Weka's own ID for the drive, used by `drive remove`. */
  readonly driveUUID: string;
  /** The virtual UUID signed on the physical device, given to `drive add`. */
  readonly virtualUUID: string;
  readonly containerId: number;
  readonly sizeGiB: number;
  readonly status: string;
}

export interface DriveAddRequest {
  readonly containerId: number;
  readonly virtualUUID: string;
}

export function driveAddCall(req: DriveAddRequest): WekaCall<ClusterDrive> {
  const argv = [
    WEKA_TOOL,
    'cluster',
    'drive',
    'add',
    String(validContainerId(req.containerId)),
    validUUID('virtual UUID', req.virtualUUID),
    '--json',
  ];
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
  return {
    driveUUID: uuidField(ctx, obj, 'driveUUID', where),
    virtualUUID: uuidField(ctx, obj, 'virtualUUID', where),
    containerId: intField(ctx, obj, 'containerId', where, 0),
    sizeGiB: intField(ctx, obj, 'sizeGiB', where, 1),
    status: stringField(ctx, obj, 'status', where),
  };
}
