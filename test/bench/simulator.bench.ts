// Benchmark 6: what one simulated Weka command costs, run the way kwok's exec runs it in the local
// control plane: `sh` runs the tool's shim, which starts Node.js on the simulator. Two ways side by
// side, interleaved so load hits both alike: the single-file bundle (what the control plane runs) and
// the ES modules tsc compiles the simulator to (here, into a scratch folder: the project's build
// leaves the simulator out), which the bundle saves resolving and compiling.
// No servers: the exec hop through kwok is the same for both and is not counted.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { buildSimulator, simulatorArgs } from '../../deploy/local/weka-sim/bundle.js';
import { writeSimulatorShims } from '../../deploy/local/weka-sim/shims.js';
import { spread } from './report.js';

const run = promisify(execFile);
const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The simulator compiled by tsc into `dir` as ES modules, with the build's options; its main. */
async function compileSimulatorModules(dir: string): Promise<string> {
  const out = join(dir, 'out');
  await mkdir(dir, { recursive: true });
  const config = join(dir, 'tsconfig.json');
  await writeFile(
    config,
    JSON.stringify({
      extends: join(REPO_ROOT, 'tsconfig.build.json'),
      compilerOptions: {
        outDir: out,
        rootDir: REPO_ROOT,
        sourceMap: false,
        typeRoots: [join(REPO_ROOT, 'node_modules/@types')],
      },
      include: [join(REPO_ROOT, 'deploy/local/weka-sim')],
    }),
  );
  await run(process.execPath, [join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', config]);
  await writeFile(join(out, 'package.json'), JSON.stringify({ type: 'module' }));
  return join(out, 'deploy/local/weka-sim/main.js');
}

/** Commands the operator's activities run on every container, all of them reads, so repeatable. */
const COMMANDS: ReadonlyArray<readonly string[]> = [
  ['lsblk', '-J'],
  ['weka-sign-drive', 'list', '-j'],
  ['weka', 'cluster', 'container', '5', '--json'],
];

export interface SimulatorBenchResult {
  samples: number;
  bundle: { p50: number; p99: number; max: number };
  compiled: { p50: number; p99: number; max: number };
  /** Bare `node -e ''` in the same run, with the environment the shims give the simulator: the floor. */
  bareNode: { p50: number; p99: number; max: number };
  /**
   * Bare `node -e ''` with the caller's NODE_EXTRA_CA_CERTS, when it sets one: what every simulated
   * command paid on top before the shims dropped it.
   */
  bareNodeExtraCAs?: { p50: number; p99: number; max: number };
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
  try {
    const built = await buildSimulator(join(dir, 'build'));
    const state = join(dir, 'nodes', 'bench');
    await run(process.execPath, [
      ...simulatorArgs(built),
      '--state',
      state,
      'init-node',
      ...['/dev/nvme0n1:3840:TLC', '/dev/nvme1n1:3840:TLC', '/dev/nvme2n1:7680:QLC'].flatMap((d) => ['--device', d]),
    ]);
    const bundleShims = join(dir, 'bundle-bin');
    const compiledShims = join(dir, 'compiled-bin');
    await writeSimulatorShims(bundleShims, simulatorArgs(built));
    await writeSimulatorShims(compiledShims, [await compileSimulatorModules(join(dir, 'compiled'))]);
    const env = (shims: string): NodeJS.ProcessEnv => ({
      ...process.env,
      PATH: `${shims}:${process.env['PATH'] ?? ''}`,
      WEKA_SIM_STATE: state,
    });
    const { NODE_EXTRA_CA_CERTS: extraCAs, ...bareEnv } = process.env;
    const times = {
      bundle: [] as number[],
      compiled: [] as number[],
      bareNode: [] as number[],
      bareNodeExtraCAs: [] as number[],
    };
    for (let i = 0; i < o.samples; i++) {
      for (const argv of COMMANDS) {
        times.bundle.push(await timed(join(bundleShims, argv[0]!), argv.slice(1), env(bundleShims)));
        times.compiled.push(await timed(join(compiledShims, argv[0]!), argv.slice(1), env(compiledShims)));
      }
      times.bareNode.push(await timed(process.execPath, ['-e', ''], bareEnv));
      if (extraCAs) times.bareNodeExtraCAs.push(await timed(process.execPath, ['-e', ''], process.env));
    }
    const result: SimulatorBenchResult = {
      samples: times.bundle.length,
      bundle: spread(times.bundle),
      compiled: spread(times.compiled),
      bareNode: spread(times.bareNode),
      ...(extraCAs ? { bareNodeExtraCAs: spread(times.bareNodeExtraCAs) } : {}),
    };
    o.log(`   ${result.samples} commands each way (${COMMANDS.map((c) => c.join(' ')).join('; ')})`);
    return result;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
