// The drive-sharing capacity fields and their rules. WekaCluster.spec.dynamicTemplate and
// WekaContainer.spec carry the same fields (the cluster copies them into each drive container),
// so both get them, and the same validation, from here.
import { Type } from '@sinclair/typebox';
import { celRules, DriveTypesRatioSchema, type CelRule } from './common.js';

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
} as const satisfies Record<string, CelRule>;

/** The rules that relate capacity fields to each other; they sit on the object holding the fields. */
export const CAPACITY_CROSS_FIELD_RULES: readonly CelRule[] = [
  CAPACITY_RULES.driveCapacityExcludesContainerCapacity,
  CAPACITY_RULES.numDrivesExcludesContainerCapacity,
  CAPACITY_RULES.driveTypesRatioNeedsContainerCapacity,
  CAPACITY_RULES.numDrivesCoversDriveCores,
];

/**
 * The capacity properties. `whose` names the container(s) the values apply to, so
 * `kubectl explain` reads naturally on both kinds ("each drive container" / "this container").
 */
export function capacityProperties(whose: string) {
  return {
    driveCores: Type.Optional(
      Type.Integer({
        description: `Number of Weka drive cores (drive processes) of ${whose}. Each core needs at least one virtual drive.`,
        ...celRules(CAPACITY_RULES.driveCoresPositive),
      }),
    ),
    numDrives: Type.Optional(
      Type.Integer({
        description: `Number of drives of ${whose}. With driveCapacity: the number of virtual drives, each of driveCapacity GiB (allocation mode 1, TLC only). Not with containerCapacity.`,
        ...celRules(CAPACITY_RULES.numDrivesPositive),
      }),
    ),
    driveCapacity: Type.Optional(
      Type.Integer({
        format: 'int64',
        description: `Size of each virtual drive of ${whose}, in GiB. Setting it turns on drive sharing with allocation mode 1: numDrives virtual drives of driveCapacity GiB each, carved from TLC physical drives only. Not with containerCapacity.`,
        ...celRules(CAPACITY_RULES.driveCapacityPositive),
      }),
    ),
    containerCapacity: Type.Optional(
      Type.Integer({
        format: 'int64',
        description: `Total capacity of ${whose}, in GiB. Setting it turns on drive sharing with allocation mode 2: the capacity is split between TLC and QLC drives by driveTypesRatio and spread evenly over at least driveCores virtual drives (each at least 384 GiB). Not with driveCapacity or numDrives.`,
        ...celRules(CAPACITY_RULES.containerCapacityPositive),
      }),
    ),
    driveTypesRatio: Type.Optional(DriveTypesRatioSchema),
  };
}
