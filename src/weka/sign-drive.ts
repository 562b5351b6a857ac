// Typed calls for weka-sign-drive: proxy signing of physical devices, reading a device header,
// and signing/unsigning virtual drives on it (flow steps 2, 4 and 6).
import { commandText, ignoreOutput, type WekaCall } from './call.js';
import {
  booleanField,
  expectArray,
  expectObject,
  fail,
  intField,
  parseJsonOutput,
  stringField,
  uuidField,
  type OutputContext,
} from './json-output.js';
import { validDevicePath, validSizeGiB, validUUID } from './validate.js';

export const SIGN_DRIVE_TOOL = 'weka-sign-drive';

export type DriveType = 'TLC' | 'QLC';

/** "proxy" for drive sharing, "other" for any other signature (e.g. exclusive use by one cluster). */
export type DriveSignature = 'none' | 'proxy' | 'other';

export interface VirtualDriveSignature {
  readonly virtualUUID: string;
  readonly ownerClusterGUID: string;
  readonly sizeGiB: number;
}

/** What `weka-sign-drive show --json DEVICE` reports about one physical device. */
export interface DriveInfo {
  readonly devicePath: string;
  readonly serial: string;
  readonly capacityGiB: number;
  readonly type: DriveType;
  readonly signature: DriveSignature;
  /** Assigned by signing; null while the device is unsigned. */
  readonly physicalUUID: string | null;
  readonly virtualDrives: readonly VirtualDriveSignature[];
}

export interface VirtualAddRequest {
  readonly devicePath: string;
  readonly virtualUUID: string;
  readonly ownerClusterGUID: string;
  readonly sizeGiB: number;
}

export interface VirtualRemoveRequest {
  readonly devicePath: string;
  readonly virtualUUID: string;
  readonly ownerClusterGUID: string;
}

export function signProxyCall(devicePath: string): WekaCall<void> {
  return { argv: [SIGN_DRIVE_TOOL, 'sign', 'proxy', validDevicePath(devicePath)], parse: ignoreOutput };
}

export function showDriveCall(devicePath: string): WekaCall<DriveInfo> {
  const argv = [SIGN_DRIVE_TOOL, 'show', '--json', validDevicePath(devicePath)];
  return { argv, parse: (stdout) => parseDriveShow(stdout, commandText(argv)) };
}

export function virtualAddCall(req: VirtualAddRequest): WekaCall<void> {
  const argv = [
    SIGN_DRIVE_TOOL,
    'virtual',
    'add',
    validDevicePath(req.devicePath),
    '--virtual-uuid',
    validUUID('virtual UUID', req.virtualUUID),
    '--owner-cluster-guid',
    validUUID('owner cluster GUID', req.ownerClusterGUID),
    '--size',
    String(validSizeGiB(req.sizeGiB)),
  ];
  return { argv, parse: ignoreOutput };
}

export function virtualRemoveCall(req: VirtualRemoveRequest): WekaCall<void> {
  const argv = [
    SIGN_DRIVE_TOOL,
    'virtual',
    'remove',
    validDevicePath(req.devicePath),
    '--virtual-uuid',
    validUUID('virtual UUID', req.virtualUUID),
    '--owner-cluster-guid',
    validUUID('owner cluster GUID', req.ownerClusterGUID),
  ];
  return { argv, parse: ignoreOutput };
}

/**
 * Parses the device header. An unsigned device reports `"signed": false` and no physicalUUID;
 * a signed one reports its signature kind and the physical UUID signing assigned.
 */
export function parseDriveShow(stdout: string, command = `${SIGN_DRIVE_TOOL} show --json`): DriveInfo {
  const ctx: OutputContext = { command, stdout };
  const obj = expectObject(ctx, parseJsonOutput(ctx), 'output');
  const type = obj['type'];
  if (type !== 'TLC' && type !== 'QLC') fail(ctx, 'output.type is not "TLC" or "QLC"');
  const signed = booleanField(ctx, obj, 'signed', 'output');
  const virtualDrives = expectArray(ctx, obj['virtualDrives'], 'output.virtualDrives').map((entry, i) => {
    const where = `output.virtualDrives[${i}]`;
    const vd = expectObject(ctx, entry, where);
    return {
      virtualUUID: uuidField(ctx, vd, 'virtualUUID', where),
      ownerClusterGUID: uuidField(ctx, vd, 'ownerClusterGUID', where),
      sizeGiB: intField(ctx, vd, 'sizeGiB', where, 1),
    };
  });
  const devicePath = stringField(ctx, obj, 'devicePath', 'output');
  const serial = stringField(ctx, obj, 'serial', 'output');
  const capacityGiB = intField(ctx, obj, 'capacityGiB', 'output', 0);
  if (!signed) {
    if (obj['physicalUUID'] !== undefined && obj['physicalUUID'] !== null)
      fail(ctx, 'unsigned device reports a physicalUUID');
    if (virtualDrives.length > 0) fail(ctx, 'unsigned device reports virtual drives');
    return { devicePath, serial, capacityGiB, type, signature: 'none', physicalUUID: null, virtualDrives };
  }
  const signature = stringField(ctx, obj, 'signature', 'output') === 'proxy' ? 'proxy' : 'other';
  const physicalUUID = uuidField(ctx, obj, 'physicalUUID', 'output');
  return { devicePath, serial, capacityGiB, type, signature, physicalUUID, virtualDrives };
}

/** Capacity not yet given to virtual drives. */
export function freeCapacityGiB(info: DriveInfo): number {
  return info.capacityGiB - info.virtualDrives.reduce((sum, vd) => sum + vd.sizeGiB, 0);
}
