import { execFile } from 'node:child_process';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { SHIMMED_TOOLS, shellQuote, writeSimulatorShims } from '../../../deploy/local/weka-sim/shims.js';
import type { SimResult } from '../../../deploy/local/weka-sim/outcome.js';
import { NO_CLUSTER_GUID, parseSignDriveList } from '../../../src/weka/index.js';
import { DISCOVERY_LSBLK, HOST_DISCOVERY, buildSimulator, expectOk, nodeDir, sim, simRoot } from './helpers.js';

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
  let simArgs: string[] = [];
  beforeAll(async () => {
    simArgs = await buildSimulator();
  });

  /** A node with one device, and the shims written for it. */
  async function shimmedNode(device: string): Promise<{ state: string; shimDir: string }> {
    const root = await simRoot();
    const state = nodeDir(root, 'node-1');
    await expectOk(sim('--state', state, 'init-node', '--device', device));
    const shimDir = join(root, 'bin');
    await writeSimulatorShims(shimDir, simArgs);
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
    const shimDir = join(await simRoot(), 'bin');
    await writeSimulatorShims(shimDir, simArgs);
    const result = await runShim(shimDir, { WEKA_SIM_STATE: undefined }, ['weka', 'cluster', 'list']);
    expect(result.exitCode).toBe(78);
    expect(result.stderr).toContain('WEKA_SIM_STATE is not set');
  });

  it('start the simulator without NODE_EXTRA_CA_CERTS, which Node.js reads and parses at every start', async () => {
    // The simulator dials nothing, so the extra CAs would only cost time: over 100 ms a command
    // with the 144-certificate bundle of the development machine.
    const root = await simRoot();
    const printEnv = join(root, 'print-env.cjs');
    await writeFile(
      printEnv,
      "console.log(process.env.NODE_EXTRA_CA_CERTS ?? 'unset', process.argv.slice(2).join(' '))",
    );
    const shimDir = join(root, 'bin');
    await writeSimulatorShims(shimDir, [printEnv]);
    const result = await runShim(
      shimDir,
      { WEKA_SIM_STATE: '/state', NODE_EXTRA_CA_CERTS: '/etc/ssl/certs/ca-certificates.crt' },
      ['weka', 'cluster', 'list'],
    );
    expect(result).toEqual({ exitCode: 0, stdout: 'unset --state /state --in-pod -- weka cluster list\n', stderr: '' });
  });

  it('are executable and quote paths containing spaces and quotes', async () => {
    const shimDir = join(await simRoot(), "it's a bin");
    await writeSimulatorShims(shimDir, ['--import', 'tsx', "/opt/it's here/main.js"], '/usr/bin/node');
    const script = await readFile(join(shimDir, 'weka'), 'utf8');
    expect(script).toContain(
      `exec '/usr/bin/node' '--import' 'tsx' '/opt/it'\\''s here/main.js' --state "$WEKA_SIM_STATE" "$pod" \${WEKA_SIM_DEVICE_MAP:+--device-map "$WEKA_SIM_DEVICE_MAP"} \\`,
    );
    expect(script).toContain('-- weka "$@"');
    for (const tool of SHIMMED_TOOLS) expect((await stat(join(shimDir, tool))).mode & 0o111).toBe(0o111);
  });

  it('single-quote words for sh', () => {
    expect(shellQuote("a'b")).toBe(`'a'\\''b'`);
  });
});
