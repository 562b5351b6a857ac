// A physical drive that fails (`weka-sim fail-drive`, a test switch), as Weka's tools then show it:
// its cluster drives list INACTIVE on every node and count as not active in `weka status`, writes
// to it end in an I/O error while reads still work, it leaves its cluster as Weka allows, and it
// heals (docs/weka-simulator.md, "A drive that fails"). Outputs are read by the operator's parsers.
import { describe, expect, it } from 'vitest';
import { classifyExit } from '../../../src/weka/call.js';
import { parseClusterStatus, unhealthyReasons } from '../../../src/weka/cluster-status.js';
import { nextDriveRemovalStep, parseDriveList, type ClusterDrive } from '../../../src/weka/index.js';
import {
  changesOfKind,
  createCluster,
  deviceFiles,
  expectOk,
  inPod,
  joinPod,
  listedDrive,
  memberEnv,
  nodeDir,
  readLog,
  signedNode,
  sim,
  simRoot,
  tool,
  uuid,
  virtualAdd,
  virtualRemove,
} from './helpers.js';

const GIB = 2 ** 30;

const failDrive = (state: string, ...args: string[]) => sim('--state', state, 'fail-drive', ...args);
const weka = (state: string, ...args: string[]) => tool(state, 'weka', 'cluster', 'drive', ...args);

async function drives(state: string, ...uuids: string[]): Promise<ClusterDrive[]> {
  return parseDriveList((await expectOk(weka(state, ...uuids, '--json'))).stdout);
}

async function statusOf(state: string, uuidText: string): Promise<string | undefined> {
  return (await drives(state, uuidText))[0]?.status;
}

/**
 * node-1 with /dev/nvme0n1 (1000 GiB) and /dev/nvme1n1 (2000 GiB) signed for proxy; cluster
 * tenant-a with drive container drive-0, whose drives are uuid(1) (300 GiB) and uuid(2) (200 GiB)
 * on nvme0n1 and uuid(3) (100 GiB) on nvme1n1; node-2 under the same root, with no drives of it.
 */
async function clusterOnTwoDevices() {
  const root = await simRoot();
  const state = await signedNode(root);
  await expectOk(tool(state, 'weka-sign-drive', 'sign', 'proxy', '/dev/nvme1n1'));
  const guid = await createCluster(state, 'tenant-a');
  const env = memberEnv('drive-0', guid);
  const id = await joinPod(state, env);
  for (const [n, device, size] of [
    [1, '/dev/nvme0n1', 300],
    [2, '/dev/nvme0n1', 200],
    [3, '/dev/nvme1n1', 100],
  ] as const) {
    await expectOk(virtualAdd(state, device, uuid(n), guid, size));
    await expectOk(weka(state, 'add', String(id), uuid(n), '--pool', 'iu4k'));
  }
  const state2 = nodeDir(root, 'node-2');
  await expectOk(sim('--state', state2, 'init-node', '--device', '/dev/nvme0n1:1000:TLC'));
  const failed = await listedDrive(state, '/dev/nvme0n1');
  return { state, state2, env, guid, serial: failed.serial, physicalUUID: failed.physicalUUID! };
}

describe('weka-sim fail-drive', () => {
  it('lists the drives on the failed device INACTIVE, in every form and on every node', async () => {
    const n = await clusterOnTwoDevices();
    const out = await expectOk(failDrive(n.state, n.serial));
    expect(out.stdout).toBe(`/dev/nvme0n1 (serial ${n.serial}) failed\n`);
    expect((await readLog(n.state)).at(-1)!.changes).toEqual([
      { kind: 'device-fail', device: '/dev/nvme0n1', serial: n.serial },
    ]);
    for (const state of [n.state, n.state2]) {
      expect((await drives(state)).map((d) => [d.uuid, d.status])).toEqual([
        [uuid(1), 'INACTIVE'],
        [uuid(2), 'INACTIVE'],
        [uuid(3), 'ACTIVE'],
      ]);
      expect(await statusOf(state, uuid(2))).toBe('INACTIVE');
    }
    const text = (await expectOk(weka(n.state2))).stdout;
    expect(text).toContain(`${uuid(1)}  /dev/nvme0n1  ${n.serial}  ${300 * GIB}  INACTIVE`);
    expect(text).toContain(`${uuid(3)}  /dev/nvme1n1`);
  });

  it('ends a write to the failed device in an I/O error, and still reads it', async () => {
    const n = await clusterOnTwoDevices();
    await expectOk(failDrive(n.state, n.serial));
    const before = await deviceFiles(n.state);
    const add = await virtualAdd(n.state, '/dev/nvme0n1', uuid(4), n.guid, 100);
    expect(add).toEqual({ exitCode: 74, stdout: '', stderr: 'weka-sign-drive: /dev/nvme0n1: Input/output error\n' });
    // The operator reads it as it would a real tool's I/O error: a failure to try again, not a refusal.
    expect(classifyExit(add.exitCode)).toBe('transient');
    const resign = await tool(
      n.state,
      'weka-sign-drive',
      'sign',
      'proxy',
      '--allow-erase-weka-partitions',
      '/dev/nvme0n1',
    );
    expect(resign.exitCode).toBe(65); // it carries virtual drives: refused from what the tool reads first
    expect(await deviceFiles(n.state)).toEqual(before);
    expect((await readLog(n.state)).at(-2)).toMatchObject({ exitCode: 74, changes: [] });
    // Reading the device works: it is listed and shown as before.
    expect((await listedDrive(n.state, '/dev/nvme0n1')).virtualDrives).toHaveLength(2);
    await expectOk(tool(n.state, 'weka-sign-drive', 'show', '/dev/nvme0n1', '--json'));
    // The other device is fine.
    await expectOk(virtualAdd(n.state, '/dev/nvme1n1', uuid(4), n.guid, 100));
  });

  it('ends signing the failed device for Weka again in an I/O error', async () => {
    const state = await signedNode(await simRoot());
    await expectOk(tool(state, 'weka-sign-drive', 'sign', 'proxy', '/dev/nvme1n1'));
    const physical = (await listedDrive(state, '/dev/nvme1n1')).physicalUUID!;
    await expectOk(failDrive(state, physical.toUpperCase()));
    for (const argv of [
      ['sign', 'proxy', '--allow-erase-weka-partitions', '/dev/nvme1n1'],
      ['--allow-erase-weka-partitions', '--', '/dev/nvme1n1'],
    ]) {
      const result = await tool(state, 'weka-sign-drive', ...argv);
      expect(result).toMatchObject({ exitCode: 74, stderr: 'weka-sign-drive: /dev/nvme1n1: Input/output error\n' });
    }
    expect((await listedDrive(state, '/dev/nvme1n1')).physicalUUID).toBe(physical);
  });

  it('counts the drives on the failed device as not active in weka status', async () => {
    const n = await clusterOnTwoDevices();
    await expectOk(failDrive(n.state, n.serial));
    const out = await expectOk(inPod(n.state, n.env, 'weka', 'status', '--json'));
    expect(JSON.parse(out.stdout)).toMatchObject({
      capacity: { total_bytes: 100 * GIB, unavailable_bytes: 500 * GIB },
      drives: { active: 1, total: 3 },
    });
    expect(unhealthyReasons(parseClusterStatus(out.stdout))).toEqual(['1 of 3 drives are active']);
  });

  it('takes the failed drives out as Weka allows, and unsigns them', async () => {
    const n = await clusterOnTwoDevices();
    await expectOk(failDrive(n.state, n.serial));
    // Read as INACTIVE, the operator's plan removes a failed drive at once ...
    expect(nextDriveRemovalStep(await drives(n.state, uuid(1)), uuid(1))).toBe('remove');
    await expectOk(weka(n.state, 'remove', uuid(1), '-f'));
    // ... and deactivating one first is accepted too.
    await expectOk(weka(n.state, 'deactivate', uuid(2), '-f'));
    expect(await changesOfKind(n.state, 'drive-deactivate')).toBe(1);
    await expectOk(weka(n.state, 'remove', uuid(2), '-f'));
    expect(await drives(n.state, uuid(1), uuid(2))).toEqual([]);
    expect(nextDriveRemovalStep([], uuid(1))).toBe('already-done');
    // The proxy lets go of their virtual drives on the failed device.
    await expectOk(virtualRemove(n.state, '/dev/nvme0n1', uuid(1)));
    await expectOk(virtualRemove(n.state, '/dev/nvme0n1', uuid(2)));
    expect((await listedDrive(n.state, '/dev/nvme0n1')).virtualDrives).toEqual([]);
    // A drive on a healthy device is still refused until it is deactivated.
    expect((await weka(n.state, 'remove', uuid(3), '-f')).exitCode).toBe(65);
  });

  it('heals: drives never deactivated list ACTIVE again, and the device takes writes', async () => {
    const n = await clusterOnTwoDevices();
    await expectOk(failDrive(n.state, n.physicalUUID.toUpperCase()));
    expect((await expectOk(failDrive(n.state, n.serial))).stdout).toContain('has failed already');
    await expectOk(weka(n.state, 'deactivate', uuid(2), '-f'));
    const healed = await expectOk(failDrive(n.state, n.serial, '--clear'));
    expect(healed.stdout).toBe(`/dev/nvme0n1 (serial ${n.serial}) healed\n`);
    expect((await drives(n.state2)).map((d) => d.status)).toEqual(['ACTIVE', 'INACTIVE', 'ACTIVE']);
    await expectOk(virtualAdd(n.state, '/dev/nvme0n1', uuid(4), n.guid, 100));
    expect((await expectOk(failDrive(n.state, n.serial, '--clear'))).stdout).toContain('has not failed');
    expect(await changesOfKind(n.state, 'device-fail')).toBe(1);
    expect(await changesOfKind(n.state, 'device-heal')).toBe(1);
  });

  it.each([
    [['NO-SUCH-SERIAL'], 65, 'no drive with serial or physical UUID NO-SUCH-SERIAL on node node-1'],
    [[uuid(99)], 65, `no drive with serial or physical UUID ${uuid(99)}`],
    [[], 64, 'expected SERIAL|PHYSICAL_UUID'],
    [['a', 'b'], 64, 'expected SERIAL|PHYSICAL_UUID'],
    [['x', '--force'], 64, 'unknown option --force'],
  ])('refuses fail-drive %j with exit %i', async (args, exitCode, message) => {
    const state = await signedNode(await simRoot());
    const result = await failDrive(state, ...args);
    expect(result.exitCode).toBe(exitCode);
    expect(result.stderr).toContain(message);
  });
});
