// The drive-sharing capacity fields and their rules. WekaCluster.spec.dynamicTemplate and
// WekaContainer.spec carry the same fields (the cluster copies them into each drive container),
// so both get them, and the same validation, from here.
import { Type } from '@sinclair/typebox';
import {
  MAX_DRIVE_CAPACITY_GIB,
  MAX_NODE_CAPACITY_GIB,
  MAX_VIRTUAL_DRIVES_PER_CONTAINER,
  MAX_VIRTUAL_DRIVES_PER_CORE_CEILING,
} from '../../allocation/constants.js';
import { celRules, DriveTypesRatioSchema, type CelRule } from './common.js';

/** Drive sharing is on when these fields set a capacity; without, numDrives asks for whole drives. */
export function setsDriveSharing(
  fields: { driveCapacity?: number | undefined; containerCapacity?: number | undefined } | undefined,
): boolean {
  return fields?.driveCapacity !== undefined || fields?.containerCapacity !== undefined;
}

const MAX_DRIVES = MAX_VIRTUAL_DRIVES_PER_CONTAINER;
const PER_CORE = MAX_VIRTUAL_DRIVES_PER_CORE_CEILING;
const pib = (gib: number): string => `${gib} GiB (${gib / 2 ** 20} PiB)`;

export const CAPACITY_RULES = {
  driveCoresPositive: {
    rule: 'self > 0',
    message: 'driveCores must be greater than 0: it is the number of Weka drive cores of a drive container',
  },
  numDrivesPositive: {
    rule: 'self > 0',
    message: 'numDrives must be greater than 0: it is the number of virtual drives of a drive container',
  },
  driveCapacityPositive: {
    rule: 'self > 0',
    message: 'driveCapacity must be greater than 0: it is the size of each virtual drive in GiB',
  },
  containerCapacityPositive: {
    rule: 'self > 0',
    message: 'containerCapacity must be greater than 0: it is the total capacity of a drive container in GiB',
  },
  driveCapacityExcludesContainerCapacity: {
    rule: '!(has(self.driveCapacity) && has(self.containerCapacity))',
    message:
      'driveCapacity and containerCapacity are mutually exclusive: set numDrives with driveCapacity (GiB per virtual drive, TLC only) or containerCapacity (GiB per container), not both',
    fieldPath: '.containerCapacity',
  },
  numDrivesExcludesContainerCapacity: {
    rule: '!(has(self.numDrives) && has(self.containerCapacity))',
    message:
      'numDrives and containerCapacity are mutually exclusive: with containerCapacity the operator chooses the number of virtual drives',
    fieldPath: '.numDrives',
  },
  driveTypesRatioNeedsContainerCapacity: {
    rule: '!has(self.driveTypesRatio) || has(self.containerCapacity)',
    message:
      'driveTypesRatio can only be set together with containerCapacity: numDrives x driveCapacity uses TLC drives only',
    fieldPath: '.driveTypesRatio',
  },
  numDrivesCoversDriveCores: {
    rule: '!has(self.driveCapacity) || !has(self.numDrives) || !has(self.driveCores) || self.numDrives >= self.driveCores',
    message:
      'numDrives must be at least driveCores when driveCapacity is set: each drive core needs at least one virtual drive',
    fieldPath: '.numDrives',
  },
  // Upper bounds: what no node, no setting of the operator and no status could ever give. Refused
  // here, such a request never reaches a node's mutex. Products are computed in double, so that no
  // value, however large, can overflow CEL's int64. What the CRD cannot see (the operator's
  // maxVirtualDrivesPerCore, a driveCores inherited from the cluster's template, how many virtual
  // drives a ratio's two drive types need) the allocator refuses as the Allocated condition.
  driveCoresAtMost: {
    rule: `!has(self.driveCores) || self.driveCores <= ${MAX_DRIVES}`,
    message: `driveCores must be at most ${MAX_DRIVES}: each drive core needs at least one drive, and a drive container holds at most ${MAX_DRIVES}`,
    fieldPath: '.driveCores',
  },
  numDrivesAtMost: {
    rule: `!has(self.numDrives) || self.numDrives <= ${MAX_DRIVES}`,
    message: `numDrives must be at most ${MAX_DRIVES}: a drive container holds at most ${MAX_DRIVES} virtual drives, the most its status can list`,
    fieldPath: '.numDrives',
  },
  numDrivesPerDriveCore: {
    rule: `!has(self.driveCapacity) || !has(self.numDrives) || !has(self.driveCores) || double(self.numDrives) <= double(self.driveCores) * ${PER_CORE}.0`,
    message: `numDrives must be at most ${PER_CORE} x driveCores when driveCapacity is set: no setting of the operator gives a drive core more than ${PER_CORE} virtual drives (its maxVirtualDrivesPerCore, 8 by default, may allow fewer)`,
    fieldPath: '.numDrives',
  },
  driveCapacityAtMost: {
    rule: `!has(self.driveCapacity) || self.driveCapacity <= ${MAX_DRIVE_CAPACITY_GIB}`,
    message: `driveCapacity must be at most ${pib(MAX_DRIVE_CAPACITY_GIB)}: a virtual drive is carved from one physical drive, and no NVMe drive is that large`,
    fieldPath: '.driveCapacity',
  },
  containerCapacityAtMost: {
    rule: `!has(self.containerCapacity) || self.containerCapacity <= ${MAX_NODE_CAPACITY_GIB}`,
    message: `containerCapacity must be at most ${pib(MAX_NODE_CAPACITY_GIB)}: no node holds that much NVMe capacity`,
    fieldPath: '.containerCapacity',
  },
  fixedSizeCapacityAtMost: {
    rule: `!has(self.driveCapacity) || !has(self.numDrives) || double(self.numDrives) * double(self.driveCapacity) <= ${MAX_NODE_CAPACITY_GIB}.0`,
    message: `numDrives x driveCapacity must be at most ${pib(MAX_NODE_CAPACITY_GIB)}: no node holds that much NVMe capacity`,
    fieldPath: '.driveCapacity',
  },
} as const satisfies Record<string, CelRule>;

/**
 * The rules that relate capacity fields to each other, and the upper bounds; they sit on the
 * object holding the fields (pointing at a field with fieldPath).
 */
export const CAPACITY_CROSS_FIELD_RULES: readonly CelRule[] = [
  CAPACITY_RULES.driveCapacityExcludesContainerCapacity,
  CAPACITY_RULES.numDrivesExcludesContainerCapacity,
  CAPACITY_RULES.driveTypesRatioNeedsContainerCapacity,
  CAPACITY_RULES.numDrivesCoversDriveCores,
  CAPACITY_RULES.driveCoresAtMost,
  CAPACITY_RULES.numDrivesAtMost,
  CAPACITY_RULES.numDrivesPerDriveCore,
  CAPACITY_RULES.driveCapacityAtMost,
  CAPACITY_RULES.containerCapacityAtMost,
  CAPACITY_RULES.fixedSizeCapacityAtMost,
];

/**
 * The capacity properties. `whose` names the container(s) the values apply to, so
 * `kubectl explain` reads naturally on both kinds ("each drive container" / "this container").
 */
export function capacityProperties(whose: string) {
  return {
    driveCores: Type.Optional(
      Type.Integer({
        description: `Number of Weka drive cores (drive processes) of ${whose}. Each core needs at least one virtual drive; at most ${MAX_DRIVES}.`,
        ...celRules(CAPACITY_RULES.driveCoresPositive),
      }),
    ),
    numDrives: Type.Optional(
      Type.Integer({
        description: `Number of drives of ${whose}. With driveCapacity: the number of virtual drives, each of driveCapacity GiB (allocation mode 1, TLC only): at most ${MAX_DRIVES}, and at most the operator's maxVirtualDrivesPerCore (8 by default) per drive core. Not with containerCapacity.`,
        ...celRules(CAPACITY_RULES.numDrivesPositive),
      }),
    ),
    driveCapacity: Type.Optional(
      Type.Integer({
        format: 'int64',
        description: `Size of each virtual drive of ${whose}, in GiB. Setting it turns on drive sharing with allocation mode 1: numDrives virtual drives of driveCapacity GiB each, carved from TLC physical drives only. At most ${pib(MAX_DRIVE_CAPACITY_GIB)}, and numDrives x driveCapacity at most ${pib(MAX_NODE_CAPACITY_GIB)}. Not with containerCapacity.`,
        ...celRules(CAPACITY_RULES.driveCapacityPositive),
      }),
    ),
    containerCapacity: Type.Optional(
      Type.Integer({
        format: 'int64',
        description: `Total capacity of ${whose}, in GiB. Setting it turns on drive sharing with allocation mode 2: the capacity is split between TLC and QLC drives by driveTypesRatio and spread evenly over at least driveCores virtual drives (each at least 384 GiB). At most ${pib(MAX_NODE_CAPACITY_GIB)}. Not with driveCapacity or numDrives.`,
        ...celRules(CAPACITY_RULES.containerCapacityPositive),
      }),
    ),
    driveTypesRatio: Type.Optional(DriveTypesRatioSchema),
  };
}
