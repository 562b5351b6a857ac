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
afterEach(async () => {
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

export async function createCluster(state: string, name: string): Promise<string> {
  const out = await expectOk(tool(state, 'weka', 'cluster', 'create', name, '--json'));
  return (JSON.parse(out.stdout) as { guid: string }).guid;
}

let nextPorts = 0;

/** Ports no other container of a test uses: blocks of 100 (and an agent port after each) from 14000. */
export function freshPorts(): string[] {
  const basePort = 14000 + 200 * (nextPorts++ % 250);
  return ['--base-port', String(basePort), '--agent-port', String(basePort + 100)];
}

export function containerAdd(state: string, guid: string, name: string, hostname: string): Promise<SimResult> {
  const argv = ['weka', 'cluster', 'container', 'add', '--cluster-guid', guid, '--name', name];
  return tool(state, ...argv, '--hostname', hostname, ...freshPorts(), '--json');
}

export async function addContainer(state: string, guid: string, name: string, hostname = 'node-1'): Promise<number> {
  const out = await expectOk(containerAdd(state, guid, name, hostname));
  return (JSON.parse(out.stdout) as { containerId: number }).containerId;
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
