// A drive container's allocation request, resolved through the settings chain:
// operator defaults (in the allocator's settings) → WekaCluster dynamicTemplate → container spec.
import type { DriveSharingRequest } from '../allocation/index.js';
import { resolveOverrideChain } from '../allocation/settings.js';
import { setsDriveSharing } from '../api/schemas/capacity.js';

export interface CapacityFields {
  driveCores?: number | undefined;
  numDrives?: number | undefined;
  driveCapacity?: number | undefined;
  containerCapacity?: number | undefined;
  driveTypesRatio?: { tlc?: number | undefined; qlc?: number | undefined } | undefined;
}

/** Drive sharing is on when the container or its cluster template sets a capacity. */
export function usesDriveSharing(spec: CapacityFields, template?: CapacityFields): boolean {
  return setsDriveSharing(spec) || setsDriveSharing(template);
}

const pickMode = (f: CapacityFields | undefined): CapacityFields =>
  f === undefined
    ? {}
    : { numDrives: f.numDrives, driveCapacity: f.driveCapacity, containerCapacity: f.containerCapacity };

/**
 * Field by field, the narrowest layer that sets a value wins (0 included). The fields that pick
 * the allocation mode (numDrives, driveCapacity, containerCapacity) travel together from the
 * narrowest layer that sets a capacity: a container with containerCapacity under a template of
 * numDrives x driveCapacity asks for containerCapacity, not for both modes at once.
 */
export function allocationRequest(spec: CapacityFields, template?: CapacityFields): DriveSharingRequest {
  const mode = setsDriveSharing(spec) ? pickMode(spec) : pickMode(template);
  const ratio = resolveOverrideChain<{ driveTypesRatio?: CapacityFields['driveTypesRatio'] }>(
    {},
    { driveTypesRatio: template?.driveTypesRatio },
    { driveTypesRatio: spec.driveTypesRatio },
  ).driveTypesRatio;
  const driveCores = spec.driveCores ?? template?.driveCores ?? 0;
  return {
    driveCores,
    ...(mode.numDrives !== undefined ? { numDrives: mode.numDrives } : {}),
    ...(mode.driveCapacity !== undefined ? { driveCapacity: mode.driveCapacity } : {}),
    ...(mode.containerCapacity !== undefined ? { containerCapacity: mode.containerCapacity } : {}),
    ...(ratio !== undefined ? { driveTypesRatio: { tlc: ratio.tlc ?? 0, qlc: ratio.qlc ?? 0 } } : {}),
  };
}
