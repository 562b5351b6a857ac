export {
  decodeSharedDrivesAnnotation,
  encodeSharedDrivesAnnotation,
  SHARED_DRIVES_ANNOTATION,
  WITHHELD_DRIVES_ANNOTATION,
} from './shared-drives.js';
export type { MalformedAnnotationError, SharedDrivesDecodeResult } from './shared-drives.js';
export {
  BLOCKED_DRIVES_ANNOTATION,
  BLOCKED_PHYSICAL_UUIDS_ANNOTATION,
  decodeSerialsAnnotation,
  encodeSerialsAnnotation,
  EXCLUSIVE_DRIVES_ANNOTATION,
  EXCLUSIVE_DRIVES_RESOURCE,
  exclusiveDrivesResource,
} from './exclusive-drives.js';
export type { SerialsDecodeResult } from './exclusive-drives.js';
export {
  adoptionReason,
  decodeWekaOperatorSharedDrives,
  WEKA_OPERATOR_SHARED_DRIVES_ANNOTATION,
} from './weka-operator-drives.js';
export type { WekaOperatorDrivesDecodeResult, WekaOperatorSharedDrive } from './weka-operator-drives.js';
