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
import { WekaInputError } from './errors.js';
import { validDevicePath, validSizeGiB, validUUID } from './validate.js';

export const SIGN_DRIVE_TOOL = 'weka-sign-drive';

export type DriveType = 'TLC' | 'QLC';

/** "proxy" for drive sharing, "exclusive" for a drive given whole to one cluster, "other" for anything else. */
export type DriveSignature = 'none' | 'proxy' | 'exclusive' | 'other';

/** What signing may destroy, each only when the operation says so (weka-sign-drive's own flags). */
export const SIGN_FLAGS = [
  '--allow-erase-weka-partitions',
  '--allow-erase-non-weka-partitions',
  '--allow-non-empty-device',
  '--skip-trim-format',
] as const;
export type SignFlag = (typeof SIGN_FLAGS)[number];

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
  /** An exclusive drive's Weka cluster once it is added to one; null while unclaimed, and for other signatures. */
  readonly clusterGUID?: string | null;
}

export interface VirtualAddRequest {
  readonly devicePath: string;
  readonly virtualUUID: string;
  readonly ownerClusterGUID: string;
  readonly sizeGiB: number;
  /** The drive the node recorded at devicePath: the device there must still be it. */
  readonly expected?: ExpectedDrive;
}

/** A physical drive as the node recorded it when it was shared (its shared-drives annotation). */
export interface ExpectedDrive {
  readonly physicalUUID: string;
  readonly serial?: string;
}

export interface VirtualRemoveRequest {
  readonly devicePath: string;
  readonly virtualUUID: string;
  readonly ownerClusterGUID: string;
  /** As for VirtualAddRequest. */
  readonly expected?: ExpectedDrive;
}

function validFlags(flags: readonly SignFlag[]): SignFlag[] {
  const unknown = flags.find((f) => !SIGN_FLAGS.includes(f));
  if (unknown !== undefined) throw new WekaInputError('flag', unknown, `is not a weka-sign-drive flag`);
  return SIGN_FLAGS.filter((f) => flags.includes(f));
}

export function signProxyCall(devicePath: string, flags: readonly SignFlag[] = []): WekaCall<void> {
  const path = validDevicePath(devicePath);
  const chosen = validFlags(flags);
  const argv =
    chosen.length === 0
      ? [SIGN_DRIVE_TOOL, 'sign', 'proxy', path]
      : [SIGN_DRIVE_TOOL, 'sign', 'proxy', ...chosen, '--', path];
  return { argv, parse: ignoreOutput };
}

/** Signs a whole drive for exclusive use by one Weka cluster (the tool's default mode). */
export function signExclusiveCall(devicePath: string, flags: readonly SignFlag[] = []): WekaCall<void> {
  return { argv: [SIGN_DRIVE_TOOL, ...validFlags(flags), '--', validDevicePath(devicePath)], parse: ignoreOutput };
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
  const kind = stringField(ctx, obj, 'signature', 'output');
  const signature = kind === 'proxy' || kind === 'exclusive' ? kind : 'other';
  const physicalUUID = uuidField(ctx, obj, 'physicalUUID', 'output');
  if (signature !== 'exclusive')
    return { devicePath, serial, capacityGiB, type, signature, physicalUUID, virtualDrives };
  const claimed = obj['clusterGUID'];
  const clusterGUID = claimed === null || claimed === undefined ? null : uuidField(ctx, obj, 'clusterGUID', 'output');
  return { devicePath, serial, capacityGiB, type, signature, physicalUUID, virtualDrives, clusterGUID };
}

/** Capacity not yet given to virtual drives. */
export function freeCapacityGiB(info: DriveInfo): number {
  return info.capacityGiB - info.virtualDrives.reduce((sum, vd) => sum + vd.sizeGiB, 0);
}
