import type { DriveType, PhysicalDrive } from '../allocation/types.js';

/** Node annotation listing the drives signed for the node's ssdproxy. */
export const SHARED_DRIVES_ANNOTATION = 'weka.io/shared-drives';
/**
 * This operator's own: the physical UUIDs of proxy-signed drives the node no longer offers although
 * they are still there (a released device set's, until its volume is wiped or detached), as a
 * sorted JSON list. Every publish keeps them out of the shared drives for as long as a device
 * reports that UUID.
 */
export const WITHHELD_DRIVES_ANNOTATION = 'weka.weka.io/withheld-drives';

export interface MalformedAnnotationError {
  readonly type: 'MalformedAnnotation';
  readonly message: string;
}

export type SharedDrivesDecodeResult =
  | { readonly ok: true; readonly drives: PhysicalDrive[] }
  | { readonly ok: false; readonly error: MalformedAnnotationError };

/**
 * The canonical form: a JSON list of {physicalUUID, serial, capacityGiB, type, devicePath}, keys in
 * that order. A drive without a type is written without the key and reads back the same.
 */
export function encodeSharedDrivesAnnotation(drives: readonly PhysicalDrive[]): string {
  return JSON.stringify(
    drives.map(({ physicalUUID, serial, capacityGiB, type, devicePath }) =>
      type === undefined
        ? { physicalUUID, serial, capacityGiB, devicePath }
        : { physicalUUID, serial, capacityGiB, type, devicePath },
    ),
  );
}

class Malformed extends Error {}

/**
 * Reads the canonical form and the compact form of the drive-sharing design [[uuid, serial, capacityGiB, devicePath], ...]
 * (which has no type). Unknown keys in the object form are ignored so a newer writer does not break
 * an older reader. Never throws: anything malformed comes back as an error naming the entry.
 */
export function decodeSharedDrivesAnnotation(text: string): SharedDrivesDecodeResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    return malformed(`is not JSON (${cause instanceof Error ? cause.message : String(cause)})`);
  }
  if (!Array.isArray(parsed)) return malformed('must be a JSON list of drives');
  try {
    const drives = parsed.map((entry: unknown, index) => decodeEntry(entry, index));
    const seen = new Set<string>();
    for (const [index, drive] of drives.entries()) {
      if (seen.has(drive.physicalUUID))
        throw new Malformed(`entry ${index} repeats physicalUUID ${drive.physicalUUID}`);
      seen.add(drive.physicalUUID);
    }
    return { ok: true, drives };
  } catch (error) {
    if (error instanceof Malformed) return malformed(error.message);
    throw error;
  }
}

function malformed(problem: string): SharedDrivesDecodeResult {
  return {
    ok: false,
    error: { type: 'MalformedAnnotation', message: `annotation ${SHARED_DRIVES_ANNOTATION} ${problem}` },
  };
}

function decodeEntry(entry: unknown, index: number): PhysicalDrive {
  if (Array.isArray(entry)) {
    if (entry.length !== 4)
      throw new Malformed(
        `entry ${index} has ${entry.length} elements; the compact form is [uuid, serial, capacityGiB, devicePath]`,
      );
    const [physicalUUID, serial, capacityGiB, devicePath] = entry as unknown[];
    return checkedDrive(index, { physicalUUID, serial, capacityGiB, devicePath });
  }
  if (typeof entry === 'object' && entry !== null) {
    const { physicalUUID, serial, capacityGiB, type, devicePath } = entry as Record<string, unknown>;
    return checkedDrive(index, { physicalUUID, serial, capacityGiB, type, devicePath });
  }
  throw new Malformed(`entry ${index} is neither an object nor a [uuid, serial, capacityGiB, devicePath] list`);
}

function checkedDrive(index: number, raw: Record<string, unknown>): PhysicalDrive {
  const { physicalUUID, serial, capacityGiB, type, devicePath } = raw;
  const where = `entry ${index}`;
  if (typeof physicalUUID !== 'string' || physicalUUID === '')
    throw new Malformed(`${where}: physicalUUID must be a non-empty string`);
  if (typeof serial !== 'string') throw new Malformed(`${where} (${physicalUUID}): serial must be a string`);
  if (typeof capacityGiB !== 'number' || !Number.isSafeInteger(capacityGiB) || capacityGiB < 1) {
    throw new Malformed(
      `${where} (${physicalUUID}): capacityGiB must be a whole number above 0, got ${JSON.stringify(capacityGiB)}`,
    );
  }
  if (typeof devicePath !== 'string' || devicePath === '')
    throw new Malformed(`${where} (${physicalUUID}): devicePath must be a non-empty string`);
  if (type !== undefined && type !== 'TLC' && type !== 'QLC') {
    throw new Malformed(`${where} (${physicalUUID}): type must be "TLC" or "QLC", got ${JSON.stringify(type)}`);
  }
  const driveType: DriveType | undefined = type;
  return driveType === undefined
    ? { physicalUUID, serial, capacityGiB, devicePath }
    : { physicalUUID, serial, capacityGiB, type: driveType, devicePath };
}
