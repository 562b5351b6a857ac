import type { AllocationSettings } from './settings.js';
import {
  MAX_DRIVE_CAPACITY_GIB,
  MAX_NODE_CAPACITY_GIB,
  MAX_VIRTUAL_DRIVES_PER_CONTAINER,
  MAX_VIRTUAL_DRIVES_PER_CORE_CEILING,
} from './constants.js';
import { invalidConfig, type InvalidDriveSharingConfigError } from './errors.js';
import type { ContainerDriveClaims, DriveSharingRequest, DriveTypesRatio, PhysicalDrive } from './types.js';

/** The request reduced to the one mode it describes. */
export type SharingMode =
  | { readonly kind: 'fixed-size'; readonly numDrives: number; readonly driveCapacity: number }
  | {
      readonly kind: 'capacity';
      readonly containerCapacity: number;
      readonly ratio: DriveTypesRatio;
      readonly ratioField: string;
    };

const isPositiveInteger = (value: number): boolean => Number.isSafeInteger(value) && value >= 1;

/**
 * The most virtual drives a container with `driveCores` drive cores may get: maxVirtualDrivesPerCore
 * per core, and never more than its status can list.
 */
export function maxVirtualDrives(driveCores: number, settings: AllocationSettings): number {
  return Math.min(driveCores * settings.maxVirtualDrivesPerCore, MAX_VIRTUAL_DRIVES_PER_CONTAINER);
}

/** "16777216 GiB (16 PiB)": the GiB, and the PiB when they are whole. */
const gibText = (gib: number): string => `${gib} GiB` + (gib % 2 ** 20 === 0 ? ` (${gib / 2 ** 20} PiB)` : '');

/**
 * Everything wrong with the configuration is reported before any drive is looked at, so a bad
 * request fails the same way on every node. Returns the mode, or the first problem found.
 */
export function validateDriveSharingInput(
  physicalDrives: readonly PhysicalDrive[],
  claimed: readonly ContainerDriveClaims[],
  request: DriveSharingRequest,
  settings: AllocationSettings,
): SharingMode | InvalidDriveSharingConfigError {
  if (!isPositiveInteger(request.driveCores)) {
    return invalidConfig(
      'request.driveCores',
      `driveCores must be a whole number of at least 1, got ${request.driveCores}`,
    );
  }
  if (request.driveCores > MAX_VIRTUAL_DRIVES_PER_CONTAINER) {
    return invalidConfig(
      'request.driveCores',
      `driveCores ${request.driveCores} asks for at least ${request.driveCores} virtual drives (one per drive core), but a container holds at most ${MAX_VIRTUAL_DRIVES_PER_CONTAINER}; use at most ${MAX_VIRTUAL_DRIVES_PER_CONTAINER} drive cores`,
    );
  }
  if (!isPositiveInteger(settings.maxVirtualDrivesPerCore)) {
    return invalidConfig(
      'settings.maxVirtualDrivesPerCore',
      `maxVirtualDrivesPerCore must be a whole number of at least 1, got ${settings.maxVirtualDrivesPerCore}`,
    );
  }
  if (settings.maxVirtualDrivesPerCore > MAX_VIRTUAL_DRIVES_PER_CORE_CEILING) {
    return invalidConfig(
      'settings.maxVirtualDrivesPerCore',
      `maxVirtualDrivesPerCore must be at most ${MAX_VIRTUAL_DRIVES_PER_CORE_CEILING}, got ${settings.maxVirtualDrivesPerCore}`,
    );
  }
  return validateDrives(physicalDrives) ?? validateClaims(claimed) ?? validateMode(request, settings);
}

function validateDrives(drives: readonly PhysicalDrive[]): InvalidDriveSharingConfigError | undefined {
  const seen = new Set<string>();
  for (const [i, drive] of drives.entries()) {
    if (drive.physicalUUID === '')
      return invalidConfig(`physicalDrives[${i}].physicalUUID`, `physical drive ${i} has an empty physicalUUID`);
    if (seen.has(drive.physicalUUID)) {
      return invalidConfig(`physicalDrives[${i}].physicalUUID`, `physical drive ${drive.physicalUUID} is listed twice`);
    }
    seen.add(drive.physicalUUID);
    if (!isPositiveInteger(drive.capacityGiB)) {
      return invalidConfig(
        `physicalDrives[${i}].capacityGiB`,
        `physical drive ${drive.physicalUUID} has capacityGiB ${drive.capacityGiB}; it must be a whole number of GiB above 0`,
      );
    }
  }
  return undefined;
}

function validateClaims(claimed: readonly ContainerDriveClaims[]): InvalidDriveSharingConfigError | undefined {
  for (const [i, claim] of claimed.entries()) {
    for (const [j, vd] of (claim.virtualDrives ?? []).entries()) {
      if (!Number.isSafeInteger(vd.capacityGiB) || vd.capacityGiB < 0) {
        return invalidConfig(
          `claimed[${i}].virtualDrives[${j}].capacityGiB`,
          `virtual drive ${vd.virtualUUID} of ${claim.container} claims ${vd.capacityGiB} GiB; a claim must be a whole number of GiB, at least 0`,
        );
      }
    }
  }
  return undefined;
}

function validateMode(
  request: DriveSharingRequest,
  settings: AllocationSettings,
): SharingMode | InvalidDriveSharingConfigError {
  const { numDrives, driveCapacity, containerCapacity, driveTypesRatio } = request;
  const fixedSizeFields = [
    numDrives === undefined ? [] : ['numDrives'],
    driveCapacity === undefined ? [] : ['driveCapacity'],
  ].flat();
  if (containerCapacity !== undefined && fixedSizeFields.length > 0) {
    return invalidConfig(
      'request',
      `the request sets both modes: containerCapacity (Mode 2) and ${fixedSizeFields.join(' and ')} (Mode 1); set either containerCapacity or numDrives with driveCapacity`,
    );
  }
  if (containerCapacity !== undefined) {
    if (!isPositiveInteger(containerCapacity)) {
      return invalidConfig(
        'request.containerCapacity',
        `containerCapacity must be a whole number of GiB above 0, got ${containerCapacity}`,
      );
    }
    if (containerCapacity > MAX_NODE_CAPACITY_GIB) {
      return invalidConfig(
        'request.containerCapacity',
        `containerCapacity ${containerCapacity} GiB is more than any node holds (at most ${gibText(MAX_NODE_CAPACITY_GIB)}); ask for less`,
      );
    }
    const ratioField = driveTypesRatio === undefined ? 'settings.driveTypesRatio' : 'request.driveTypesRatio';
    const ratio = driveTypesRatio ?? settings.driveTypesRatio;
    const ratioError = validateRatio(ratio, ratioField);
    if (ratioError !== undefined) return ratioError;
    return { kind: 'capacity', containerCapacity, ratio, ratioField };
  }
  if (numDrives === undefined || driveCapacity === undefined) {
    return invalidConfig(
      numDrives === undefined ? 'request.numDrives' : 'request.driveCapacity',
      fixedSizeFields.length === 0
        ? 'the request sets no mode: set containerCapacity (Mode 2), or numDrives with driveCapacity (Mode 1)'
        : `Mode 1 needs both numDrives and driveCapacity, but only ${fixedSizeFields.join('')} is set`,
    );
  }
  if (driveTypesRatio !== undefined) {
    return invalidConfig(
      'request.driveTypesRatio',
      'driveTypesRatio only applies with containerCapacity; numDrives x driveCapacity (Mode 1) always uses TLC drives',
    );
  }
  if (!isPositiveInteger(numDrives))
    return invalidConfig('request.numDrives', `numDrives must be a whole number of at least 1, got ${numDrives}`);
  if (!isPositiveInteger(driveCapacity)) {
    return invalidConfig(
      'request.driveCapacity',
      `driveCapacity must be a whole number of GiB above 0, got ${driveCapacity}`,
    );
  }
  // The same rules as the CRD's admission checks, so the CLI and the operator agree; the CRD cannot
  // see the operator's maxVirtualDrivesPerCore, nor a driveCores inherited from a cluster template.
  if (numDrives < request.driveCores) {
    return invalidConfig(
      'request.numDrives',
      `numDrives ${numDrives} is less than driveCores ${request.driveCores}: each drive core needs at least one virtual drive`,
    );
  }
  const limit = maxVirtualDrives(request.driveCores, settings);
  if (numDrives > limit) {
    const perCore = request.driveCores * settings.maxVirtualDrivesPerCore;
    const fix =
      perCore < MAX_VIRTUAL_DRIVES_PER_CONTAINER ? `at most ${limit}, or more driveCores` : `at most ${limit}`;
    return invalidConfig(
      'request.numDrives',
      `numDrives ${numDrives} asks for ${numDrives} virtual drives; at most ${settings.maxVirtualDrivesPerCore} per drive core (driveCores ${request.driveCores}) = ${perCore}, and never more than ${MAX_VIRTUAL_DRIVES_PER_CONTAINER}; ask for numDrives ${fix}`,
    );
  }
  if (driveCapacity > MAX_DRIVE_CAPACITY_GIB) {
    return invalidConfig(
      'request.driveCapacity',
      `driveCapacity ${driveCapacity} GiB is larger than any physical drive (a virtual drive is carved from one, at most ${gibText(MAX_DRIVE_CAPACITY_GIB)}); ask for smaller virtual drives`,
    );
  }
  if (numDrives * driveCapacity > MAX_NODE_CAPACITY_GIB) {
    return invalidConfig(
      'request.driveCapacity',
      `numDrives ${numDrives} x driveCapacity ${driveCapacity} GiB = ${numDrives * driveCapacity} GiB is more than any node holds (at most ${gibText(MAX_NODE_CAPACITY_GIB)}); ask for fewer or smaller virtual drives`,
    );
  }
  return { kind: 'fixed-size', numDrives, driveCapacity };
}

function validateRatio(ratio: DriveTypesRatio, field: string): InvalidDriveSharingConfigError | undefined {
  for (const part of ['tlc', 'qlc'] as const) {
    const value = ratio[part];
    if (!Number.isSafeInteger(value) || value < 0) {
      return invalidConfig(
        `${field}.${part}`,
        `driveTypesRatio.${part} must be a whole number of at least 0, got ${value}`,
      );
    }
  }
  if (ratio.tlc + ratio.qlc === 0) {
    return invalidConfig(
      field,
      'driveTypesRatio is 0:0, which gives capacity to no drive type; set tlc, qlc or both above 0',
    );
  }
  return undefined;
}
