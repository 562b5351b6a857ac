// Benchmark 6: what one simulated Weka command costs, run the way kwok's exec runs it in the local
// control plane: `sh` runs the tool's shim, which sends the command to the simulator's server
// (server.ts, in this process here as in the control plane's). Beside it, interleaved so load hits
// both alike, the same command as a Node.js process of its own (the simulator's bundled CLI), and a
// bare `node -e ''`: what every command paid when each one started Node.js.
// No apiserver or kwok: the exec hop through them is the same for both and is not counted.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildSimulator, simulatorArgs } from '../../deploy/local/weka-sim/bundle.js';
import { startSimulatorServer } from '../../deploy/local/weka-sim/server.js';
import { writeSimulatorShims } from '../../deploy/local/weka-sim/shims.js';
import { spread } from './report.js';

const run = promisify(execFile);

/** Commands the operator's activities run on every container, all of them reads, so repeatable. */
const COMMANDS: ReadonlyArray<readonly string[]> = [
  ['lsblk', '-J'],
  ['weka-sign-drive', 'list', '-j'],
  ['weka', 'cluster', 'container', '5', '--json'],
];

export interface SimulatorBenchResult {
  samples: number;
  /** Through the shim and the server: what the control plane runs. */
  server: { p50: number; p99: number; max: number };
  /** The bundled CLI as a process of its own, per command. */
  process: { p50: number; p99: number; max: number };
  /** Bare `node -e ''` without NODE_EXTRA_CA_CERTS: the floor of a command that starts Node.js. */
  bareNode: { p50: number; p99: number; max: number };
}

async function timed(command: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const started = process.hrtime.bigint();
  await run(command, args, { env });
  return Number(process.hrtime.bigint() - started) / 1e6;
}

export async function runSimulatorBench(o: {
  samples: number;
  log: (m: string) => void;
}): Promise<SimulatorBenchResult> {
  const dir = await mkdtemp(join(tmpdir(), 'weka-sim-bench-'));
  const shims = join(dir, 'bin');
  const built = await buildSimulator(shims);
  const server = await startSimulatorServer(shims);
  try {
    const state = join(dir, 'nodes', 'bench');
    await run(process.execPath, [
      ...simulatorArgs(built),
      '--state',
      state,
      'init-node',
      ...['/dev/nvme0n1:3840:TLC', '/dev/nvme1n1:3840:TLC', '/dev/nvme2n1:7680:QLC'].flatMap((d) => ['--device', d]),
    ]);
    await writeSimulatorShims(shims);
    const { NODE_EXTRA_CA_CERTS: _extraCAs, ...bareEnv } = process.env;
    const shimEnv = { ...bareEnv, PATH: `${shims}:${process.env['PATH'] ?? ''}`, WEKA_SIM_STATE: state };
    const times = { server: [] as number[], process: [] as number[], bareNode: [] as number[] };
    for (let i = 0; i < o.samples; i++) {
      for (const argv of COMMANDS) {
        times.server.push(await timed(join(shims, argv[0]!), argv.slice(1), shimEnv));
        const own = [...simulatorArgs(built), '--state', state, '--in-pod', '--', ...argv];
        times.process.push(await timed(process.execPath, own, bareEnv));
      }
      times.bareNode.push(await timed(process.execPath, ['-e', ''], bareEnv));
    }
    const result: SimulatorBenchResult = {
      samples: times.server.length,
      server: spread(times.server),
      process: spread(times.process),
      bareNode: spread(times.bareNode),
    };
    o.log(`   ${result.samples} commands each way (${COMMANDS.map((c) => c.join(' ')).join('; ')})`);
    return result;
  } finally {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
}
