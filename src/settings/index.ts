export {
  DEFAULT_ALLOCATION_SETTINGS,
  DEFAULT_DRIVE_TYPES_RATIO,
  DEFAULT_ENFORCE_MIN_DRIVES_PER_TYPE_PER_CORE,
  DEFAULT_MAX_VIRTUAL_DRIVES_PER_CORE,
  resolveOverrideChain,
  resolveSettings,
} from './allocation-settings.js';
export type { AllocationSettings, SettingsOverrides } from './allocation-settings.js';
