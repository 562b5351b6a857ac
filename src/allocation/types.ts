// The plain data the allocator works on. Everything here is JSON-shaped so it can cross Temporal
// and CLI boundaries unchanged; capacities are whole GiB.

export type DriveType = 'TLC' | 'QLC';

/** The order types are allocated and reported in: TLC first, as the drive-sharing design does. */
export const DRIVE_TYPES: readonly DriveType[] = ['TLC', 'QLC'];

/** Parts of containerCapacity that go to TLC and to QLC drives, e.g. { tlc: 4, qlc: 1 } for 80/20. */
export interface DriveTypesRatio {
  readonly tlc: number;
  readonly qlc: number;
}

/** A physical drive signed for the node's ssdproxy, as listed in the node's shared-drives annotation. */
export interface PhysicalDrive {
  readonly physicalUUID: string;
  readonly serial: string;
  readonly capacityGiB: number;
  /**
   * Absent when the annotation was written in the compact form of the drive-sharing design, which records no type. Such a
   * drive is never used: every request needs a known type (Mode 1 is TLC only).
   */
  readonly type?: DriveType | undefined;
  readonly devicePath: string;
}

/** A slice of one physical drive that belongs to one drive container. */
export interface VirtualDrive {
  readonly virtualUUID: string;
  readonly physicalUUID: string;
  readonly capacityGiB: number;
  readonly serial: string;
  readonly type: DriveType;
}

/**
 * A virtual drive some container already holds, as its status records it. The status schema makes
 * serial and type optional, and only the UUIDs and the capacity matter for what is left.
 */
export interface ClaimedVirtualDrive {
  readonly virtualUUID: string;
  readonly physicalUUID: string;
  readonly capacityGiB: number;
  readonly serial?: string | undefined;
  readonly type?: string | undefined;
}

/** What one container (any namespace, any cluster) already holds on the node, from its status. */
export interface ContainerDriveClaims {
  /** "namespace/name", only used in messages and tables. */
  readonly container: string;
  readonly virtualDrives?: readonly ClaimedVirtualDrive[] | undefined;
  /** Serials of physical drives the container owns exclusively. */
  readonly exclusiveSerials?: readonly string[] | undefined;
}

/**
 * What a drive container asks for. Exactly one mode must be set:
 * - Mode 1: numDrives x driveCapacity, TLC drives only;
 * - Mode 2: containerCapacity, split between TLC and QLC by driveTypesRatio (or the settings' ratio).
 */
export interface DriveSharingRequest {
  readonly driveCores: number;
  readonly numDrives?: number | undefined;
  readonly driveCapacity?: number | undefined;
  readonly containerCapacity?: number | undefined;
  readonly driveTypesRatio?: DriveTypesRatio | undefined;
}

/** Returns a fresh random UUID. Injected so the allocator stays pure and tests can fix the UUIDs. */
export type UuidSource = () => string;

/** What a drive container was given: lives only in its status.allocations. */
export interface ContainerAllocation {
  virtualDrives: VirtualDrive[];
  /** Serials of whole drives given for the container's exclusive use (no virtual drives then). */
  drives?: string[];
  wekaPort?: number;
  agentPort?: number;
  /**
   * Virtual drives taken off a blocked physical drive: each has its replacement in virtualDrives,
   * and stays here, still counted, until the container has removed it from Weka and the device.
   */
  replacedVirtualDrives?: VirtualDrive[];
}

export interface AllocationRefusal {
  type: string;
  message: string;
  [field: string]: unknown;
}
