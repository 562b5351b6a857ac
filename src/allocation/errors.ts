import type { DriveType } from './types.js';

// Errors are plain data with a `type` discriminant, a message a user can act on, and the numbers
// behind it, so they survive JSON (Temporal payloads, the CLI) without losing anything.

/** One physical drive as the allocator saw it, for error reports. */
export interface DriveSpaceReport {
  readonly physicalUUID: string;
  readonly capacityGiB: number;
  readonly availableGiB: number;
}

/**
 * - below-minimum: the request itself asks for less than driveCores x 384 GiB (of a type), so no
 *   hardware could satisfy it;
 * - not-enough-capacity: the node's usable free space is smaller than what is needed;
 * - no-split-fits: enough GiB are free, but no allowed split into virtual drives fits the drives.
 */
export type CapacityShortfallReason = 'below-minimum' | 'not-enough-capacity' | 'no-split-fits';

export interface InsufficientDriveCapacityError {
  readonly type: 'InsufficientDriveCapacity';
  readonly message: string;
  readonly reason: CapacityShortfallReason;
  /** Absent when the shortfall concerns TLC and QLC together. */
  readonly driveType?: DriveType;
  readonly neededGiB: number;
  /** Free GiB on drives with at least the minimum chunk free. */
  readonly usableGiB: number;
  /** Free GiB on all drives of the type, unusable fragments included. */
  readonly totalAvailableGiB: number;
  /** The drives of the type, most free first. */
  readonly physicalDrives: readonly DriveSpaceReport[];
  readonly minDrives: number;
  readonly maxDrives: number;
}

export interface InsufficientDrivesError {
  readonly type: 'InsufficientDrives';
  readonly message: string;
  readonly needed: number;
  readonly have: number;
  readonly driveType?: DriveType;
  /** Mode 1: the size every virtual drive must have. */
  readonly driveCapacityGiB?: number;
}

export interface InvalidDriveSharingConfigError {
  readonly type: 'InvalidDriveSharingConfig';
  readonly message: string;
  /** The offending field, e.g. "request.driveTypesRatio" or "physicalDrives[2].capacityGiB". */
  readonly field: string;
}

export type PortPurpose = 'cluster-range' | 'singleton' | 'weka-port' | 'agent-port';

export interface PortsExhaustedError {
  readonly type: 'PortsExhausted';
  readonly message: string;
  readonly purpose: PortPurpose;
  /** The window searched: [fromPort, toPort] inclusive. */
  readonly fromPort: number;
  readonly toPort: number;
  readonly size: number;
}

/** A malformed argument to a non-drive-sharing allocator (ports, exclusive drives). */
export interface InvalidAllocationRequestError {
  readonly type: 'InvalidAllocationRequest';
  readonly message: string;
  readonly field: string;
}

export type DriveSharingError =
  InsufficientDriveCapacityError | InsufficientDrivesError | InvalidDriveSharingConfigError;

export type AllocationError = DriveSharingError | PortsExhaustedError | InvalidAllocationRequestError;

export function invalidConfig(field: string, message: string): InvalidDriveSharingConfigError {
  return { type: 'InvalidDriveSharingConfig', message, field };
}

export function invalidRequest(field: string, message: string): InvalidAllocationRequestError {
  return { type: 'InvalidAllocationRequest', message, field };
}
