import { describe, expect, it } from 'vitest';
import { adoptionReason, decodeWekaOperatorSharedDrives } from '../../../src/annotations/index.js';

const UUID_A = '11111111-2222-4333-8444-555555555555';
const UUID_B = '66666666-2222-4333-8444-555555555555';
/** As the Weka operator writes it: snake_case keys and no device path. */
const WRITTEN = JSON.stringify([
  { physical_uuid: UUID_A, serial: 'S1', capacity_gib: 7153, type: 'TLC' },
  { physical_uuid: UUID_B, serial: 'S2', capacity_gib: 14306, type: 'QLC', device_path: '/dev/nvme1n1' },
]);

describe("the Weka operator's shared-drives annotation", () => {
  it('reads it as that operator writes it, ignoring keys it does not know', () => {
    expect(decodeWekaOperatorSharedDrives(WRITTEN)).toEqual({
      ok: true,
      drives: [
        { physicalUUID: UUID_A, serial: 'S1', capacityGiB: 7153, type: 'TLC' },
        { physicalUUID: UUID_B, serial: 'S2', capacityGiB: 14306, type: 'QLC' },
      ],
    });
  });

  it.each([
    ['not JSON', '{', /is not JSON/],
    ['not a list', '{}', /must be a JSON list/],
    ['a list entry', '[["a","b",1]]', /entry 0 is not an object/],
    ['no uuid', '[{"serial":"s","capacity_gib":1,"type":"TLC"}]', /physical_uuid must be/],
    ['a bad capacity', `[{"physical_uuid":"u","serial":"s","capacity_gib":0,"type":"TLC"}]`, /capacity_gib must be/],
    ['no type', `[{"physical_uuid":"u","serial":"s","capacity_gib":1}]`, /type must be "TLC" or "QLC"/],
  ])('refuses %s, naming the annotation', (_what, text, message) => {
    const decoded = decodeWekaOperatorSharedDrives(text);
    expect(decoded.ok).toBe(false);
    if (!decoded.ok) {
      expect(decoded.error.message).toMatch(message);
      expect(decoded.error.message).toContain('weka.io/weka-shared-drives');
    }
  });
});

describe('adoptionReason', () => {
  const ours = (physicalUUID: string, type?: 'TLC') => ({
    physicalUUID,
    serial: 'S',
    capacityGiB: 100,
    devicePath: '/dev/nvme0n1',
    ...(type ? { type } : {}),
  });
  const theirs = (physicalUUID: string) => ({ physicalUUID, serial: 'S', capacityGiB: 100, type: 'TLC' as const });

  it('asks to read the devices for drives only the Weka operator listed, and for untyped entries', () => {
    expect(adoptionReason([], [theirs(UUID_A)])).toMatch(/1 drives signed by the Weka operator/);
    expect(adoptionReason([ours(UUID_A, 'TLC')], [theirs(UUID_A), theirs(UUID_B)])).toMatch(/1 drives/);
    expect(adoptionReason([ours(UUID_A)], [])).toMatch(/no type \(the compact form\)/);
  });

  it('leaves a node alone once every drive is known and typed', () => {
    expect(adoptionReason([ours(UUID_A, 'TLC')], [theirs(UUID_A)])).toBeUndefined();
    expect(adoptionReason([], [])).toBeUndefined();
  });
});
