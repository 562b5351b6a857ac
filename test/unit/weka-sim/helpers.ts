// Shared setup for simulator tests: a temporary simulator root, in-process and child-process ways
// to run weka-sim, and readers for its on-disk state and log.
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, afterEach } from 'vitest';
import { buildSimulator as buildBundle, simulatorArgs } from '../../../deploy/local/weka-sim/bundle.js';
import { runSimulator } from '../../../deploy/local/weka-sim/cli.js';
import { startSimulatorServer, type SimulatorServer } from '../../../deploy/local/weka-sim/server.js';
import { writeSimulatorShims } from '../../../deploy/local/weka-sim/shims.js';
import { deviceFileName, type LogEntry } from '../../../deploy/local/weka-sim/node-state.js';
import type { SimResult } from '../../../deploy/local/weka-sim/outcome.js';
import { driveAt, parseSignDriveList, type DriveInfo } from '../../../src/weka/index.js';

export const REPO_ROOT = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
export const SIM_MAIN_TS = join(REPO_ROOT, 'deploy', 'local', 'weka-sim', 'main.ts');
/** Lets plain `node` run the TypeScript entry point, as `node --import tsx` would from the repo. */
export const TSX_IMPORT = [
  '--import',
  pathToFileURL(join(REPO_ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href,
];

export const CLUSTER_A = 'aaaaaaaa-0000-4000-8000-000000000001';
export const CLUSTER_B = 'bbbbbbbb-0000-4000-8000-000000000002';

export function uuid(n: number): string {
  return `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
}

const roots: string[] = [];
const builds: string[] = [];
const servers: SimulatorServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await Promise.all(roots.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});
afterAll(async () => {
  await Promise.all(builds.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A fresh simulator root; nodes live under <root>/nodes/<name>. Removed after the test. */
export async function simRoot(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'weka-sim-'));
  roots.push(root);
  return root;
}

export function nodeDir(root: string, node: string): string {
  return join(root, 'nodes', node);
}

/** Runs a tool command in-process: `weka-sim --state DIR -- ...argv`. */
export function tool(state: string, ...argv: string[]): Promise<SimResult> {
  return runSimulator(['--state', state, '--', ...argv]);
}

export function sim(...args: string[]): Promise<SimResult> {
  return runSimulator(args);
}

/**
 * Builds the simulator as the local control plane runs it (bundle.ts: one bundled file) in a
 * temporary directory; returns the node arguments that run it.
 */
export async function buildSimulator(): Promise<string[]> {
  const outDir = await mkdtemp(join(tmpdir(), 'weka-sim-build-'));
  builds.push(outDir);
  return simulatorArgs(await buildBundle(outDir));
}

/**
 * The simulator's server and the shims that reach it, in `<root>/<dirName>`, as the local control plane
 * starts them (the server in this process); returns that directory. The server stops after the test.
 */
export async function serveShims(root: string, dirName = 'bin'): Promise<string> {
  const dir = join(root, dirName);
  servers.push(await startSimulatorServer(dir));
  await writeSimulatorShims(dir);
  return dir;
}

/** Runs weka-sim as a separate process, the way the shims do; from a build if given, else under tsx. */
export function spawnSim(args: readonly string[], simArgs?: readonly string[]): Promise<SimResult> {
  const nodeArgs = simArgs ?? [...TSX_IMPORT, SIM_MAIN_TS];
  return new Promise((done) => {
    execFile(process.execPath, [...nodeArgs, ...args], (error, stdout, stderr) => {
      const code = error && typeof error.code === 'number' ? error.code : error ? -1 : 0;
      done({ exitCode: code, stdout, stderr });
    });
  });
}

export async function readLog(state: string): Promise<LogEntry[]> {
  const text = await readFile(join(state, 'commands.log'), 'utf8');
  return text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as LogEntry);
}

export async function changesOfKind(state: string, kind: string): Promise<number> {
  return (await readLog(state)).flatMap((e) => e.changes).filter((c) => c.kind === kind).length;
}

/** The device as `weka-sign-drive list -j` reports it, read by the operator's parser. */
export async function listedDrive(state: string, device: string): Promise<DriveInfo> {
  const result = await tool(state, 'weka-sign-drive', 'list', '-j');
  if (result.exitCode !== 0) throw new Error(`list failed: ${result.stderr}`);
  return driveAt(parseSignDriveList(result.stdout), device);
}

/** A node with one proxy-signed 1000 GiB TLC device and one unsigned QLC device. */
export async function signedNode(root: string, node = 'node-1'): Promise<string> {
  const state = nodeDir(root, node);
  await expectOk(
    sim('--state', state, 'init-node', '--device', '/dev/nvme0n1:1000:TLC', '--device', '/dev/nvme1n1:2000:QLC'),
  );
  await expectOk(tool(state, 'weka-sign-drive', 'sign', 'proxy', '/dev/nvme0n1'));
  return state;
}

export async function expectOk(result: Promise<SimResult> | SimResult): Promise<SimResult> {
  const r = await result;
  if (r.exitCode !== 0) throw new Error(`expected exit 0, got ${r.exitCode}: ${r.stderr}`);
  return r;
}

/** Signs a virtual drive on the proxy drive at `device`, named by its physical UUID as the tool takes it. */
export async function virtualAdd(
  state: string,
  device: string,
  virtualUUID: string,
  owner: string,
  sizeGiB: number,
): Promise<SimResult> {
  return tool(
    state,
    'weka-sign-drive',
    'virtual',
    'add',
    await physicalUUIDAt(state, device),
    '--size',
    String(sizeGiB),
    '--owner-cluster-guid',
    owner,
    '--virtual-uuid',
    virtualUUID,
  );
}

/** A physical UUID no drive has: what physicalUUIDAt gives for an unsigned device. */
export const UNKNOWN_PHYSICAL_UUID = 'ffffffff-ffff-4fff-bfff-ffffffffffff';

/**
 * The physical UUID of the drive at `device` (UNKNOWN_PHYSICAL_UUID while it is unsigned), read
 * from the node's header files: no command runs, so nothing is logged and no fault is injected.
 */
export async function physicalUUIDAt(state: string, device: string): Promise<string> {
  const header = JSON.parse(await readFile(join(state, 'devices', deviceFileName(device)), 'utf8')) as {
    physicalUUID: string | null;
  };
  return header.physicalUUID ?? UNKNOWN_PHYSICAL_UUID;
}

let nextPorts = 0;
let nextIp = 0;

/** Ports no other container of a test uses: blocks of 100 (and an agent port after each) from 14000. */
export function freshPortNumbers(): { basePort: number; agentPort: number } {
  const basePort = 14000 + 200 * (nextPorts++ % 250);
  return { basePort, agentPort: basePort + 100 };
}

export function freshPorts(): string[] {
  const { basePort, agentPort } = freshPortNumbers();
  return ['--base-port', String(basePort), '--agent-port', String(agentPort)];
}

/** A management IP no other container of a test has. */
export function freshIp(): string {
  const n = nextIp++;
  return `10.99.${Math.floor(n / 250) % 250}.${(n % 250) + 1}`;
}

/** The environment of a pod that runs a Weka container (its shim passes NAME, PORT, AGENT_PORT, MANAGEMENT_IP, JOIN_IPS). */
export function podEnv(
  name: string,
  o: { basePort?: number; agentPort?: number; ip?: string; joinIps?: string[] } = {},
): string[] {
  const ports = o.basePort !== undefined && o.agentPort !== undefined ? o : freshPortNumbers();
  return [
    '--in-pod',
    '--weka-name',
    name,
    '--weka-port',
    String(ports.basePort),
    '--agent-port',
    String(ports.agentPort),
    ...(o.ip ? ['--management-ip', o.ip] : []),
    ...(o.joinIps?.length ? ['--join-ips', o.joinIps.join(',')] : []),
  ];
}

/** A command run in a pod of that environment on the node of `state`. */
export function inPod(state: string, env: readonly string[], ...argv: string[]): Promise<SimResult> {
  return runSimulator(['--state', state, ...env, '--', ...argv]);
}

/** The identity the pod's agent gives its Weka container (`container-get-identity`). */
export function identityOf(state: string, env: readonly string[]): Promise<SimResult> {
  const name = env[env.indexOf('--weka-name') + 1]!;
  const agentPort = env[env.indexOf('--agent-port') + 1]!;
  return inPod(
    state,
    env,
    'weka',
    'local',
    'run',
    'wapi',
    '-H',
    `localhost:${agentPort}/jrpc`,
    '-W',
    'container-get-identity',
    '--container-name',
    name,
    '--json',
  );
}

/** Where each cluster createCluster made is joined through: its backend's ip:port. */
const joinAddresses = new Map<string, string>();

export function joinAddressOf(guid: string): string {
  const address = joinAddresses.get(guid);
  if (!address) throw new Error(`no cluster ${guid} was made by createCluster`);
  return address;
}

/**
 * A new cluster of one backend Weka container on the node of `state` (a pod of its own), named
 * `name`; returns its GUID.
 */
export async function createCluster(state: string, name: string): Promise<string> {
  const ip = freshIp();
  const ports = freshPortNumbers();
  const env = podEnv(`backend-${name}`, { ...ports, ip });
  await expectOk(inPod(state, env, 'weka', 'cluster', 'create', ip, '--host-ips', `${ip}:${ports.basePort}`));
  await expectOk(inPod(state, env, 'weka', 'cluster', 'update', '--cluster-name', name));
  const identity = JSON.parse((await expectOk(identityOf(state, env))).stdout) as { value: { cluster_guid: string } };
  joinAddresses.set(identity.value.cluster_guid, `${ip}:${ports.basePort}`);
  return identity.value.cluster_guid;
}

/**
 * A pod on the node of `state` whose Weka container joins the cluster at its setup (JOIN_IPS of
 * the cluster's backend); answers with its identity.
 */
export function containerAdd(
  state: string,
  guid: string,
  name: string,
  ports = freshPortNumbers(),
): Promise<SimResult> {
  return identityOf(state, podEnv(name, { ...ports, ip: freshIp(), joinIps: [joinAddressOf(guid)] }));
}

/** The environment of a pod whose Weka container joins the cluster of `guid` (its JOIN_IPS). */
export function memberEnv(name: string, guid: string): string[] {
  return podEnv(name, { ...freshPortNumbers(), ip: freshIp(), joinIps: [joinAddressOf(guid)] });
}

/** Joins the pod's container to its cluster (it joins at setup); answers with its container ID. */
export async function joinPod(state: string, env: readonly string[]): Promise<number> {
  const out = await expectOk(identityOf(state, env));
  return (JSON.parse(out.stdout) as { value: { host_id: number } }).value.host_id;
}

export async function addContainer(state: string, guid: string, name: string): Promise<number> {
  const out = await expectOk(containerAdd(state, guid, name));
  const identity = JSON.parse(out.stdout) as { value: { cluster_guid: string; host_id: number } };
  if (identity.value.cluster_guid !== guid) throw new Error(`${name} did not join ${guid}: ${out.stdout}`);
  return identity.value.host_id;
}

/** `weka-sim --state DIR device ...args`: shapes a device as a node admin would. */
export function shape(state: string, ...args: string[]): Promise<SimResult> {
  return runSimulator(['--state', state, 'device', ...args]);
}

/** The blockdevices of `lsblk ...args` (which must succeed). */
export async function lsblkJson(state: string, ...args: string[]): Promise<Array<Record<string, unknown>>> {
  const result = await expectOk(tool(state, 'lsblk', ...args));
  return (JSON.parse(result.stdout) as { blockdevices: Array<Record<string, unknown>> }).blockdevices;
}

/** The reference operator's device discovery on a host (its `find_disks`), run in a hostPID pod. */
export const HOST_DISCOVERY = ['nsenter', '--mount', '--pid', '--target', '1', '--'];
export const DISCOVERY_LSBLK = ['lsblk', '-p', '-J', '-o', 'NAME,TYPE,MOUNTPOINT,SERIAL'];

/** The root disk's partitions, as `device` arguments: /boot/efi, / and swap. */
export const ROOT_PARTITIONS = [
  '--partition',
  '/dev/sda1:vfat:/boot/efi',
  '--partition',
  '/dev/sda2:ext4:/',
  '--partition',
  '/dev/sda3:swap:[SWAP]',
];

/** A node with an NVMe drive and a SATA root disk (ROOT_PARTITIONS). */
export async function rootDiskNode(root: string, node = 'node-1'): Promise<string> {
  const state = nodeDir(root, node);
  await expectOk(
    sim('--state', state, 'init-node', '--device', '/dev/nvme0n1:7680:TLC:NVME0', '--device', '/dev/sda:480:TLC:SATA0'),
  );
  await expectOk(shape(state, '/dev/sda', '--model', 'SIM SATA SSD', ...ROOT_PARTITIONS));
  return state;
}

/** Removes a virtual drive from the proxy drive at `device`, named by its physical UUID as the tool takes it. */
export async function virtualRemove(state: string, device: string, virtualUUID: string): Promise<SimResult> {
  const physical = await physicalUUIDAt(state, device);
  return tool(state, 'weka-sign-drive', 'virtual', 'remove', physical, '--virtual-uuid', virtualUUID);
}

/** The node's device header files, as text in name order: to check that a command changed nothing. */
export async function deviceFiles(state: string): Promise<string[]> {
  const dir = join(state, 'devices');
  return Promise.all((await readdir(dir)).sort().map((name) => readFile(join(dir, name), 'utf8')));
}
