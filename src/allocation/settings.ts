import type { DriveTypesRatio } from './types.js';

/** Operator-wide knobs of the drive-sharing allocator (Helm values in the seed). */
export interface AllocationSettings {
  /** A container gets at most driveCores x this many virtual drives, TLC and QLC together. */
  readonly maxVirtualDrivesPerCore: number;
  /** true: each active drive type needs driveCores virtual drives; false: only the total does. */
  readonly enforceMinDrivesPerTypePerCore: boolean;
  /** The ratio Mode 2 uses when the request names none. */
  readonly driveTypesRatio: DriveTypesRatio;
}

/**
 * One layer of the override chain. A field that is absent or undefined inherits from the layer
 * below; any other value, including 0 and false, is an explicit choice and wins.
 */
export type SettingsOverrides<T> = { readonly [K in keyof T]?: T[K] | undefined };

export const DEFAULT_DRIVE_TYPES_RATIO: DriveTypesRatio = Object.freeze({ tlc: 1, qlc: 10 });
export const DEFAULT_MAX_VIRTUAL_DRIVES_PER_CORE = 8;
export const DEFAULT_ENFORCE_MIN_DRIVES_PER_TYPE_PER_CORE = true;

export const DEFAULT_ALLOCATION_SETTINGS: AllocationSettings = Object.freeze({
  maxVirtualDrivesPerCore: DEFAULT_MAX_VIRTUAL_DRIVES_PER_CORE,
  enforceMinDrivesPerTypePerCore: DEFAULT_ENFORCE_MIN_DRIVES_PER_TYPE_PER_CORE,
  driveTypesRatio: DEFAULT_DRIVE_TYPES_RATIO,
});

/**
 * Applies override layers from broadest to narrowest. The test is `!== undefined`, never
 * truthiness: a layer that sets 0 or false must not silently inherit its parent's value (seed 004).
 * Values are replaced whole, so a ratio is one decision: tlc from one layer and qlc from another
 * would be a ratio nobody wrote.
 */
export function resolveOverrideChain<T extends object>(
  base: T,
  ...layers: readonly (SettingsOverrides<T> | undefined)[]
): T {
  const resolved: Partial<T> = { ...base };
  for (const layer of layers) {
    if (layer === undefined) continue;
    for (const key of Object.keys(layer) as (keyof T)[]) {
      const value = layer[key];
      if (value !== undefined) resolved[key] = value as T[keyof T];
    }
  }
  return resolved as T;
}

/** Operator defaults, then the WekaCluster template, then the WekaContainer spec. */
export function resolveSettings(
  defaults: AllocationSettings,
  clusterTemplate?: SettingsOverrides<AllocationSettings>,
  containerSpec?: SettingsOverrides<AllocationSettings>,
): AllocationSettings {
  return resolveOverrideChain(defaults, clusterTemplate, containerSpec);
}
