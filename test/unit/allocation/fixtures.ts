import {
  allocateVirtualDrives,
  type AllocationSettings,
  type ContainerDriveClaims,
  DEFAULT_ALLOCATION_SETTINGS,
  type DriveSharingRequest,
  type DriveSharingResult,
  type DriveType,
  type PhysicalDrive,
  type UuidSource,
  type VirtualDrive,
} from '../../../src/allocation/index.js';

/** A drive as the compact annotation form gives it: no type. */
export function untyped(physicalUUID: string, capacityGiB: number): PhysicalDrive {
  return { physicalUUID, serial: `serial-${physicalUUID}`, capacityGiB, devicePath: `/dev/${physicalUUID}` };
}

export function drive(physicalUUID: string, capacityGiB: number, type: DriveType): PhysicalDrive {
  return { ...untyped(physicalUUID, capacityGiB), type };
}

export const tlc = (physicalUUID: string, capacityGiB: number): PhysicalDrive =>
  drive(physicalUUID, capacityGiB, 'TLC');
export const qlc = (physicalUUID: string, capacityGiB: number): PhysicalDrive =>
  drive(physicalUUID, capacityGiB, 'QLC');

/** vd-1, vd-2, ...: a fixed UUID source. */
export function sequentialUuids(prefix = 'vd'): UuidSource {
  let next = 0;
  return () => `${prefix}-${++next}`;
}

export function claimOn(
  container: string,
  physical: PhysicalDrive,
  capacityGiB: number,
  virtualUUID = `${container}-${physical.physicalUUID}-${capacityGiB}`,
): ContainerDriveClaims {
  const vd: VirtualDrive = {
    virtualUUID,
    physicalUUID: physical.physicalUUID,
    capacityGiB,
    serial: physical.serial,
    type: physical.type ?? 'TLC',
  };
  return { container, virtualDrives: [vd] };
}

export interface AllocateOptions {
  readonly claimed?: readonly ContainerDriveClaims[];
  readonly settings?: Partial<AllocationSettings>;
  readonly newUuid?: UuidSource;
}

export function allocate(
  physicalDrives: readonly PhysicalDrive[],
  request: DriveSharingRequest,
  options: AllocateOptions = {},
): DriveSharingResult {
  return allocateVirtualDrives(
    {
      physicalDrives,
      claimed: options.claimed ?? [],
      request,
      settings: { ...DEFAULT_ALLOCATION_SETTINGS, ...options.settings },
    },
    options.newUuid ?? sequentialUuids(),
  );
}

export function expectOk(result: DriveSharingResult): VirtualDrive[] {
  if (!result.ok) throw new Error(`expected an allocation, got ${result.error.type}: ${result.error.message}`);
  return result.virtualDrives;
}

export function expectError(result: DriveSharingResult) {
  if (result.ok) throw new Error(`expected a refusal, got ${JSON.stringify(result.virtualDrives)}`);
  return result.error;
}

export const sizesOf = (drives: readonly VirtualDrive[], type?: DriveType): number[] =>
  drives.filter((vd) => type === undefined || vd.type === type).map((vd) => vd.capacityGiB);

/** physicalUUID -> GiB the new drives take from it. */
export function takenPerDrive(drives: readonly VirtualDrive[]): Map<string, number> {
  const taken = new Map<string, number>();
  for (const vd of drives) taken.set(vd.physicalUUID, (taken.get(vd.physicalUUID) ?? 0) + vd.capacityGiB);
  return taken;
}
