import { describe, expect, it } from 'vitest';
import { parseCommandLine, runPlan, usageOutcome } from '../../../src/cli/plan-command.js';
import { sequentialUuids } from '../allocation/fixtures.js';

const physicalDrives = [
  { physicalUUID: 'a', serial: 'SA', capacityGiB: 20000, type: 'TLC', devicePath: '/dev/nvme0n1' },
  { physicalUUID: 'b', serial: 'SB', capacityGiB: 500, type: 'TLC', devicePath: '/dev/nvme1n1' },
  { physicalUUID: 'c', serial: 'SC', capacityGiB: 500, type: 'TLC', devicePath: '/dev/nvme2n1' },
];
const seedExample = JSON.stringify({
  physicalDrives,
  claimed: [],
  request: { driveCores: 3, containerCapacity: 21000, driveTypesRatio: { tlc: 1, qlc: 0 } },
});

describe('parseCommandLine', () => {
  it('accepts plan, with or without --human', () => {
    expect(parseCommandLine(['plan'])).toEqual({ command: 'plan', human: false });
    expect(parseCommandLine(['plan', '--human'])).toEqual({ command: 'plan', human: true });
  });

  it.each([[[]], [['apply']], [['plan', '--json']], [['--help']]])('asks for usage on %j', (args) => {
    expect(parseCommandLine(args).command).toBe('usage');
  });

  it('prints usage on stderr with exit code 1', () => {
    const outcome = usageOutcome('unknown command "apply"');
    expect(outcome.exitCode).toBe(1);
    expect(outcome.stderr).toContain('unknown command "apply"');
    expect(outcome.stderr).toContain('usage: weka-drives plan');
  });
});

describe('runPlan', () => {
  it('prints {"virtualDrives": [...]} and exits 0 when the allocation succeeds', () => {
    const outcome = runPlan(seedExample, false, sequentialUuids());
    expect(outcome.exitCode).toBe(0);
    expect(JSON.parse(outcome.stdout)).toEqual({
      virtualDrives: [
        { virtualUUID: 'vd-1', physicalUUID: 'a', capacityGiB: 20000, serial: 'SA', type: 'TLC' },
        { virtualUUID: 'vd-2', physicalUUID: 'b', capacityGiB: 500, serial: 'SB', type: 'TLC' },
        { virtualUUID: 'vd-3', physicalUUID: 'c', capacityGiB: 500, serial: 'SC', type: 'TLC' },
      ],
    });
  });

  it('prints {"error": {...}} with the error data and exits 2 when the allocation is refused', () => {
    const input = JSON.stringify({
      physicalDrives,
      request: { driveCores: 3, containerCapacity: 30000, driveTypesRatio: { tlc: 1, qlc: 0 } },
    });
    const outcome = runPlan(input, false, sequentialUuids());
    expect(outcome.exitCode).toBe(2);
    expect(JSON.parse(outcome.stdout)).toMatchObject({
      error: { type: 'InsufficientDriveCapacity', neededGiB: 30000, usableGiB: 21000 },
    });
  });

  it('exits 2 with InvalidDriveSharingConfig for a request in both modes', () => {
    const input = JSON.stringify({
      physicalDrives,
      request: { driveCores: 1, containerCapacity: 1000, numDrives: 1, driveCapacity: 500 },
    });
    const outcome = runPlan(input, false, sequentialUuids());
    expect(outcome.exitCode).toBe(2);
    expect(JSON.parse(outcome.stdout)).toMatchObject({
      error: { type: 'InvalidDriveSharingConfig', field: 'request' },
    });
  });

  it('applies the document’s settings over the operator defaults', () => {
    const input = JSON.stringify({
      physicalDrives,
      request: { driveCores: 3, containerCapacity: 21000 },
      settings: { driveTypesRatio: { tlc: 1, qlc: 0 } },
    });
    expect(runPlan(input, false, sequentialUuids()).exitCode).toBe(0);
    const withDefaults = JSON.stringify({ physicalDrives, request: { driveCores: 3, containerCapacity: 21000 } });
    expect(JSON.parse(runPlan(withDefaults, false, sequentialUuids()).stdout)).toMatchObject({
      error: { type: 'InvalidDriveSharingConfig' },
    });
  });

  it('exits 1 with a message on stderr for text that is not JSON', () => {
    const outcome = runPlan('{"physicalDrives": [', false, sequentialUuids());
    expect(outcome).toMatchObject({ exitCode: 1, stdout: '' });
    expect(outcome.stderr).toContain('stdin is not a JSON document');
  });

  it('exits 1 naming the bad field for a document of the wrong shape', () => {
    const outcome = runPlan(
      JSON.stringify({ physicalDrives: 'none', request: { driveCores: 1 } }),
      false,
      sequentialUuids(),
    );
    expect(outcome).toMatchObject({ exitCode: 1, stdout: '' });
    expect(outcome.stderr).toContain('input.physicalDrives must be a list');
  });

  it('prints a table per physical drive with --human', () => {
    const outcome = runPlan(seedExample, true, sequentialUuids());
    expect(outcome.exitCode).toBe(0);
    expect(outcome.stdout).toContain('FREE BEFORE');
    expect(outcome.stdout).toMatch(/^a\s+SA\s+TLC\s+20000\s+20000\s+20000\s+0\s+1$/m);
    expect(outcome.stdout).toContain('TLC: 21000 GiB as 3 virtual drives by fit-to-physical (20000, 500, 500 GiB)');
  });

  it('prints the refusal under the table with --human and exits 2', () => {
    const input = JSON.stringify({
      physicalDrives,
      request: { driveCores: 3, containerCapacity: 30000, driveTypesRatio: { tlc: 1, qlc: 0 } },
    });
    const outcome = runPlan(input, true, sequentialUuids());
    expect(outcome.exitCode).toBe(2);
    expect(outcome.stdout).toMatch(/^b\s+SB\s+TLC\s+500\s+500\s+0\s+500\s+0$/m);
    expect(outcome.stdout).toContain('refused (InsufficientDriveCapacity): not enough TLC capacity');
  });
});
