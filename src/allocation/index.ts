// The allocation core: pure functions over plain data. See docs/allocation.md.

export type {
  ClaimedVirtualDrive,
  ContainerDriveClaims,
  DriveSharingRequest,
  DriveType,
  DriveTypesRatio,
  PhysicalDrive,
  UuidSource,
  VirtualDrive,
} from './types.js';
export { DRIVE_TYPES } from './types.js';
export {
  MAX_DRIVE_CAPACITY_GIB,
  MAX_NODE_CAPACITY_GIB,
  MAX_VIRTUAL_DRIVES_PER_CONTAINER,
  MAX_VIRTUAL_DRIVES_PER_CORE_CEILING,
  MIN_CHUNK_GIB,
} from './constants.js';
export { maxVirtualDrives } from './validate-request.js';

export type {
  AllocationError,
  CapacityShortfallReason,
  DriveSharingError,
  DriveSpaceReport,
  InsufficientDriveCapacityError,
  InsufficientDrivesError,
  InvalidAllocationRequestError,
  InvalidDriveSharingConfigError,
  PortPurpose,
  PortsExhaustedError,
} from './errors.js';

export { allocateVirtualDrives } from './drive-sharing.js';
export type { DriveSharingInput, DriveSharingResult } from './drive-sharing.js';
export type { StrategyName, TypeAllocationSummary } from './plan-types.js';
export { splitCapacityByRatio } from './capacity-mode.js';
export { allocateGrowth, growthShares, growthWanted } from './growth.js';
export type { GrowthInput } from './growth.js';

export { allocateExclusiveDrives } from './exclusive-drives.js';
export type { ExclusiveDrivesRequest, ExclusiveDrivesResult } from './exclusive-drives.js';

export {
  allocateClusterPortRange,
  allocateContainerPorts,
  allocateSingletonPorts,
  CLUSTER_PORT_RANGE_SIZE,
  CLUSTER_PORT_RANGE_START,
  containerPortBlocks,
  SINGLE_PORTS_OFFSET,
  WEKA_PORT_BLOCK_SIZE,
} from './ports.js';
export type { ContainerPorts, PartialSingletonPorts, PortRange, SingletonPorts } from './ports.js';
export { allocateStandalonePorts, overlappingRange, rangeText, STANDALONE_PORTS_START } from './standalone-ports.js';
export { MAX_PORT } from './port-blocks.js';
export type { PortBlock } from './port-blocks.js';

export {
  DEFAULT_ALLOCATION_SETTINGS,
  DEFAULT_DRIVE_TYPES_RATIO,
  DEFAULT_ENFORCE_MIN_DRIVES_PER_TYPE_PER_CORE,
  DEFAULT_MAX_VIRTUAL_DRIVES_PER_CORE,
  resolveOverrideChain,
  resolveSettings,
} from './settings.js';
export type { AllocationSettings, SettingsOverrides } from './settings.js';
