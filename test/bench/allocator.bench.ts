// Benchmark 1 (npm run bench:allocator, or part of npm run bench): p50/p99 per allocateVirtualDrives
// call on a worst-case node (24 physical drives, 8 drive cores, 500 virtual drives already claimed).
// Goal: p50 under 1 ms. Run alone, it exits 1 when a scenario misses it, so the number cannot
// silently regress.
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import {
  allocateVirtualDrives,
  type ContainerDriveClaims,
  DEFAULT_ALLOCATION_SETTINGS,
  type DriveSharingInput,
  type DriveType,
  type PhysicalDrive,
} from '../../src/allocation/index.js';

const WARM_UP = 300;
const ITERATIONS = 5000;
const GOAL_P50_MS = 1;
const CLAIMED_VIRTUAL_DRIVES = 500;

function drives(): PhysicalDrive[] {
  return Array.from({ length: 24 }, (_, i) => {
    const type: DriveType = i < 8 ? 'TLC' : 'QLC';
    return {
      physicalUUID: `phys-${String(i).padStart(2, '0')}`,
      serial: `SN${i}`,
      capacityGiB: type === 'TLC' ? 15360 : 61440,
      type,
      devicePath: `/dev/nvme${i}n1`,
    };
  });
}

/** 500 virtual drives spread over the physical drives, leaving each with `freeOf(drive)` GiB. */
function claimsLeaving(
  physical: readonly PhysicalDrive[],
  freeOf: (drive: PhysicalDrive, index: number) => number,
): ContainerDriveClaims[] {
  const perDrive = Math.floor(CLAIMED_VIRTUAL_DRIVES / physical.length);
  const extra = CLAIMED_VIRTUAL_DRIVES % physical.length;
  const claims: ContainerDriveClaims[] = [];
  physical.forEach((drive, i) => {
    const count = perDrive + (i < extra ? 1 : 0);
    const toClaim = drive.capacityGiB - freeOf(drive, i);
    claims.push({
      container: `ns-${i % 7}/drive-${i}`,
      virtualDrives: Array.from({ length: count }, (_, j) => ({
        virtualUUID: `claimed-${i}-${j}`,
        physicalUUID: drive.physicalUUID,
        capacityGiB: Math.floor(toClaim / count) + (j < toClaim % count ? 1 : 0),
        serial: drive.serial,
        type: drive.type ?? 'TLC',
      })),
    });
  });
  return claims;
}

const physical = drives();
// One roomy drive per type, every other drive down to 385 GiB free: too little for any even share,
// so each type runs through every even split (n = 8 .. 44 for TLC) before fit-to-physical.
const fragmented = claimsLeaving(physical, (_drive, i) => (i === 0 ? 15000 : i === 8 ? 60000 : 385));
const scenarios: { name: string; input: DriveSharingInput; expect: 'ok' | 'refused' }[] = [
  {
    name: 'even distribution, TLC + QLC at the default ratio 1:10',
    input: {
      physicalDrives: physical,
      claimed: claimsLeaving(physical, (drive) => (drive.type === 'TLC' ? 4000 : 16000)),
      request: { driveCores: 8, containerCapacity: 88000 },
      settings: DEFAULT_ALLOCATION_SETTINGS,
    },
    expect: 'ok',
  },
  {
    name: 'fit-to-physical for both types after every even split fails',
    input: {
      physicalDrives: physical,
      claimed: fragmented,
      request: { driveCores: 8, containerCapacity: 77000, driveTypesRatio: { tlc: 16, qlc: 61 } },
      settings: DEFAULT_ALLOCATION_SETTINGS,
    },
    expect: 'ok',
  },
  {
    name: 'refused: TLC fits only by fit-to-physical, then QLC fits nowhere',
    input: {
      physicalDrives: physical,
      claimed: fragmented,
      request: { driveCores: 8, containerCapacity: 86000, driveTypesRatio: { tlc: 16, qlc: 70 } },
      settings: DEFAULT_ALLOCATION_SETTINGS,
    },
    expect: 'refused',
  },
];

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

export interface AllocatorScenarioResult {
  name: string;
  outcome: string;
  p50Ms: number;
  p99Ms: number;
}

/** Runs every scenario; `log` gets the same lines the standalone script prints. */
export function runAllocatorBench(log: (line: string) => void): {
  scenarios: AllocatorScenarioResult[];
  goalP50Ms: number;
} {
  const results: AllocatorScenarioResult[] = [];
  log(
    `allocateVirtualDrives: 24 physical drives, 8 drive cores, ${CLAIMED_VIRTUAL_DRIVES} claimed virtual drives, ${ITERATIONS} calls each\n`,
  );
  for (const scenario of scenarios) {
    const first = allocateVirtualDrives(scenario.input, randomUUID);
    if ((first.ok ? 'ok' : 'refused') !== scenario.expect)
      throw new Error(`${scenario.name}: expected ${scenario.expect}, got ${JSON.stringify(first)}`);
    for (let i = 0; i < WARM_UP; i++) allocateVirtualDrives(scenario.input, randomUUID);
    const samples: number[] = [];
    for (let i = 0; i < ITERATIONS; i++) {
      const start = performance.now();
      allocateVirtualDrives(scenario.input, randomUUID);
      samples.push(performance.now() - start);
    }
    samples.sort((a, b) => a - b);
    const p50 = percentile(samples, 50);
    const p99 = percentile(samples, 99);
    const outcome = first.ok
      ? first.summary.map((s) => `${s.driveType} ${s.strategy} x${s.virtualDriveCount}`).join(', ')
      : first.error.type;
    results.push({ name: scenario.name, outcome, p50Ms: p50, p99Ms: p99 });
    log(`${scenario.name}\n  -> ${outcome}\n  p50 ${(p50 * 1000).toFixed(1)} µs   p99 ${(p99 * 1000).toFixed(1)} µs\n`);
  }
  return { scenarios: results, goalP50Ms: GOAL_P50_MS };
}

// Run directly (npm run bench:allocator): print, and exit 1 when a scenario misses the goal.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { scenarios: results } = runAllocatorBench((line) => console.log(line));
  const missed = results.some((r) => r.p50Ms >= GOAL_P50_MS);
  console.log(missed ? `FAIL: a p50 is ${GOAL_P50_MS} ms or more` : `ok: every p50 is under ${GOAL_P50_MS} ms`);
  if (missed) process.exitCode = 1;
}
