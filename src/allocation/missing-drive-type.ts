import type { DriveSpace } from './drive-space.js';
import { invalidConfig, type InvalidDriveSharingConfigError } from './errors.js';
import type { DriveType } from './types.js';

/**
 * The request needs a drive type the node has none of. Drives without a type (annotation in the
 * compact form of the drive-sharing design) are called out, since re-signing them is the fix.
 */
export function missingDriveType(
  spaces: readonly DriveSpace[],
  driveType: DriveType,
  why: string,
): InvalidDriveSharingConfigError {
  const untyped = spaces.filter((space) => space.drive.type === undefined).length;
  const untypedHint =
    untyped === 0
      ? ''
      : `; ${untyped} of the node's ${spaces.length} shared drives have no type (their annotation is in the compact ` +
        `[uuid, serial, capacityGiB, devicePath] form), so re-sign them to record TLC/QLC`;
  return invalidConfig('physicalDrives', `${why}, but no physical drive on the node is ${driveType}${untypedHint}`);
}
