export {
  decodeSharedDrivesAnnotation,
  encodeSharedDrivesAnnotation,
  SHARED_DRIVES_ANNOTATION,
} from './shared-drives.js';
export type { MalformedAnnotationError, SharedDrivesDecodeResult } from './shared-drives.js';
