// A simulator process killed between its device writes and its log line (kwok kills a command
// whose exec stream closed) leaves its commit journal; the node's next command finishes it, so
// every change on a device has its line in commands.log, once.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLUSTER_A, expectOk, readLog, listedDrive, signedNode, simRoot, uuid, virtualAdd } from './helpers.js';

const DEVICE_FILE = join('devices', 'nvme0n1.json');

/** The journal a `virtual remove` of `virtualUUID` leaves when it is killed after writing it. */
async function killedRemove(state: string, virtualUUID: string): Promise<{ entry: Record<string, unknown> }> {
  const header = JSON.parse(await readFile(join(state, DEVICE_FILE), 'utf8')) as Record<string, unknown>;
  const physicalUUID = header['physicalUUID'] as string;
  const entry = {
    time: new Date().toISOString(),
    argv: ['weka-sign-drive', 'virtual', 'remove', physicalUUID, '--virtual-uuid', virtualUUID],
    exitCode: 0,
    changes: [{ kind: 'virtual-remove', device: '/dev/nvme0n1', virtualUUID, ownerClusterGUID: CLUSTER_A }],
  };
  await writeFile(
    join(state, 'pending-commit.json'),
    JSON.stringify({ devices: [{ ...header, virtualDrives: [] }], entry }),
  );
  return { entry };
}

describe('weka-sim: a command killed while it commits', () => {
  it("is finished by the node's next command: the device changed and the line logged", async () => {
    const state = await signedNode(await simRoot());
    await expectOk(virtualAdd(state, '/dev/nvme0n1', uuid(1), CLUSTER_A, 100));
    await killedRemove(state, uuid(1));

    expect((await listedDrive(state, '/dev/nvme0n1')).virtualDrives).toEqual([]);
    const removes = (await readLog(state)).filter((e) => e.changes.some((c) => c.kind === 'virtual-remove'));
    expect(removes).toHaveLength(1);
    await expect(readFile(join(state, 'pending-commit.json'))).rejects.toThrow(/ENOENT/);
  });

  it('logs the line once when the killed command had written it already', async () => {
    const state = await signedNode(await simRoot());
    await expectOk(virtualAdd(state, '/dev/nvme0n1', uuid(1), CLUSTER_A, 100));
    const { entry } = await killedRemove(state, uuid(1));
    await writeFile(join(state, 'commands.log'), `${JSON.stringify(entry)}\n`, { flag: 'a' });

    await listedDrive(state, '/dev/nvme0n1');
    const removes = (await readLog(state)).filter((e) => e.changes.some((c) => c.kind === 'virtual-remove'));
    expect(removes).toHaveLength(1);
  });
});
