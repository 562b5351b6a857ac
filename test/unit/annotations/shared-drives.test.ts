import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  allocateVirtualDrives,
  DEFAULT_ALLOCATION_SETTINGS,
  type PhysicalDrive,
} from '../../../src/allocation/index.js';
import {
  decodeSharedDrivesAnnotation,
  encodeSharedDrivesAnnotation,
  SHARED_DRIVES_ANNOTATION,
} from '../../../src/annotations/index.js';

const drive: PhysicalDrive = {
  physicalUUID: 'fb05d910-1',
  serial: 'S5XYNS0T1',
  capacityGiB: 3840,
  type: 'TLC',
  devicePath: '/dev/nvme0n1',
};

const errorOf = (text: string): string => {
  const result = decodeSharedDrivesAnnotation(text);
  if (result.ok) throw new Error(`expected ${text} to be refused`);
  expect(result.error.type).toBe('MalformedAnnotation');
  return result.error.message;
};

describe('shared drives annotation', () => {
  it('is weka.io/shared-drives', () => {
    expect(SHARED_DRIVES_ANNOTATION).toBe('weka.io/shared-drives');
  });

  it('encodes the canonical form: a JSON list of objects with the type', () => {
    expect(encodeSharedDrivesAnnotation([drive])).toBe(
      '[{"physicalUUID":"fb05d910-1","serial":"S5XYNS0T1","capacityGiB":3840,"type":"TLC","devicePath":"/dev/nvme0n1"}]',
    );
  });

  it('decodes the seed’s compact form, which has no type', () => {
    const result = decodeSharedDrivesAnnotation('[["fb05d910-1", "S5XYNS0T1", 3840, "/dev/nvme0n1"]]');
    expect(result).toEqual({
      ok: true,
      drives: [{ physicalUUID: 'fb05d910-1', serial: 'S5XYNS0T1', capacityGiB: 3840, devicePath: '/dev/nvme0n1' }],
    });
  });

  it('reads back what it writes, with or without a type', () => {
    const driveArb = fc.record(
      {
        physicalUUID: fc.uuid(),
        serial: fc.string(),
        capacityGiB: fc.integer({ min: 1, max: 200_000 }),
        type: fc.constantFrom('TLC' as const, 'QLC' as const),
        devicePath: fc.string({ minLength: 1 }),
      },
      { requiredKeys: ['physicalUUID', 'serial', 'capacityGiB', 'devicePath'] },
    );
    fc.assert(
      fc.property(fc.uniqueArray(driveArb, { selector: (d) => d.physicalUUID, maxLength: 8 }), (drives) => {
        expect(decodeSharedDrivesAnnotation(encodeSharedDrivesAnnotation(drives))).toEqual({ ok: true, drives });
      }),
    );
  });

  it('ignores unknown keys so a newer writer does not break this reader', () => {
    const result = decodeSharedDrivesAnnotation(JSON.stringify([{ ...drive, firmware: '1.2' }]));
    expect(result).toEqual({ ok: true, drives: [drive] });
  });

  it.each([
    ['not JSON', '[{', 'is not JSON'],
    ['an empty string', '', 'is not JSON'],
    ['not a list', '{"a": 1}', 'must be a JSON list'],
    ['a compact entry of the wrong length', '[["u", "s", 3840]]', 'entry 0 has 3 elements'],
    ['a number entry', '[42]', 'entry 0 is neither an object nor'],
    ['a missing UUID', '[{"serial":"s","capacityGiB":1,"devicePath":"/d"}]', 'physicalUUID must be a non-empty string'],
    [
      'a capacity as a string',
      '[["u", "s", "3840", "/dev/x"]]',
      'capacityGiB must be a whole number above 0, got "3840"',
    ],
    ['a negative capacity', '[["u", "s", -1, "/dev/x"]]', 'capacityGiB must be a whole number above 0'],
    ['a fractional capacity', '[["u", "s", 1.5, "/dev/x"]]', 'capacityGiB must be a whole number above 0'],
    [
      'an unknown type',
      '[{"physicalUUID":"u","serial":"s","capacityGiB":1,"type":"SLC","devicePath":"/d"}]',
      'type must be "TLC" or "QLC", got "SLC"',
    ],
    ['a missing device path', '[["u", "s", 10, ""]]', 'devicePath must be a non-empty string'],
    ['a drive listed twice', '[["u", "s", 10, "/a"], ["u", "s", 10, "/b"]]', 'entry 1 repeats physicalUUID u'],
  ])('refuses %s with a clear message', (_name, text, expected) => {
    const message = errorOf(text);
    expect(message).toContain(expected);
    expect(message).toContain(SHARED_DRIVES_ANNOTATION);
  });

  it('never throws, whatever the text', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.json(),
          fc.jsonValue().map((value) => JSON.stringify([value])),
        ),
        (text) => {
          expect(() => decodeSharedDrivesAnnotation(text)).not.toThrow();
        },
      ),
    );
  });

  it('leads a type-ratio request on compact-form drives to a clear refusal', () => {
    const decoded = decodeSharedDrivesAnnotation(
      '[["u1", "s1", 7680, "/dev/nvme0n1"], ["u2", "s2", 7680, "/dev/nvme1n1"]]',
    );
    if (!decoded.ok) throw new Error(decoded.error.message);
    const result = allocateVirtualDrives(
      {
        physicalDrives: decoded.drives,
        claimed: [],
        request: { driveCores: 1, containerCapacity: 2000 },
        settings: DEFAULT_ALLOCATION_SETTINGS,
      },
      () => 'unused',
    );
    expect(result).toMatchObject({ ok: false, error: { type: 'InvalidDriveSharingConfig' } });
    if (!result.ok) expect(result.error.message).toContain("2 of the node's 2 shared drives have no type");
  });
});
