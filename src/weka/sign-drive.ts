// Typed calls for weka-sign-drive: proxy signing of physical devices, reading the node's devices,
// and signing/unsigning virtual drives on them (flow steps 2, 4 and 6). The forms and the output
// layout are those of docs/weka-interface.md.
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
import { WekaDeviceNotListed, WekaInputError } from './errors.js';
import { validDevicePath, validSizeGiB, validUUID } from './validate.js';

export const SIGN_DRIVE_TOOL = 'weka-sign-drive';

const LIST_ARGV: readonly string[] = [SIGN_DRIVE_TOOL, 'list', '-j'];

/** The `status` of a device that carries a Weka partition. */
export const WEKA_FORMATTED = 'weka_formatted';

/**
 * Cluster GUIDs that mark a drive signed for the proxy but not yet taken by it; the reference
 * accepts both, calling the literal text a Weka bug (weka_runtime.py 1079-1087).
 */
export const PROXY_CLUSTER_GUIDS: readonly string[] = ['026938d8-a8a2-4ad4-a316-2f23358a1e7a', 'proxy guid'];

/** An indirection unit of 16 KiB or more makes a drive QLC. */
export const QLC_MIN_IU_SIZE = 16384;

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

/** What `weka-sign-drive list -j` reports about one device. */
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

/** A virtual drive to sign on the drive the node recorded at devicePath (planVirtualAdd). */
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
  return { argv: [SIGN_DRIVE_TOOL, 'sign', 'proxy', ...chosen, '--', path], parse: ignoreOutput };
}

/** Signs a whole drive for exclusive use by one Weka cluster (the tool's default mode). */
export function signExclusiveCall(devicePath: string, flags: readonly SignFlag[] = []): WekaCall<void> {
  return { argv: [SIGN_DRIVE_TOOL, ...validFlags(flags), '--', validDevicePath(devicePath)], parse: ignoreOutput };
}

/** Every device the tool sees, with the virtual drives on each (docs/weka-interface.md). */
export function listDrivesCall(): WekaCall<DriveInfo[]> {
  const argv = LIST_ARGV;
  return { argv, parse: (stdout) => parseSignDriveList(stdout, commandText(argv)) };
}

/** One device of the list, by the path the tool lists it at; WekaDeviceNotListed if it lists none there. */
export function readDriveCall(devicePath: string): WekaCall<DriveInfo> {
  const path = validDevicePath(devicePath);
  const argv = LIST_ARGV;
  return { argv, parse: (stdout) => driveAt(parseSignDriveList(stdout, commandText(argv)), path, commandText(argv)) };
}

export function driveAt(drives: readonly DriveInfo[], devicePath: string, command = commandText(LIST_ARGV)): DriveInfo {
  const found = drives.find((d) => d.devicePath === devicePath);
  if (!found)
    throw new WekaDeviceNotListed(
      command,
      devicePath,
      drives.map((d) => d.devicePath),
    );
  return found;
}

/** What signs a virtual drive: the tool finds the physical drive by its UUID, not by its path. */
export interface VirtualAddCommand {
  readonly physicalUUID: string;
  readonly virtualUUID: string;
  readonly ownerClusterGUID: string;
  readonly sizeGiB: number;
}

/**
 * Weka's drives-sharing page names the size in GB; the reference passes its GiB figure there
 * (funcs_virtual_drives.go 147), and so does this operator.
 */
export function virtualAddCall(cmd: VirtualAddCommand): WekaCall<void> {
  const argv = [
    SIGN_DRIVE_TOOL,
    'virtual',
    'add',
    validUUID('physical UUID', cmd.physicalUUID),
    '--size',
    String(validSizeGiB(cmd.sizeGiB)),
    '--owner-cluster-guid',
    validUUID('owner cluster GUID', cmd.ownerClusterGUID),
    '--virtual-uuid',
    validUUID('virtual UUID', cmd.virtualUUID),
  ];
  return { argv, parse: ignoreOutput };
}

export function virtualRemoveCall(cmd: { physicalUUID: string; virtualUUID: string }): WekaCall<void> {
  const argv = [
    SIGN_DRIVE_TOOL,
    'virtual',
    'remove',
    validUUID('physical UUID', cmd.physicalUUID),
    '--virtual-uuid',
    validUUID('virtual UUID', cmd.virtualUUID),
  ];
  return { argv, parse: ignoreOutput };
}

/**
 * Parses `weka-sign-drive list -j`: `{command, timestamp, devices[…]}`, warnings allowed before it.
 * A device is a proxy drive when it is Weka-formatted, says is_proxy (or carries the proxy's
 * sentinel cluster GUID) and has a physical UUID; Weka-formatted otherwise, it is an exclusive
 * drive, claimed by the cluster GUID it names (null while unclaimed); with no weka_info it holds
 * no Weka signature. Unknown fields are ignored.
 */
export function parseSignDriveList(stdout: string, command = commandText(LIST_ARGV)): DriveInfo[] {
  const ctx: OutputContext = { command, stdout };
  const top = expectObject(ctx, parseJsonOutput(ctx), 'output');
  return expectArray(ctx, top['devices'], 'output.devices').map((entry, i) => {
    const where = `output.devices[${i}]`;
    const device = expectObject(ctx, entry, where);
    const devicePath = stringField(ctx, device, 'path', where);
    const status = stringField(ctx, device, 'status', where);
    const hardware = expectObject(ctx, device['hardware'], `${where}.hardware`);
    const serial = serialOf(ctx, hardware, `${where}.hardware`);
    const capacityGiB = Math.floor(intField(ctx, hardware, 'size_bytes', `${where}.hardware`, 0) / 2 ** 30);
    const iuSize = hardware['iu_size'] === undefined ? 0 : intField(ctx, hardware, 'iu_size', `${where}.hardware`, 0);
    const type = driveTypeOfIuSize(iuSize);
    const base = { devicePath, serial, capacityGiB, type };
    const info = device['weka_info'];
    if (info === null || info === undefined) {
      if (status === WEKA_FORMATTED) fail(ctx, `${where} is ${WEKA_FORMATTED} but has no weka_info`);
      return { ...base, signature: 'none', physicalUUID: null, virtualDrives: [] };
    }
    const weka = expectObject(ctx, info, `${where}.weka_info`);
    const physical = device['physical_uuid'];
    const physicalUUID =
      typeof physical === 'string' && physical !== '' ? uuidField(ctx, device, 'physical_uuid', where) : null;
    const virtualDrives = virtualDrivesOf(ctx, weka, `${where}.weka_info`);
    const clusterGUID = clusterGUIDOf(ctx, weka, `${where}.weka_info`);
    if (status !== WEKA_FORMATTED || physicalUUID === null)
      return { ...base, signature: 'other', physicalUUID, virtualDrives };
    const isProxy = booleanField(ctx, weka, 'is_proxy', `${where}.weka_info`);
    if (isProxy || (clusterGUID !== null && PROXY_CLUSTER_GUIDS.includes(clusterGUID.toLowerCase())))
      return { ...base, signature: 'proxy', physicalUUID, virtualDrives };
    return { ...base, signature: 'exclusive', physicalUUID, virtualDrives, clusterGUID };
  });
}

/** The drive type from the header's indirection-unit size (weka_runtime.py 336-343). */
export function driveTypeOfIuSize(iuSize: number): DriveType {
  return iuSize >= QLC_MIN_IU_SIZE ? 'QLC' : 'TLC';
}

function serialOf(ctx: OutputContext, hardware: Readonly<Record<string, unknown>>, where: string): string {
  const value = hardware['serial_number'] ?? hardware['serial'];
  if (typeof value !== 'string' || value.trim() === '') fail(ctx, `${where}.serial_number is not a non-empty string`);
  return value.trim();
}

function clusterGUIDOf(ctx: OutputContext, weka: Readonly<Record<string, unknown>>, where: string): string | null {
  const value = weka['cluster_guid'];
  if (value === null || value === undefined || value === '') return null;
  if (typeof value !== 'string') fail(ctx, `${where}.cluster_guid is not a string or null`);
  return value;
}

function virtualDrivesOf(
  ctx: OutputContext,
  weka: Readonly<Record<string, unknown>>,
  where: string,
): VirtualDriveSignature[] {
  if (weka['virtual_drives'] === undefined || weka['virtual_drives'] === null) return [];
  return expectArray(ctx, weka['virtual_drives'], `${where}.virtual_drives`).map((entry, i) => {
    const at = `${where}.virtual_drives[${i}]`;
    const vd = expectObject(ctx, entry, at);
    return {
      virtualUUID: uuidField(ctx, vd, 'virtual_uuid', at),
      ownerClusterGUID: uuidField(ctx, vd, 'cluster_uuid', at),
      sizeGiB: intField(ctx, vd, 'size_gb', at, 1),
    };
  });
}

/** Capacity not yet given to virtual drives. */
export function freeCapacityGiB(info: DriveInfo): number {
  return info.capacityGiB - info.virtualDrives.reduce((sum, vd) => sum + vd.sizeGiB, 0);
}
