// The simulator's command runner. Every command runs under the node lock and is appended to the
// node's commands.log; `weka` commands also take the shared cluster lock (always node first, then
// cluster, so two commands can never wait on each other). Handlers change in-memory state; this
// runner writes back what changed, then applies any "fail after effect" fault.
import { mkdirSync } from 'node:fs';
import { basename } from 'node:path';
import { isDevicePath } from '../../../src/weka/validate.js';
import { runClusterHealthCommand } from './cluster-health.js';
import { loadClusters, saveClusters, type PodWekaEnv } from './cluster-state.js';
import { runDeviceCommand } from './device-shape.js';
import { failedDeviceCheck, runFailDriveCommand } from './failed-drives.js';
import { drawFaults, latencyOf, readFaults, runFaultsCommand, waitOutLatency, type FaultDraw } from './faults.js';
import { runInitNode } from './init-node.js';
import { runProcessCommand } from './processes.js';
import { LockTimeoutError, sleep, withLock } from './lock.js';
import { runLsblk } from './lsblk.js';
import {
  commitCommand,
  ensureNodeDirs,
  finishPendingCommit,
  loadDevices,
  simPaths,
  type LogEntry,
} from './node-state.js';
import type { SimPaths } from './node-records.js';
import { runNsenter } from './nsenter.js';
import { readOvercommitMode, runOvercommitCommand } from './overcommit.js';
import {
  EXIT_INTERNAL,
  EXIT_OK,
  EXIT_REFUSED,
  EXIT_TEMPFAIL,
  EXIT_USAGE,
  SimRefusal,
  ToolExit,
  UsageError,
  type SimResult,
  type ToolOutput,
} from './outcome.js';
import type { NodeView } from './node-view.js';
import { runSignDrive } from './sign-drive-tool.js';
import { runWeka } from './weka-tool.js';
import { randomUUID as newUUID } from './uuid.js';

export const SIM_USAGE = `usage:
  weka-sim --state DIR [--clusters DIR] [POD] [--device-map ALIAS=PATH,...] -- weka-sign-drive ARGS...
  weka-sim --state DIR [--clusters DIR] [POD] [--device-map ALIAS=PATH,...] [WEKA_ENV] -- weka ARGS...
    WEKA_ENV: --weka-name NAME --weka-port PORT --agent-port PORT [--management-ip IP] [--join-ips IP:PORT,...],
         the Weka container the pod's environment sets up (its shim passes NAME, PORT, AGENT_PORT,
         MANAGEMENT_IP and JOIN_IPS on)
  weka-sim --state DIR [POD] -- lsblk ARGS...
  weka-sim --state DIR [POD] -- nsenter --mount --pid --target 1 -- lsblk ARGS...
    POD: --in-pod or --in-host-pid-pod, for a command exec'd into a pod (its shim passes it);
         without it the command runs on the node itself
  weka-sim --state DIR init-node --device PATH:GIB:TLC|QLC[:SERIAL] [--device ...]
  weka-sim --state DIR device PATH [--model M] [--vendor V] [--partition NAME[:FSTYPE[:MOUNTPOINT]]]...
      [--clear-partitions] [--fstype F|--no-fstype] [--mountpoint M|--no-mountpoint] [--data|--no-data]
      [--cluster-guid GUID|--no-cluster-guid]
  weka-sim --state DIR faults [--latency-ms N [--latency-for "TOOL WORD..."]] [--fail-rate P]
                              [--fail-after-effect-rate P] [--seed S]
  weka-sim --state DIR faults --clear
  weka-sim --state DIR faults --waiting
  weka-sim --state DIR overcommit record|refuse
  weka-sim --state DIR process --name NAME gone|running
  weka-sim --state DIR cluster-health GUID [--status S] [--moving-data] [--progress P] [--failures N --percent P]
  weka-sim --state DIR cluster-health GUID --clear
  weka-sim --state DIR fail-drive SERIAL|PHYSICAL_UUID [--clear]`;

interface Invocation {
  readonly state: string;
  readonly clusters: string | undefined;
  /**
   * Other paths of the node's devices, as a pod that has a block volume sees it (the kubelet maps
   * the volume's device there): alias to the device's path on the node.
   */
  readonly aliases: ReadonlyMap<string, string>;
  /** The pod the command runs in, as its shim says (kwok's exec); undefined on the node itself. */
  readonly pod: PodNamespaces | undefined;
  /** The Weka container the pod's environment sets up, when it names one. */
  readonly podWeka: PodWekaEnv | undefined;
  /** 'tool': argv after "--" is a weka-sign-drive, weka, lsblk or nsenter command line. */
  readonly kind: 'tool' | AdminCommand;
  readonly argv: readonly string[];
}

/** What of the host a pod's commands see: with hostPID, `nsenter --target 1` enters the host's namespaces. */
export interface PodNamespaces {
  readonly hostPID: boolean;
}

const ADMIN_COMMANDS = [
  'init-node',
  'device',
  'faults',
  'overcommit',
  'process',
  'cluster-health',
  'fail-drive',
] as const;
type AdminCommand = (typeof ADMIN_COMMANDS)[number];

const NO_FAULT: FaultDraw = { failBeforeEffect: false, failAfterEffect: false };

export async function runSimulator(args: readonly string[]): Promise<SimResult> {
  let invocation: Invocation;
  try {
    invocation = parseGlobal(args);
  } catch (err) {
    if (err instanceof UsageError)
      return { exitCode: EXIT_USAGE, stdout: '', stderr: `weka-sim: ${err.message}\n${SIM_USAGE}\n` };
    throw err;
  }
  const { kind, argv } = invocation;
  try {
    const paths = simPaths(invocation.state, invocation.clusters);
    ensureNodeDirs(paths);
    if (kind === 'tool') return await runTool(paths, argv, invocation.aliases, invocation.pod, invocation.podWeka);
    return await withLock(paths.nodeLock, () => {
      finishPendingCommit(paths);
      return runLogged(paths, [kind, ...argv], NO_FAULT, () => {
        if (kind === 'faults') return runFaultsCommand(argv, paths);
        if (kind === 'overcommit') return runOvercommitCommand(argv, paths);
        if (kind === 'process') return runProcessCommand(argv, paths);
        if (kind === 'cluster-health') return runClusterHealthCommand(argv, paths);
        if (kind === 'fail-drive') return runFailDriveCommand(argv, paths);
        if (kind === 'device') return withNodeDevices(paths, (node) => runDeviceCommand(argv, node));
        return withNodeDevices(paths, (node) => runInitNode(argv, node));
      });
    });
  } catch (err) {
    if (err instanceof LockTimeoutError)
      return { exitCode: EXIT_TEMPFAIL, stdout: '', stderr: `weka-sim: ${err.message}\n` };
    return { exitCode: EXIT_INTERNAL, stdout: '', stderr: `weka-sim: internal error: ${errorText(err)}\n` };
  }
}

/** The pod's NAME, PORT, AGENT_PORT, MANAGEMENT_IP and JOIN_IPS, as its shim passes them on. */
const POD_WEKA_FLAGS = ['--weka-name', '--weka-port', '--agent-port', '--management-ip', '--join-ips'];

function podWekaOf(env: ReadonlyMap<string, string>): PodWekaEnv | undefined {
  const name = env.get('--weka-name');
  const basePort = Number(env.get('--weka-port'));
  const agentPort = Number(env.get('--agent-port'));
  if (!name || !Number.isInteger(basePort) || basePort < 1 || !Number.isInteger(agentPort) || agentPort < 1)
    return undefined;
  const joinIps = (env.get('--join-ips') ?? '').split(',').filter((t) => t !== '');
  return { name, basePort, agentPort, ip: env.get('--management-ip') || undefined, joinIps };
}

function parseGlobal(args: readonly string[]): Invocation {
  let state: string | undefined;
  let clusters: string | undefined;
  let aliases: ReadonlyMap<string, string> = new Map();
  let pod: PodNamespaces | undefined;
  const wekaEnv = new Map<string, string>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (POD_WEKA_FLAGS.includes(arg)) {
      wekaEnv.set(arg, args[++i] ?? '');
      continue;
    }
    if (arg === '--device-map') {
      aliases = parseDeviceMap(args[++i] ?? '');
      continue;
    }
    if (arg === '--in-pod' || arg === '--in-host-pid-pod') {
      pod = { hostPID: arg === '--in-host-pid-pod' };
      continue;
    }
    if (arg === '--state' || arg === '--clusters') {
      const value = args[++i];
      if (value === undefined || value === '') throw new UsageError(`${arg} needs a directory`);
      if (arg === '--state') state = value;
      else clusters = value;
      continue;
    }
    if (state === undefined) throw new UsageError('--state DIR is required before the command');
    const rest = args.slice(i + 1);
    if (arg === '--') {
      if (rest.length === 0) throw new UsageError('no command after --');
      return { state, clusters, aliases, pod, podWeka: podWekaOf(wekaEnv), kind: 'tool', argv: rest };
    }
    const admin = ADMIN_COMMANDS.find((command) => command === arg);
    if (admin) return { state, clusters, aliases, pod, podWeka: undefined, kind: admin, argv: rest };
    throw new UsageError(`unknown command ${JSON.stringify(arg)}`);
  }
  throw new UsageError('no command given');
}

async function runTool(
  paths: SimPaths,
  argv: readonly string[],
  aliases: ReadonlyMap<string, string>,
  pod: PodNamespaces | undefined,
  podWeka: PodWekaEnv | undefined,
): Promise<SimResult> {
  // Latency is spent outside the lock: a slow command does not stall the node's other commands.
  const latency = latencyOf(readFaults(paths), argv);
  if (latency > 0) await waitOutLatency(paths, argv, latency, sleep);
  return withLock(paths.nodeLock, () => {
    finishPendingCommit(paths);
    const settings = readFaults(paths);
    const draw = settings ? drawFaults(paths, settings) : NO_FAULT;
    return runLogged(paths, argv, draw, () => applyTool(paths, argv, aliases, pod, podWeka));
  });
}

async function applyTool(
  paths: SimPaths,
  argv: readonly string[],
  aliases: ReadonlyMap<string, string>,
  pod: PodNamespaces | undefined,
  podWeka: PodWekaEnv | undefined,
): Promise<ToolOutput> {
  const [tool = '', ...rest] = argv;
  const withDevices = (fn: (node: NodeView) => ToolOutput | Promise<ToolOutput>) =>
    withNodeDevices(paths, (node) => fn({ ...node, aliases }));
  switch (basename(tool)) {
    case 'weka-sign-drive': {
      const overcommit = readOvercommitMode(paths);
      const failed = failedDeviceCheck(paths);
      return withDevices((node) => runSignDrive(rest, { ...node, overcommit, failed }, newUUID));
    }
    case 'weka':
      mkdirSync(paths.clustersDir, { recursive: true });
      return withDevices((node) =>
        withLock(paths.clustersLock, () => {
          const clusters = loadClusters(paths);
          const before = JSON.stringify(clusters);
          const out = runWeka(rest, { node, clusters, newUUID, pod: pod ? podWeka : undefined });
          if (JSON.stringify(clusters) !== before) saveClusters(paths, clusters);
          return out;
        }),
      );
    // A pod has a mount namespace of its own: the host's mounts are not in it. nsenter --target 1
    // enters the host's only from a pod that shares the host's PID namespace (hostPID).
    case 'lsblk':
      return withDevices((node) => runLsblk(rest, node, { hostMounts: pod === undefined }));
    case 'nsenter':
      return withDevices((node) => runNsenter(rest, node, { hostMounts: pod === undefined || pod.hostPID }));
    default:
      throw new UsageError(
        `unknown tool ${JSON.stringify(tool)}; the simulator answers weka-sign-drive, weka, lsblk and nsenter`,
      );
  }
}

/** Loads the node's device headers, runs fn, and says which headers fn changed (runLogged writes them). */
async function withNodeDevices(
  paths: SimPaths,
  fn: (node: NodeView) => ToolOutput | Promise<ToolOutput>,
): Promise<ToolOutput> {
  const devices = loadDevices(paths);
  const before = new Map([...devices].map(([path, header]) => [path, JSON.stringify(header)]));
  const out = await fn({ nodeName: paths.nodeName, devices });
  const deviceWrites = [...devices].filter(([path, header]) => before.get(path) !== JSON.stringify(header));
  return { ...out, deviceWrites: deviceWrites.map(([, header]) => header) };
}

/** Runs one command under the node lock and appends its outcome to commands.log. */
async function runLogged(
  paths: SimPaths,
  argv: readonly string[],
  draw: FaultDraw,
  fn: () => ToolOutput | Promise<ToolOutput>,
): Promise<SimResult> {
  const tool = basename(argv[0] ?? 'weka-sim');
  const log = (exitCode: number, rest: Partial<LogEntry> = {}, devices: ToolOutput['deviceWrites'] = []) =>
    commitCommand(paths, devices, { time: new Date().toISOString(), argv, exitCode, changes: [], ...rest });
  if (draw.failBeforeEffect) {
    const message = 'simulated failure (fault injection); nothing was changed';
    log(EXIT_TEMPFAIL, { fault: 'fail-before-effect', message });
    return { exitCode: EXIT_TEMPFAIL, stdout: '', stderr: `${tool}: ${message}\n` };
  }
  let out: ToolOutput;
  try {
    out = await fn();
  } catch (err) {
    if (err instanceof LockTimeoutError) throw err; // the cluster lock: reported as exit 75 by runSimulator
    if (err instanceof ToolExit) {
      log(err.exitCode, { message: err.message });
      return { exitCode: err.exitCode, stdout: '', stderr: err.stderr };
    }
    const exitCode = err instanceof SimRefusal ? EXIT_REFUSED : err instanceof UsageError ? EXIT_USAGE : EXIT_INTERNAL;
    const message = exitCode === EXIT_INTERNAL ? `internal error: ${errorText(err)}` : errorText(err);
    log(exitCode, { message });
    return { exitCode, stdout: '', stderr: `${tool}: ${message}\n` };
  }
  if (draw.failAfterEffect) {
    // The change is on disk; the caller sees a crash and never gets the answer.
    const message = 'simulated crash after the change was made (fault injection)';
    log(EXIT_TEMPFAIL, { changes: out.changes, fault: 'fail-after-effect', message }, out.deviceWrites);
    return { exitCode: EXIT_TEMPFAIL, stdout: '', stderr: `${tool}: ${message}\n` };
  }
  const exitCode = out.exitCode ?? EXIT_OK;
  const stderr = out.stderr ?? '';
  log(exitCode, { changes: out.changes, ...(stderr ? { message: stderr.trimEnd() } : {}) }, out.deviceWrites);
  return { exitCode, stdout: out.stdout, stderr };
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** "/dev/weka-set/data-0=/dev/nvme9n1,...": each alias a device path, each device path a path under /dev. */
export function parseDeviceMap(text: string): ReadonlyMap<string, string> {
  const map = new Map<string, string>();
  for (const entry of text.split(',').filter((e) => e !== '')) {
    const [alias, path, ...extra] = entry.split('=');
    if (alias === undefined || path === undefined || extra.length > 0 || !isDevicePath(alias) || !isDevicePath(path))
      throw new UsageError(`--device-map entry ${JSON.stringify(entry)} is not ALIAS=PATH with both under /dev`);
    map.set(alias, path);
  }
  return map;
}
