import type { DriveSharingResult } from '../allocation/drive-sharing.js';
import { driveSpaces } from '../allocation/drive-space.js';
import type { ContainerDriveClaims, PhysicalDrive } from '../allocation/types.js';

// `weka-drives plan --human`: one row per physical drive with its free space before the plan, what
// the plan takes, and what is left, then how each drive type was split.

const HEADERS = [
  'PHYSICAL UUID',
  'SERIAL',
  'TYPE',
  'CAPACITY',
  'FREE BEFORE',
  'TAKEN',
  'FREE AFTER',
  'NEW VDRIVES',
] as const;
const NUMERIC_FROM = 3;

export function formatPlanTable(
  physicalDrives: readonly PhysicalDrive[],
  claimed: readonly ContainerDriveClaims[],
  result: DriveSharingResult,
): string {
  const taken = new Map<string, { gib: number; count: number }>();
  for (const vd of result.ok ? result.virtualDrives : []) {
    const entry = taken.get(vd.physicalUUID) ?? { gib: 0, count: 0 };
    taken.set(vd.physicalUUID, { gib: entry.gib + vd.capacityGiB, count: entry.count + 1 });
  }
  const freeBefore = new Map(
    driveSpaces(physicalDrives, claimed).map((space) => [space.drive.physicalUUID, space.availableGiB]),
  );
  const totals = { capacity: 0, before: 0, taken: 0, count: 0 };
  const rows = physicalDrives.map((drive) => {
    const before = freeBefore.get(drive.physicalUUID) ?? 0;
    const plan = taken.get(drive.physicalUUID) ?? { gib: 0, count: 0 };
    totals.capacity += drive.capacityGiB;
    totals.before += before;
    totals.taken += plan.gib;
    totals.count += plan.count;
    return [
      drive.physicalUUID,
      drive.serial,
      drive.type ?? '?',
      drive.capacityGiB,
      before,
      plan.gib,
      before - plan.gib,
      plan.count,
    ].map(String);
  });
  const totalRow = [
    'TOTAL',
    '',
    '',
    totals.capacity,
    totals.before,
    totals.taken,
    totals.before - totals.taken,
    totals.count,
  ].map(String);
  const lines = [alignColumns([[...HEADERS], ...rows, totalRow]), '', ...outcomeLines(result)];
  return `${lines.join('\n')}\n`;
}

function outcomeLines(result: DriveSharingResult): string[] {
  if (!result.ok) return [`refused (${result.error.type}): ${result.error.message}`];
  return result.summary.map((summary) => {
    const sizes = result.virtualDrives.filter((vd) => vd.type === summary.driveType).map((vd) => vd.capacityGiB);
    const drives = summary.virtualDriveCount === 1 ? 'virtual drive' : 'virtual drives';
    return `${summary.driveType}: ${summary.neededGiB} GiB as ${summary.virtualDriveCount} ${drives} by ${summary.strategy} (${sizes.join(', ')} GiB)`;
  });
}

function alignColumns(table: readonly string[][]): string {
  const widths = HEADERS.map((_, column) => Math.max(...table.map((row) => (row[column] ?? '').length)));
  return table
    .map((row) =>
      row
        .map((cell, column) =>
          column >= NUMERIC_FROM ? cell.padStart(widths[column] ?? 0) : cell.padEnd(widths[column] ?? 0),
        )
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
