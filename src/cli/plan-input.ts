import type { AllocationSettings, SettingsOverrides } from '../allocation/settings.js';
import type {
  ClaimedVirtualDrive,
  ContainerDriveClaims,
  DriveSharingRequest,
  DriveType,
  DriveTypesRatio,
  PhysicalDrive,
} from '../allocation/types.js';

// Reads the `weka-drives plan` input document. This checks shape only (objects, strings, numbers,
// known keys), naming the bad field; whether the values make sense (capacities above 0, one mode,
// a ratio that is not 0:0) is the allocator's call, so the CLI and the operator agree on it.

export interface PlanInput {
  readonly physicalDrives: PhysicalDrive[];
  readonly claimed: ContainerDriveClaims[];
  readonly request: DriveSharingRequest;
  readonly settings: SettingsOverrides<AllocationSettings>;
}

export type PlanInputResult =
  { readonly ok: true; readonly input: PlanInput } | { readonly ok: false; readonly message: string };

class InputError extends Error {}

export function parsePlanInput(document: unknown): PlanInputResult {
  try {
    const root = object(document, 'input', ['physicalDrives', 'claimed', 'request', 'settings']);
    const settings = root.settings === undefined ? {} : readSettings(root.settings, 'input.settings');
    return {
      ok: true,
      input: {
        physicalDrives: list(root.physicalDrives, 'input.physicalDrives').map((drive, i) =>
          readPhysicalDrive(drive, `input.physicalDrives[${i}]`),
        ),
        claimed:
          root.claimed === undefined
            ? []
            : list(root.claimed, 'input.claimed').map((claim, i) => readClaim(claim, `input.claimed[${i}]`)),
        request: readRequest(root.request, 'input.request'),
        settings,
      },
    };
  } catch (error) {
    if (error instanceof InputError) return { ok: false, message: error.message };
    throw error;
  }
}

function readPhysicalDrive(value: unknown, path: string): PhysicalDrive {
  const raw = object(value, path, ['physicalUUID', 'serial', 'capacityGiB', 'type', 'devicePath']);
  const drive = {
    physicalUUID: string(raw.physicalUUID, `${path}.physicalUUID`),
    serial: string(raw.serial, `${path}.serial`),
    capacityGiB: number(raw.capacityGiB, `${path}.capacityGiB`),
    devicePath: string(raw.devicePath, `${path}.devicePath`),
  };
  return raw.type === undefined ? drive : { ...drive, type: driveType(raw.type, `${path}.type`) };
}

function readClaim(value: unknown, path: string): ContainerDriveClaims {
  const raw = object(value, path, ['container', 'virtualDrives']);
  return {
    container: string(raw.container, `${path}.container`),
    virtualDrives: list(raw.virtualDrives, `${path}.virtualDrives`).map((vd, i) =>
      readVirtualDrive(vd, `${path}.virtualDrives[${i}]`),
    ),
  };
}

/** Like the status it mirrors, a claimed virtual drive may omit serial and type. */
function readVirtualDrive(value: unknown, path: string): ClaimedVirtualDrive {
  const raw = object(value, path, ['virtualUUID', 'physicalUUID', 'capacityGiB', 'serial', 'type']);
  return {
    virtualUUID: string(raw.virtualUUID, `${path}.virtualUUID`),
    physicalUUID: string(raw.physicalUUID, `${path}.physicalUUID`),
    capacityGiB: number(raw.capacityGiB, `${path}.capacityGiB`),
    ...(raw.serial === undefined ? {} : { serial: string(raw.serial, `${path}.serial`) }),
    ...(raw.type === undefined ? {} : { type: driveType(raw.type, `${path}.type`) }),
  };
}

function readRequest(value: unknown, path: string): DriveSharingRequest {
  const raw = object(value, path, ['driveCores', 'numDrives', 'driveCapacity', 'containerCapacity', 'driveTypesRatio']);
  const optionalNumber = (key: string): { [key: string]: number } =>
    raw[key] === undefined ? {} : { [key]: number(raw[key], `${path}.${key}`) };
  return {
    driveCores: number(raw.driveCores, `${path}.driveCores`),
    ...optionalNumber('numDrives'),
    ...optionalNumber('driveCapacity'),
    ...optionalNumber('containerCapacity'),
    ...(raw.driveTypesRatio === undefined
      ? {}
      : { driveTypesRatio: readRatio(raw.driveTypesRatio, `${path}.driveTypesRatio`) }),
  };
}

function readSettings(value: unknown, path: string): SettingsOverrides<AllocationSettings> {
  const raw = object(value, path, ['maxVirtualDrivesPerCore', 'enforceMinDrivesPerTypePerCore', 'driveTypesRatio']);
  const enforce = raw.enforceMinDrivesPerTypePerCore;
  if (enforce !== undefined && typeof enforce !== 'boolean')
    fail(`${path}.enforceMinDrivesPerTypePerCore`, 'must be true or false', enforce);
  return {
    ...(raw.maxVirtualDrivesPerCore === undefined
      ? {}
      : { maxVirtualDrivesPerCore: number(raw.maxVirtualDrivesPerCore, `${path}.maxVirtualDrivesPerCore`) }),
    ...(enforce === undefined ? {} : { enforceMinDrivesPerTypePerCore: enforce as boolean }),
    ...(raw.driveTypesRatio === undefined
      ? {}
      : { driveTypesRatio: readRatio(raw.driveTypesRatio, `${path}.driveTypesRatio`) }),
  };
}

function readRatio(value: unknown, path: string): DriveTypesRatio {
  const raw = object(value, path, ['tlc', 'qlc']);
  return { tlc: number(raw.tlc, `${path}.tlc`), qlc: number(raw.qlc, `${path}.qlc`) };
}

function fail(path: string, expectation: string, value: unknown): never {
  const got = value === undefined ? 'it is missing' : `got ${JSON.stringify(value)}`;
  throw new InputError(`${path} ${expectation}, but ${got}`);
}

function object(value: unknown, path: string, known: readonly string[]): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(path, 'must be an object', value);
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!known.includes(key)) throw new InputError(`${path}.${key} is not a known field (known: ${known.join(', ')})`);
  }
  return record;
}

function list(value: unknown, path: string): unknown[] {
  if (!Array.isArray(value)) fail(path, 'must be a list', value);
  return value as unknown[];
}

function string(value: unknown, path: string): string {
  if (typeof value !== 'string') fail(path, 'must be a string', value);
  return value as string;
}

function number(value: unknown, path: string): number {
  if (typeof value !== 'number') fail(path, 'must be a number', value);
  return value as number;
}

function driveType(value: unknown, path: string): DriveType {
  if (value !== 'TLC' && value !== 'QLC') fail(path, 'must be "TLC" or "QLC"', value);
  return value as DriveType;
}
