import { execFile } from 'node:child_process';
import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SERVER_PORT_FILE, startSimulatorServer } from '../../../deploy/local/weka-sim/server.js';
import { SHIMMED_TOOLS, shellQuote } from '../../../deploy/local/weka-sim/shims.js';
import type { SimResult } from '../../../deploy/local/weka-sim/outcome.js';
import { NO_CLUSTER_GUID, parseSignDriveList } from '../../../src/weka/index.js';
import { DISCOVERY_LSBLK, HOST_DISCOVERY, expectOk, nodeDir, serveShims, sim, simRoot } from './helpers.js';

function runShim(shimDir: string, env: Record<string, string | undefined>, argv: string[]): Promise<SimResult> {
  return new Promise((done) => {
    execFile(
      argv[0]!,
      argv.slice(1),
      { env: { ...process.env, PATH: `${shimDir}:${process.env['PATH'] ?? ''}`, ...env } },
      (error, stdout, stderr) => {
        done({ exitCode: error ? Number(error.code) : 0, stdout, stderr });
      },
    );
  });
}

describe('simulator shims', () => {
  /** A node with one device, and the shims written for it. */
  async function shimmedNode(device: string): Promise<{ state: string; shimDir: string }> {
    const root = await simRoot();
    const state = nodeDir(root, 'node-1');
    await expectOk(sim('--state', state, 'init-node', '--device', device));
    const shimDir = await serveShims(root);
    return { state, shimDir };
  }

  it('answer weka-sign-drive and weka from the node named by WEKA_SIM_STATE', async () => {
    const { state, shimDir } = await shimmedNode('/dev/nvme0n1:100:TLC');

    const drives = await runShim(shimDir, { WEKA_SIM_STATE: state }, ['weka-sign-drive', 'list', '-j']);
    expect(drives.exitCode).toBe(0);
    expect(parseSignDriveList(drives.stdout)).toEqual([
      expect.objectContaining({ devicePath: '/dev/nvme0n1', capacityGiB: 100, signature: 'none' }),
    ]);
    // The pod's environment sets its Weka container up: a stem here.
    const pod = { WEKA_SIM_STATE: state, NAME: 'ns_d0', PORT: '35000', AGENT_PORT: '35100', MANAGEMENT_IP: '10.0.0.5' };
    const identity = await runShim(shimDir, pod, [
      ...['weka', 'local', 'run', 'wapi', '-H', 'localhost:35100/jrpc', '-W', 'container-get-identity'],
      ...['--container-name', 'ns_d0', '--json'],
    ]);
    expect(identity.exitCode).toBe(0);
    expect(JSON.parse(identity.stdout)).toMatchObject({ value: { cluster_guid: NO_CLUSTER_GUID }, has_value: true });
    // Arguments pass through untouched, so a refusal still names the odd argument.
    const odd = await runShim(shimDir, { WEKA_SIM_STATE: state }, [
      'weka-sign-drive',
      'show',
      '--json',
      '/dev/$(id) x',
    ]);
    expect(odd.exitCode).toBe(64);
    expect(odd.stderr).toContain('"/dev/$(id) x"');
  });

  it("pass a pod's device map (WEKA_SIM_DEVICE_MAP) on to the simulator", async () => {
    const { state, shimDir } = await shimmedNode('/dev/nvme0n1:100:TLC');
    const list = ['weka-sign-drive', 'list', '-j'];
    const mapped = await runShim(
      shimDir,
      { WEKA_SIM_STATE: state, WEKA_SIM_DEVICE_MAP: '/dev/weka-set/data=/dev/nvme0n1' },
      list,
    );
    expect(mapped.exitCode).toBe(0);
    expect(parseSignDriveList(mapped.stdout)).toEqual([
      expect.objectContaining({ devicePath: '/dev/weka-set/data', capacityGiB: 100 }),
    ]);
    const unmappedEnv = { WEKA_SIM_STATE: state, WEKA_SIM_DEVICE_MAP: undefined };
    const unmapped = await runShim(shimDir, unmappedEnv, list);
    expect(parseSignDriveList(unmapped.stdout).map((d) => d.devicePath)).toEqual(['/dev/nvme0n1']);
    const show = await runShim(shimDir, unmappedEnv, ['weka-sign-drive', 'show', '--json', '/dev/weka-set/data']);
    expect(show.stderr).toMatch(/no such device/);
  });

  it("answer nsenter and lsblk with the node's devices", async () => {
    const { state, shimDir } = await shimmedNode('/dev/nvme0n1:100:TLC:S1');
    expect(SHIMMED_TOOLS).toEqual(['weka-sign-drive', 'weka', 'lsblk', 'nsenter']);
    const argv = [...HOST_DISCOVERY, ...DISCOVERY_LSBLK];
    const result = await runShim(shimDir, { WEKA_SIM_STATE: state }, argv);
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      blockdevices: [{ name: '/dev/nvme0n1', type: 'disk', mountpoint: null, serial: 'S1' }],
    });
    const unknown = await runShim(shimDir, { WEKA_SIM_STATE: state }, ['lsblk', '-J', '/dev/sdq']);
    expect(unknown).toEqual({ exitCode: 32, stdout: '', stderr: 'lsblk: /dev/sdq: not a block device\n' });
  });

  it('fail with a configuration error when WEKA_SIM_STATE is unset', async () => {
    const shimDir = await serveShims(await simRoot());
    const result = await runShim(shimDir, { WEKA_SIM_STATE: undefined }, ['weka', 'cluster', 'list']);
    expect(result.exitCode).toBe(78);
    expect(result.stderr).toContain('WEKA_SIM_STATE is not set');
  });

  it("fail as unavailable (69, which the operator retries) when the simulator's server does not answer", async () => {
    const { state, shimDir } = await shimmedNode('/dev/nvme0n1:100:TLC');
    const server = await startSimulatorServer(join(await simRoot(), 'other'));
    await server.close();
    await writeFile(join(shimDir, SERVER_PORT_FILE), `${server.port}\n`);
    const result = await runShim(shimDir, { WEKA_SIM_STATE: state }, ['weka-sign-drive', 'list', '-j']);
    expect(result).toEqual({
      exitCode: 69,
      stdout: '',
      stderr: `weka-sign-drive (weka-sim shim): the simulator's server (its port in ${join(shimDir, SERVER_PORT_FILE)}) does not answer\n`,
    });
  });

  it('are executable and work from a directory whose path has spaces and quotes', async () => {
    const root = await simRoot();
    const state = nodeDir(root, 'node-1');
    await expectOk(sim('--state', state, 'init-node', '--device', '/dev/nvme0n1:100:TLC'));
    const shimDir = await serveShims(root, "it's a bin");
    for (const tool of SHIMMED_TOOLS) expect((await stat(join(shimDir, tool))).mode & 0o111).toBe(0o111);
    const listed = await runShim(shimDir, { WEKA_SIM_STATE: state }, ['weka-sign-drive', 'list', '-j']);
    expect(listed.exitCode).toBe(0);
    expect(parseSignDriveList(listed.stdout).map((d) => d.devicePath)).toEqual(['/dev/nvme0n1']);
  });

  it('single-quote words for sh', () => {
    expect(shellQuote("a'b")).toBe(`'a'\\''b'`);
  });
});
