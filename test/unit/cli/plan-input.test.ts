import { describe, expect, it } from 'vitest';
import { parsePlanInput } from '../../../src/cli/plan-input.js';

const physicalDrive = { physicalUUID: 'p1', serial: 's1', capacityGiB: 7680, type: 'TLC', devicePath: '/dev/nvme0n1' };
const virtualDrive = { virtualUUID: 'v1', physicalUUID: 'p1', capacityGiB: 1000, serial: 's1', type: 'TLC' };
const valid = {
  physicalDrives: [physicalDrive],
  claimed: [{ container: 'ns/c1', virtualDrives: [virtualDrive] }],
  request: { driveCores: 2, containerCapacity: 4000, driveTypesRatio: { tlc: 1, qlc: 0 } },
  settings: { maxVirtualDrivesPerCore: 4, enforceMinDrivesPerTypePerCore: false },
};

const messageFor = (document: unknown): string => {
  const result = parsePlanInput(document);
  if (result.ok) throw new Error('expected the document to be refused');
  return result.message;
};

describe('parsePlanInput', () => {
  it('reads a complete document', () => {
    expect(parsePlanInput(valid)).toEqual({ ok: true, input: valid });
  });

  it('treats claimed and settings as optional', () => {
    expect(
      parsePlanInput({ physicalDrives: [], request: { driveCores: 1, numDrives: 1, driveCapacity: 500 } }),
    ).toEqual({
      ok: true,
      input: {
        physicalDrives: [],
        claimed: [],
        request: { driveCores: 1, numDrives: 1, driveCapacity: 500 },
        settings: {},
      },
    });
  });

  it('accepts a physical drive without a type, as the compact annotation gives it', () => {
    const { type: _type, ...untyped } = physicalDrive;
    const result = parsePlanInput({ ...valid, physicalDrives: [untyped] });
    expect(result.ok && result.input.physicalDrives).toEqual([untyped]);
  });

  it('accepts a claimed virtual drive without serial and type, as the status may record it', () => {
    const { serial: _serial, type: _type, ...bare } = virtualDrive;
    const result = parsePlanInput({ ...valid, claimed: [{ container: 'ns/c', virtualDrives: [bare] }] });
    expect(result.ok && result.input.claimed).toEqual([{ container: 'ns/c', virtualDrives: [bare] }]);
  });

  it('leaves value checks to the allocator: a capacity of 0 is read as given', () => {
    const result = parsePlanInput({ ...valid, request: { driveCores: 1, containerCapacity: 0 } });
    expect(result.ok && result.input.request).toEqual({ driveCores: 1, containerCapacity: 0 });
  });

  it.each([
    ['a list instead of an object', [], 'input must be an object'],
    ['missing physicalDrives', { request: valid.request }, 'input.physicalDrives must be a list, but it is missing'],
    [
      'a capacity as a string',
      { ...valid, physicalDrives: [{ ...physicalDrive, capacityGiB: '7680' }] },
      'input.physicalDrives[0].capacityGiB must be a number, but got "7680"',
    ],
    [
      'an unknown drive type',
      { ...valid, physicalDrives: [{ ...physicalDrive, type: 'SLC' }] },
      'input.physicalDrives[0].type must be "TLC" or "QLC"',
    ],
    [
      'a typo in a request field',
      { ...valid, request: { drivecores: 2 } },
      'input.request.drivecores is not a known field',
    ],
    [
      'a missing driveCores',
      { ...valid, request: { containerCapacity: 10 } },
      'input.request.driveCores must be a number, but it is missing',
    ],
    [
      'a ratio without qlc',
      { ...valid, request: { driveCores: 1, containerCapacity: 10, driveTypesRatio: { tlc: 1 } } },
      'input.request.driveTypesRatio.qlc must be a number',
    ],
    [
      'a claimed virtual drive without a UUID',
      { ...valid, claimed: [{ container: 'ns/c', virtualDrives: [{ ...virtualDrive, virtualUUID: 7 }] }] },
      'input.claimed[0].virtualDrives[0].virtualUUID must be a string',
    ],
    [
      'enforce as a string',
      { ...valid, settings: { enforceMinDrivesPerTypePerCore: 'false' } },
      'input.settings.enforceMinDrivesPerTypePerCore must be true or false',
    ],
    [
      'an unknown top-level field',
      { ...valid, node: 'n1' },
      'input.node is not a known field (known: physicalDrives, claimed, request, settings)',
    ],
  ])('refuses %s, naming the field', (_name, document, expected) => {
    expect(messageFor(document)).toContain(expected);
  });
});
