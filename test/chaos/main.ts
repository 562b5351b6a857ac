// The long chaos profile: `npm run chaos -- --minutes N` runs rounds of pressure rollouts under
// storms of every fault class for N minutes (60 unless given), on a control plane of its own, and
// prints per fault class how many were injected and survived, the invariant checks made, and every
// violation. Exits 1 on a violation (the evidence is kept; its directory is printed), 2 on bad
// options. `--seed S` (or CHAOS_SEED) replays a run's choices; `--faults a,b` draws from those
// classes only; `--per-storm N` sets the faults per storm (3 unless given).
import { parseArgs } from 'node:util';
import { chaosSeed } from '../support/random.js';
import { runChaos, reportTable } from './engine.js';
import { FAULT_CLASSES, type FaultClass } from './faults.js';

function options(): { minutes: number; seed: number; faults: FaultClass[]; perStorm: number } {
  const { values } = parseArgs({
    options: {
      minutes: { type: 'string', default: '60' },
      seed: { type: 'string' },
      faults: { type: 'string' },
      'per-storm': { type: 'string', default: '3' },
    },
  });
  const minutes = Number(values.minutes);
  if (!(minutes > 0)) throw new Error(`--minutes must be a positive number, got "${values.minutes}"`);
  const perStorm = Number(values['per-storm']);
  if (!Number.isInteger(perStorm) || perStorm < 0)
    throw new Error(`--per-storm must be a whole number, got "${values['per-storm']}"`);
  const faults = (values.faults?.split(',') ?? [...FAULT_CLASSES]).map((f) => f.trim());
  const unknown = faults.filter((f) => !(FAULT_CLASSES as readonly string[]).includes(f));
  if (unknown.length > 0)
    throw new Error(`unknown fault classes ${unknown.join(', ')}; known: ${FAULT_CLASSES.join(', ')}`);
  const seed = chaosSeed(values.seed === undefined ? process.env : { CHAOS_SEED: values.seed });
  return { minutes, seed, faults: faults as FaultClass[], perStorm };
}

let o: ReturnType<typeof options>;
try {
  o = options();
} catch (err) {
  console.error(`chaos: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(2);
}
console.log(
  `chaos: seed ${o.seed} (replay with --seed ${o.seed}), ${o.minutes} minutes, faults: ${o.faults.join(', ')}`,
);
const report = await runChaos({
  minutes: o.minutes,
  seed: o.seed,
  faults: o.faults,
  faultsPerStorm: o.perStorm,
  log: (m) => console.log(m),
});
console.log(reportTable(report));
process.exit(report.violations.length === 0 ? 0 : 1);
