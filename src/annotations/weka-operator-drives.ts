// The shared-drives annotation as the Weka operator writes it, read so that a node it signed is
// adopted as it is: a JSON list of {physical_uuid, serial, capacity_gib, type}, with no device
// path (that operator finds devices by serial). Adopting reads the node's devices once (to learn
// their paths and the virtual drives already on them) and writes this operator's own annotation.
import type { PhysicalDrive } from '../allocation/types.js';
import type { MalformedAnnotationError } from './shared-drives.js';

export const WEKA_OPERATOR_SHARED_DRIVES_ANNOTATION = 'weka.io/weka-shared-drives';

export interface WekaOperatorSharedDrive {
  readonly physicalUUID: string;
  readonly serial: string;
  readonly capacityGiB: number;
  readonly type: 'TLC' | 'QLC';
}

export type WekaOperatorDrivesDecodeResult =
  | { readonly ok: true; readonly drives: WekaOperatorSharedDrive[] }
  | { readonly ok: false; readonly error: MalformedAnnotationError };

/** Never throws; unknown keys are ignored, as that operator's own reader does. */
export function decodeWekaOperatorSharedDrives(text: string): WekaOperatorDrivesDecodeResult {
  const bad = (problem: string): WekaOperatorDrivesDecodeResult => ({
    ok: false,
    error: { type: 'MalformedAnnotation', message: `annotation ${WEKA_OPERATOR_SHARED_DRIVES_ANNOTATION} ${problem}` },
  });
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    return bad(`is not JSON (${cause instanceof Error ? cause.message : String(cause)})`);
  }
  if (!Array.isArray(parsed)) return bad('must be a JSON list of drives');
  const drives: WekaOperatorSharedDrive[] = [];
  for (const [index, entry] of parsed.entries()) {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry))
      return bad(`entry ${index} is not an object with physical_uuid, serial, capacity_gib and type`);
    const e = entry as Record<string, unknown>;
    const { physical_uuid: physicalUUID, serial, capacity_gib: capacityGiB, type } = e;
    if (typeof physicalUUID !== 'string' || physicalUUID === '')
      return bad(`entry ${index}: physical_uuid must be a non-empty string`);
    if (typeof serial !== 'string') return bad(`entry ${index} (${physicalUUID}): serial must be a string`);
    if (typeof capacityGiB !== 'number' || !Number.isSafeInteger(capacityGiB) || capacityGiB < 1)
      return bad(`entry ${index} (${physicalUUID}): capacity_gib must be a whole number above 0`);
    if (type !== 'TLC' && type !== 'QLC')
      return bad(`entry ${index} (${physicalUUID}): type must be "TLC" or "QLC", got ${JSON.stringify(type)}`);
    drives.push({ physicalUUID, serial, capacityGiB, type });
  }
  return { ok: true, drives };
}

/**
 * Why the node's devices must be read before allocating on it, or undefined: drives the Weka
 * operator listed that this operator's annotation lacks (their device paths, and the virtual
 * drives already on them, are not known yet), or entries of the compact form, which has no type.
 */
export function adoptionReason(
  ours: readonly PhysicalDrive[],
  theirs: readonly WekaOperatorSharedDrive[],
): string | undefined {
  const known = new Set(ours.map((d) => d.physicalUUID));
  const unknown = theirs.filter((d) => !known.has(d.physicalUUID));
  if (unknown.length > 0)
    return `${unknown.length} drives signed by the Weka operator (${WEKA_OPERATOR_SHARED_DRIVES_ANNOTATION}) are new to this operator`;
  const untyped = ours.filter((d) => d.type === undefined);
  if (untyped.length > 0) return `${untyped.length} listed drives have no type (the compact form)`;
  return undefined;
}
