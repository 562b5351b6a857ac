import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type AllocationSettings,
  DEFAULT_ALLOCATION_SETTINGS,
  resolveOverrideChain,
  resolveSettings,
  type SettingsOverrides,
} from '../../../src/allocation/settings.js';

describe('operator defaults', () => {
  it('are tlc 1 : qlc 10, 8 virtual drives per core, per-type minimum enforced', () => {
    expect(DEFAULT_ALLOCATION_SETTINGS).toEqual({
      maxVirtualDrivesPerCore: 8,
      enforceMinDrivesPerTypePerCore: true,
      driveTypesRatio: { tlc: 1, qlc: 10 },
    });
  });
});

describe('resolveSettings: defaults -> WekaCluster template -> WekaContainer spec', () => {
  it('returns the defaults when no layer sets anything', () => {
    expect(resolveSettings(DEFAULT_ALLOCATION_SETTINGS)).toEqual(DEFAULT_ALLOCATION_SETTINGS);
    expect(resolveSettings(DEFAULT_ALLOCATION_SETTINGS, {}, {})).toEqual(DEFAULT_ALLOCATION_SETTINGS);
  });

  it('lets an undefined field inherit from the layer below', () => {
    const resolved = resolveSettings(
      DEFAULT_ALLOCATION_SETTINGS,
      { maxVirtualDrivesPerCore: 4 },
      { maxVirtualDrivesPerCore: undefined },
    );
    expect(resolved.maxVirtualDrivesPerCore).toBe(4);
  });

  it('lets an explicit false win over an inherited true', () => {
    const resolved = resolveSettings(DEFAULT_ALLOCATION_SETTINGS, undefined, { enforceMinDrivesPerTypePerCore: false });
    expect(resolved.enforceMinDrivesPerTypePerCore).toBe(false);
  });

  it('lets an explicit true in the container spec win over the template’s false', () => {
    const resolved = resolveSettings(
      DEFAULT_ALLOCATION_SETTINGS,
      { enforceMinDrivesPerTypePerCore: false },
      { enforceMinDrivesPerTypePerCore: true },
    );
    expect(resolved.enforceMinDrivesPerTypePerCore).toBe(true);
  });

  it('lets an explicit 0 win (the allocator then refuses it, rather than silently using 8)', () => {
    const resolved = resolveSettings(DEFAULT_ALLOCATION_SETTINGS, { maxVirtualDrivesPerCore: 0 });
    expect(resolved.maxVirtualDrivesPerCore).toBe(0);
  });

  it('lets the container spec override the template, which overrides the defaults', () => {
    const resolved = resolveSettings(
      DEFAULT_ALLOCATION_SETTINGS,
      { maxVirtualDrivesPerCore: 4, driveTypesRatio: { tlc: 4, qlc: 1 } },
      { driveTypesRatio: { tlc: 1, qlc: 0 } },
    );
    expect(resolved).toEqual({
      maxVirtualDrivesPerCore: 4,
      enforceMinDrivesPerTypePerCore: true,
      driveTypesRatio: { tlc: 1, qlc: 0 },
    });
  });

  it('replaces a ratio whole: a ratio with qlc 0 does not inherit the default qlc 10', () => {
    const resolved = resolveSettings(DEFAULT_ALLOCATION_SETTINGS, undefined, { driveTypesRatio: { tlc: 3, qlc: 0 } });
    expect(resolved.driveTypesRatio).toEqual({ tlc: 3, qlc: 0 });
  });

  it('does not modify the defaults or the layers', () => {
    const template = { maxVirtualDrivesPerCore: 2 };
    resolveSettings(DEFAULT_ALLOCATION_SETTINGS, template, { maxVirtualDrivesPerCore: 3 });
    expect(DEFAULT_ALLOCATION_SETTINGS.maxVirtualDrivesPerCore).toBe(8);
    expect(template).toEqual({ maxVirtualDrivesPerCore: 2 });
  });

  it('takes each field from the narrowest layer that sets it', () => {
    const layerArb: fc.Arbitrary<SettingsOverrides<AllocationSettings>> = fc.record(
      {
        maxVirtualDrivesPerCore: fc.option(fc.integer({ min: 0, max: 16 }), { nil: undefined }),
        enforceMinDrivesPerTypePerCore: fc.option(fc.boolean(), { nil: undefined }),
        driveTypesRatio: fc.option(fc.record({ tlc: fc.nat(5), qlc: fc.nat(5) }), { nil: undefined }),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(layerArb, layerArb, (template, spec) => {
        const resolved = resolveSettings(DEFAULT_ALLOCATION_SETTINGS, template, spec);
        for (const key of Object.keys(DEFAULT_ALLOCATION_SETTINGS) as (keyof AllocationSettings)[]) {
          expect(resolved[key]).toEqual(spec[key] ?? template[key] ?? DEFAULT_ALLOCATION_SETTINGS[key]);
        }
      }),
    );
  });
});

describe('resolveOverrideChain', () => {
  it('applies any number of layers, broadest first', () => {
    expect(resolveOverrideChain({ a: 1, b: 'x' }, { a: 2 }, undefined, { a: 0 }, { b: '' })).toEqual({ a: 0, b: '' });
  });
});
