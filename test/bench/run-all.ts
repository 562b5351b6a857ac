// npm run bench: the operator's benchmarks, one after the other, each on its own local control
// plane, then one table (benchmark, figure, goal, met?). Not a test: a missed goal is reported,
// not failed; the exit code is non-zero only when a benchmark broke (e.g. a rollout never
// completed). See docs/performance.md for what each figure means and what limits it.
//
//   --only LIST            comma-separated: allocator, rollout, lease, crash, scale, simulator (default: all)
//   --containers N         rollout and lease baseline: drive containers (default 100)
//   --nodes M              rollout and lease baseline: nodes (default 10)
//   --rollout-drives D     rollout: virtual drives per container (default 1)
//   --lease-runs R         lease baseline: runs, each on a fresh control plane; the table gives
//                          the median and range over them, and how many met each goal (default 1)
//   --crash-samples K      crash recovery: interrupted allocations to measure (default 5)
//   --idle-containers N    scale: Ready idle containers (default 1000; 50 per node)
//   --idle-seconds S       scale: length of each idle CPU window (default 60)
//   --idle-placement P     scale: round-robin (default; each container on the next node) or
//                          node-by-node (one node filled before the next)
//   --idle-restart         scale: once idle, stop the operator, start it again and sample it too
//   --idle-deletions K     scale: idle containers deleted at the end, first Ready first: 20 one at a
//                          time, the rest in a burst (default 100)
//   --sim-samples K        simulator: rounds of its commands, each way (default 30)
//   --json FILE            also write every result as JSON
import { writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { runAllocatorBench } from './allocator.bench.js';
import { compileOperator, median, PLACEMENTS, type PlacementOrder } from './bench-env.js';
import { runCrashRecovery, summarizeCrash } from './crash-recovery.bench.js';
import { DELETE_SPACING_MS } from './evicted-deletion.js';
import { kib, mib, runIdleScale } from './idle-scale.bench.js';
import { runLeaseBaseline, type LeaseBaselineResult } from './lease-baseline.bench.js';
import { millis, overRuns, printTable, ratio, seconds, spread, type BenchRow, type OverRuns } from './report.js';
import { runRollout, type RolloutResult } from './rollout.bench.js';
import { runSimulatorBench } from './simulator.bench.js';

const BENCHMARKS = ['allocator', 'rollout', 'lease', 'crash', 'scale', 'simulator'] as const;
type Benchmark = (typeof BENCHMARKS)[number];
const HAND_OVER_GOAL_MS = 50;
const ROLLOUT_RATIO_GOAL = 5;
/** The node mutex's allocations may take at most this many times the floor's (benchmark 3). */
const FLOOR_RATIO_GOAL = 3;
const RECOVERY_GOAL_MS = 3_000;
const SIM_COMMAND_GOAL_MS = 50;

const { values } = parseArgs({
  options: {
    only: { type: 'string', default: BENCHMARKS.join(',') },
    containers: { type: 'string', default: process.env['BENCH_CONTAINERS'] ?? '100' },
    nodes: { type: 'string', default: process.env['BENCH_NODES'] ?? '10' },
    'rollout-drives': { type: 'string', default: '1' },
    'lease-runs': { type: 'string', default: '1' },
    'crash-samples': { type: 'string', default: '5' },
    'idle-containers': { type: 'string', default: process.env['BENCH_IDLE_CONTAINERS'] ?? '1000' },
    'idle-seconds': { type: 'string', default: '60' },
    'idle-deletions': { type: 'string', default: '100' },
    'idle-placement': { type: 'string', default: 'round-robin' },
    'idle-restart': { type: 'boolean', default: false },
    'sim-samples': { type: 'string', default: '30' },
    json: { type: 'string' },
  },
});

function count(name: string, text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) {
    console.error(`--${name} must be a whole number above 0, got "${text}"`);
    process.exit(2);
  }
  return n;
}
const only = values.only
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
const unknown = only.filter((b) => !(BENCHMARKS as readonly string[]).includes(b));
if (unknown.length > 0) {
  console.error(`--only: unknown benchmark(s) ${unknown.join(', ')}; choose from ${BENCHMARKS.join(', ')}`);
  process.exit(2);
}
const selected = new Set(only as Benchmark[]);
const containers = count('containers', values.containers);
const nodes = count('nodes', values.nodes);
const rolloutDrives = count('rollout-drives', values['rollout-drives']);
const leaseRuns = count('lease-runs', values['lease-runs']);
const crashSamples = count('crash-samples', values['crash-samples']);
const idleContainers = count('idle-containers', values['idle-containers']);
const idleSeconds = count('idle-seconds', values['idle-seconds']);
const idleDeletions = count('idle-deletions', values['idle-deletions']);
const idlePlacement = values['idle-placement'] as PlacementOrder;
if (!Object.hasOwn(PLACEMENTS, idlePlacement)) {
  console.error(
    `--idle-placement must be one of ${Object.keys(PLACEMENTS).join(', ')}, got "${values['idle-placement']}"`,
  );
  process.exit(2);
}
const simSamples = count('sim-samples', values['sim-samples']);

const log = (m: string): void => console.log(m);
const load = (): string =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ');
const rows: BenchRow[] = [];
const results: Record<string, unknown> = {};
const broken: string[] = [];
const startLoad = load();

async function bench<T>(
  name: Benchmark,
  title: string,
  work: () => Promise<T>,
  report: (r: T) => void,
): Promise<T | undefined> {
  if (!selected.has(name)) return undefined;
  log(`\n== ${title} (load average 1/5/15 min: ${load()})`);
  const started = Date.now();
  try {
    const result = await work();
    // A benchmark run several times keeps every run; once, the run itself (as before --lease-runs).
    results[name] = Array.isArray(result) && result.length === 1 ? result[0] : result;
    report(result);
    log(`   (${Math.round((Date.now() - started) / 1000)} s)`);
    return result;
  } catch (err) {
    broken.push(name);
    log(`   FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    rows.push({ benchmark: title, figure: 'FAILED (see above)', goal: '', met: false });
    return undefined;
  }
}

if ([...selected].some((b) => b !== 'allocator' && b !== 'simulator')) await compileOperator();

await bench(
  'allocator',
  '1. allocator',
  async () => runAllocatorBench((line) => log(`   ${line.trimEnd()}`)),
  (r) => {
    for (const s of r.scenarios)
      rows.push({
        benchmark: `1. allocator: ${s.name}`,
        figure: `p50 ${(s.p50Ms * 1000).toFixed(0)} µs, p99 ${(s.p99Ms * 1000).toFixed(0)} µs`,
        goal: `p50 < ${r.goalP50Ms} ms`,
        met: s.p50Ms < r.goalP50Ms,
      });
  },
);

const rollout = await bench(
  'rollout',
  `2. rollout, ${containers} containers of ${rolloutDrives} virtual drive${rolloutDrives > 1 ? 's' : ''} over ${nodes} nodes`,
  () => runRollout({ containers, nodes, drives: rolloutDrives, log }),
  (r: RolloutResult) => {
    log(
      `   total ${seconds(r.totalMs)}, ${r.perSecond.toFixed(2)} containers/s; creation to Ready per container p50 ${seconds(r.readyLatency.p50)}, p99 ${seconds(r.readyLatency.p99)}`,
    );
    log(
      `   hand-over, allocation to allocation: n=${r.allocationHandOvers.n} p50 ${millis(r.allocationHandOvers.p50)} p99 ${millis(r.allocationHandOvers.p99)} max ${millis(r.allocationHandOvers.max)}`,
    );
    log(
      `   hand-over, any two decisions:        n=${r.allHandOvers.n} p50 ${millis(r.allHandOvers.p50)} p99 ${millis(r.allHandOvers.p99)} max ${millis(r.allHandOvers.max)}`,
    );
    log(
      `   allocation to allocation, write to write at the apiserver: n=${r.writeToWrite.n} p50 ${millis(r.writeToWrite.p50)} p99 ${millis(r.writeToWrite.p99)} max ${millis(r.writeToWrite.max)}`,
    );
    const scheduled = spread(r.handOvers.map((h) => h.toScheduledMs));
    log(
      `   (ending at the next activity's scheduling instead of its start: p50 ${millis(scheduled.p50)} p99 ${millis(scheduled.p99)})`,
    );
    log(
      `   operator CPU per container, create to Ready: ${r.cpuSecondsPerContainer.toFixed(3)} s; history events per container workflow at Ready: p50 ${r.historyEvents.p50}, max ${r.historyEvents.max}`,
    );
    rows.push({
      benchmark: '2. rollout: total, CR creation to all Ready',
      figure: `${seconds(r.totalMs)} (${r.perSecond.toFixed(2)} containers/s)`,
      goal: '-',
    });
    rows.push({
      benchmark: '2. rollout: operator CPU per container lifecycle, create to Ready',
      figure: `${r.cpuSecondsPerContainer.toFixed(3)} CPU-s`,
      goal: '-',
    });
    rows.push({
      benchmark: `2. rollout: history events per container workflow at Ready (${r.drives} virtual drive${r.drives > 1 ? 's' : ''})`,
      figure: `p50 ${r.historyEvents.p50}, max ${r.historyEvents.max}`,
      goal: '-',
    });
    rows.push({
      benchmark: '2. rollout: per-node hand-over between allocation decisions',
      figure: `p50 ${millis(r.allocationHandOvers.p50)}, p99 ${millis(r.allocationHandOvers.p99)} (n=${r.allocationHandOvers.n})`,
      goal: `p50 < ${HAND_OVER_GOAL_MS} ms`,
      met: r.allocationHandOvers.p50 < HAND_OVER_GOAL_MS,
    });
    rows.push({
      benchmark: '2. rollout: per-node allocation to allocation, write to write',
      figure: `p50 ${millis(r.writeToWrite.p50)}, p99 ${millis(r.writeToWrite.p99)} (n=${r.writeToWrite.n})`,
      goal: `p50 < ${HAND_OVER_GOAL_MS} ms`,
      met: r.writeToWrite.p50 < HAND_OVER_GOAL_MS,
    });
  },
);

/** One run of the baseline pair, as printed after it. */
function printLeaseRun(r: LeaseBaselineResult): void {
  const side = (name: string, s: LeaseBaselineResult['mutex']) =>
    `   ${name.padEnd(22)} total ${seconds(s.totalMs).padStart(8)}  ${s.perSecond.toFixed(2).padStart(6)} allocations/s   hand-over p50 ${millis(s.handOver.p50).padStart(8)}  p99 ${millis(s.handOver.p99).padStart(8)}  (n=${s.handOver.n})`;
  log(side('node mutex (Temporal)', r.mutex));
  if (r.mutex.perDecision)
    log(
      `   node mutex: allocations per decision p50 ${r.mutex.perDecision.p50}, max ${r.mutex.perDecision.max} (${r.mutex.perDecision.n} decisions)`,
    );
  log(side('Lease (seed 002)', r.lease));
  log(side('floor (in-memory locks)', r.floor));
  if (r.floor.perDecision)
    log(
      `   floor: allocations per decision p50 ${r.floor.perDecision.p50}, max ${r.floor.perDecision.max} (${r.floor.perDecision.n} decisions)`,
    );
  const writes = (name: string, w: LeaseBaselineResult['mutex']['writeToWrite']) =>
    `${name} p50 ${millis(w.p50).padStart(8)}  p99 ${millis(w.p99).padStart(8)}  (n=${w.n})`;
  log(
    `   allocation to allocation on a node, write to write at the apiserver: ${writes('mutex', r.mutex.writeToWrite)}; ${writes('Lease', r.lease.writeToWrite)}; ${writes('floor', r.floor.writeToWrite)}`,
  );
  log(
    `   ratio lease / mutex: total ${ratio(r.lease.totalMs / r.mutex.totalMs)}, hand-over p50 ${ratio(r.lease.handOver.p50 / r.mutex.handOver.p50)}, write to write p50 ${ratio(r.lease.writeToWrite.p50 / r.mutex.writeToWrite.p50)}`,
  );
  log(
    `   ratio to the floor, total: mutex / floor ${ratio(r.mutex.totalMs / r.floor.totalMs)} (goal at most ${FLOOR_RATIO_GOAL}x), Lease / floor ${ratio(r.lease.totalMs / r.floor.totalMs)}`,
  );
}

/** A figure for the table: one run's value as is, several runs' as median, range and goal count. */
function figureOverRuns(o: OverRuns, format: (v: number) => string, goal?: string): string {
  if (o.n === 1) return format(o.median);
  return `median ${format(o.median)} (${format(o.min)}-${format(o.max)})${goal === undefined ? '' : `, ${o.met} of ${o.n} runs ${goal}`}`;
}

const leaseTitle = `3. baseline: ${containers} allocations over ${nodes} nodes, node mutex vs per-node Lease vs in-memory floor${leaseRuns > 1 ? `, ${leaseRuns} runs` : ''}`;
await bench(
  'lease',
  leaseTitle,
  async () => {
    const runs: LeaseBaselineResult[] = [];
    for (let i = 1; i <= leaseRuns; i++) {
      if (leaseRuns > 1) log(`-- run ${i} of ${leaseRuns} (load average 1/5/15 min: ${load()})`);
      const run = await runLeaseBaseline({ containers, nodes, log });
      printLeaseRun(run);
      runs.push(run);
    }
    return runs;
  },
  (runs) => {
    const mutexTotal = overRuns(
      runs.map((r) => r.mutex.totalMs),
      () => true,
    );
    const leaseTotal = overRuns(
      runs.map((r) => r.lease.totalMs),
      () => true,
    );
    const handOver = overRuns(
      runs.map((r) => r.mutex.handOver.p50),
      (p50) => p50 < HAND_OVER_GOAL_MS,
    );
    const leaseHandOver = overRuns(
      runs.map((r) => r.lease.handOver.p50),
      () => true,
    );
    const totalRatio = overRuns(
      runs.map((r) => r.lease.totalMs / r.mutex.totalMs),
      (x) => x >= ROLLOUT_RATIO_GOAL,
    );
    const handOverRatio = overRuns(
      runs.map((r) => r.lease.handOver.p50 / r.mutex.handOver.p50),
      () => true,
    );
    const writeToWrite = overRuns(
      runs.map((r) => r.mutex.writeToWrite.p50),
      (p50) => p50 < HAND_OVER_GOAL_MS,
    );
    const leaseWriteToWrite = overRuns(
      runs.map((r) => r.lease.writeToWrite.p50),
      () => true,
    );
    const writeToWriteRatio = overRuns(
      runs.map((r) => r.lease.writeToWrite.p50 / r.mutex.writeToWrite.p50),
      () => true,
    );
    const floorTotal = overRuns(
      runs.map((r) => r.floor.totalMs),
      () => true,
    );
    const floorHandOver = overRuns(
      runs.map((r) => r.floor.handOver.p50),
      () => true,
    );
    const floorWriteToWrite = overRuns(
      runs.map((r) => r.floor.writeToWrite.p50),
      () => true,
    );
    const mutexToFloor = overRuns(
      runs.map((r) => r.mutex.totalMs / r.floor.totalMs),
      (x) => x <= FLOOR_RATIO_GOAL,
    );
    const leaseToFloor = overRuns(
      runs.map((r) => r.lease.totalMs / r.floor.totalMs),
      () => true,
    );
    if (runs.length > 1) {
      log(
        `   over ${runs.length} runs: mutex total ${figureOverRuns(mutexTotal, seconds)}; Lease total ${figureOverRuns(leaseTotal, seconds)}`,
      );
      log(
        `   ratio lease / mutex, total: ${figureOverRuns(totalRatio, ratio, `at ${ROLLOUT_RATIO_GOAL}x or more`)}; mutex hand-over p50 ${figureOverRuns(handOver, millis, `under ${HAND_OVER_GOAL_MS} ms`)}`,
      );
      log(
        `   allocation to allocation, write to write p50: mutex ${figureOverRuns(writeToWrite, millis, `under ${HAND_OVER_GOAL_MS} ms`)}; Lease ${figureOverRuns(leaseWriteToWrite, millis)}; floor ${figureOverRuns(floorWriteToWrite, millis)}`,
      );
      log(
        `   floor total ${figureOverRuns(floorTotal, seconds)}; mutex / floor ${figureOverRuns(mutexToFloor, ratio, `at ${FLOOR_RATIO_GOAL}x or less`)}; Lease / floor ${figureOverRuns(leaseToFloor, ratio)}`,
      );
    }
    // A goal over several runs is met when the median run meets it; the figure says how many did.
    rows.push({
      benchmark: '3. allocations only: node mutex, total',
      figure: `${figureOverRuns(mutexTotal, seconds)}, hand-over between decisions p50 ${figureOverRuns(handOver, millis, `under ${HAND_OVER_GOAL_MS} ms`)}`,
      goal: `p50 < ${HAND_OVER_GOAL_MS} ms`,
      met: handOver.median < HAND_OVER_GOAL_MS,
    });
    rows.push({
      benchmark: '3. allocations only: node mutex, allocation to allocation',
      figure: `write to write p50 ${figureOverRuns(writeToWrite, millis, `under ${HAND_OVER_GOAL_MS} ms`)}`,
      goal: `p50 < ${HAND_OVER_GOAL_MS} ms`,
      met: writeToWrite.median < HAND_OVER_GOAL_MS,
    });
    rows.push({
      benchmark: '3. allocations only: Lease baseline, total',
      figure: `${figureOverRuns(leaseTotal, seconds)}, hand-over p50 ${figureOverRuns(leaseHandOver, millis)}, write to write p50 ${figureOverRuns(leaseWriteToWrite, millis)}`,
      goal: '-',
    });
    rows.push({
      benchmark: '3. ratio lease / mutex, allocations only',
      figure: `total ${figureOverRuns(totalRatio, ratio, `at ${ROLLOUT_RATIO_GOAL}x or more`)}, hand-over p50 ${figureOverRuns(handOverRatio, ratio)}, write to write p50 ${figureOverRuns(writeToWriteRatio, ratio)}`,
      goal: `total >= ${ROLLOUT_RATIO_GOAL}x`,
      met: totalRatio.median >= ROLLOUT_RATIO_GOAL,
    });
    rows.push({
      benchmark: '3. allocations only: floor (in-memory lock per node, no Temporal), total',
      figure: `${figureOverRuns(floorTotal, seconds)}, hand-over p50 ${figureOverRuns(floorHandOver, millis)}, write to write p50 ${figureOverRuns(floorWriteToWrite, millis)}`,
      goal: '-',
    });
    rows.push({
      benchmark: '3. ratio mutex / floor, allocations only',
      figure: `total ${figureOverRuns(mutexToFloor, ratio, `at ${FLOOR_RATIO_GOAL}x or less`)} (Lease / floor: ${figureOverRuns(leaseToFloor, ratio)})`,
      goal: `mutex total <= ${FLOOR_RATIO_GOAL}x floor`,
      met: mutexToFloor.median <= FLOOR_RATIO_GOAL,
    });
    if (rollout) {
      rows.push({
        benchmark: '3. ratio lease allocations only / full mutex rollout',
        figure: `${(leaseTotal.median / rollout.totalMs).toFixed(2)}x (the rollout also runs pods and Weka calls)`,
        goal: '-',
      });
    }
  },
);

await bench(
  'crash',
  `4. crash recovery, ${crashSamples} SIGKILLs during an allocation`,
  () => runCrashRecovery({ samples: crashSamples, log }),
  (r) => {
    if (r.samples.length === 0) throw new Error(`no allocation was interrupted in ${r.missed} attempts`);
    const s = summarizeCrash(r);
    const sinceKill = r.samples.map((x) => x.sinceKillMs);
    const restart = r.samples.map((x) => x.restartMs);
    log(
      `   "worker running" to allocated: min ${millis(s.min)}, median ${millis(s.median)}, max ${millis(s.max)} (${r.samples.length} samples, ${r.missed} attempts not counted)`,
    );
    log(
      `   restart (spawn to "worker running"): ${restart.map(millis).join(', ')}; kill to allocated: ${sinceKill.map(millis).join(', ')}`,
    );
    rows.push({
      benchmark: '4. crash recovery: restart ("worker running") to allocated',
      figure: `min ${seconds(s.min)}, median ${seconds(s.median)}, max ${seconds(s.max)}`,
      goal: `< ${RECOVERY_GOAL_MS / 1000} s`,
      met: s.max < RECOVERY_GOAL_MS,
    });
    rows.push({
      benchmark: '4. crash recovery: SIGKILL to allocated (issue 25, goal 5)',
      figure: `min ${seconds(Math.min(...sinceKill))}, median ${seconds(median(sinceKill))}, max ${seconds(Math.max(...sinceKill))}`,
      goal: `p50 < ${RECOVERY_GOAL_MS / 1000} s`,
      met: median(sinceKill) < RECOVERY_GOAL_MS,
    });
    rows.push({
      benchmark: '4. baseline: Lease holder killed, to next holder',
      figure: `min ${seconds(Math.min(...r.leaseTakeoverMs))}, max ${seconds(Math.max(...r.leaseTakeoverMs))}`,
      goal: '-',
    });
  },
);

await bench(
  'scale',
  `5. scale, ${idleContainers} Ready idle container workflows`,
  () =>
    runIdleScale({
      containers: idleContainers,
      idleSeconds,
      deletions: { isolated: Math.min(20, idleDeletions), burst: Math.max(0, idleDeletions - 20) },
      placement: idlePlacement,
      restartWhenIdle: values['idle-restart'],
      log,
    }),
  (r) => {
    log(
      `   ${r.containers} containers on ${r.nodes} nodes (${r.placement}) Ready in ${seconds(r.rolloutMs)}, at most ${r.maxConcurrentBringUps} brought up at once`,
    );
    log(`   local activity results dropped by evictions during the rollout: ${r.droppedLocalActivityResults}`);
    log(
      `   operator before: RSS ${mib(r.before.rssBytes)}, heap ${mib(r.before.heapUsedBytes)}, idle CPU ${r.before.cpuSecondsPerMinute.toFixed(2)} s/min`,
    );
    log(
      `   operator after:  RSS ${mib(r.after.rssBytes)}, heap ${mib(r.after.heapUsedBytes)}, idle CPU ${r.after.cpuSecondsPerMinute.toFixed(2)} s/min`,
    );
    log(`   per workflow: RSS ${kib(r.rssPerWorkflowBytes)}`);
    if (r.restarted)
      log(
        `   operator restarted once idle (ready ${seconds(r.restarted.stopToReadyMs)} after the stop): RSS ${mib(r.restarted.rssBytes)}, heap ${mib(r.restarted.heapUsedBytes)}, idle CPU ${r.restarted.cpuSecondsPerMinute.toFixed(2)} s/min`,
      );
    log(`   workflows cached when idle: ${r.cachedWorkflows} (each worker keeps at most ${r.maxCachedWorkflows})`);
    const sp = (x: { p50Ms: number; p99Ms: number }) => `p50 ${millis(x.p50Ms)}, p99 ${millis(x.p99Ms)}`;
    for (const [how, d] of [
      ['one at a time', r.deletion.isolated],
      [`in a burst, ${1000 / DELETE_SPACING_MS} a second`, r.deletion.burst],
    ] as const) {
      const b = d.breakdown;
      log(
        `   ${d.deleted} deleted ${how} (${d.cacheMisses} cache misses): teardown started ${sp(d)}, max ${millis(d.teardownStartMs.at(-1) ?? Number.NaN)}`,
      );
      log(
        `     of which (${b.samples} histories): delete to signal ${sp(b.signalled)}; signal to its workflow task ${sp(b.taskStarted)}; task to Deleting seen ${sp(b.applied)}`,
      );
    }
    log(
      '   each deleted one at a time, ms after its delete: signal, task started, task completed (its marker), Deleting seen | operator:',
    );
    r.deletion.isolated.each.forEach((d, i) => {
      const at = (v: number | undefined) => (v === undefined ? '-' : String(v));
      log(
        `     ${i + 1}. ${d.name}: ${at(d.signalledMs)}, ${at(d.taskStartedMs)}, ${at(d.markerMs)}, ${d.seenMs} | event loop max ${d.eventLoopMaxMs}, replay ${d.replayMs}, workflow tasks ${d.workflowTaskMs}, local activities ${d.localActivityMs}`,
      );
      for (const line of d.operatorLog ?? []) log(`        ${line.slice(0, 300)}`);
    });
    log(`   deleted containers gone: p50 ${seconds(r.deletion.goneP50Ms)}, max ${seconds(r.deletion.goneMaxMs)}`);
    rows.push({
      benchmark: `5. scale: operator with ${r.containers} idle Ready workflows`,
      figure: `RSS ${mib(r.after.rssBytes)} (${kib(r.rssPerWorkflowBytes)}/workflow), idle CPU ${r.after.cpuSecondsPerMinute.toFixed(2)} s/min`,
      goal: 'RSS at most 400 MiB at 10,000',
      ...(r.containers >= 10_000 ? { met: r.after.rssBytes <= 400 * 2 ** 20 } : {}),
    });
    if (r.restarted)
      rows.push({
        benchmark: `5. scale: the same operator restarted once idle, ${r.containers} idle Ready workflows`,
        figure: `RSS ${mib(r.restarted.rssBytes)}, idle CPU ${r.restarted.cpuSecondsPerMinute.toFixed(2)} s/min`,
        goal: '-',
      });
    const { isolated, burst } = r.deletion;
    rows.push({
      benchmark: `5. scale: deletion of an evicted idle container to its teardown's start, one at a time (${isolated.deleted})`,
      figure: sp(isolated),
      goal: 'p99 at most 2 s',
      met: isolated.p99Ms <= 2_000,
    });
    rows.push({
      benchmark: `5. scale: the same, ${burst.deleted} deleted in a burst`,
      figure: sp(burst),
      goal: '-',
    });
  },
);

await bench(
  'simulator',
  '6. one simulated Weka command, through its shim',
  () => runSimulatorBench({ samples: simSamples, log }),
  (r) => {
    const line = (s: { p50: number; p99: number; max: number }) =>
      `p50 ${millis(s.p50)}, p99 ${millis(s.p99)}, max ${millis(s.max)}`;
    log(`   through the server: ${line(r.server)}`);
    log(`   a Node.js process per command: ${line(r.process)}`);
    log(`   bare node -e '': ${line(r.bareNode)}`);
    rows.push({
      benchmark: '6. simulated Weka command, through the server',
      figure: `p50 ${millis(r.server.p50)}, p99 ${millis(r.server.p99)} (a process per command: p50 ${millis(r.process.p50)}; bare Node.js p50 ${millis(r.bareNode.p50)})`,
      goal: `p50 < ${SIM_COMMAND_GOAL_MS} ms`,
      met: r.server.p50 < SIM_COMMAND_GOAL_MS,
    });
  },
);

log(`\nload average 1/5/15 min: at start ${startLoad}, at end ${load()} (2 cores)\n`);
log(printTable(rows));
if (values.json)
  await writeFile(values.json, JSON.stringify({ load: { start: startLoad, end: load() }, results }, null, 2));
if (broken.length > 0) {
  console.error(`\nbroken: ${broken.join(', ')}`);
  process.exitCode = 1;
}
// Temporal's native connection and leftover sockets must not keep the process up after the table.
process.exit();
