import { describe, expect, it } from 'vitest';
import { driveAt, parseSignDriveList } from '../../../src/weka/index.js';
import { expectOk, sim, signedNode, simRoot } from './helpers.js';

const MAP = '/dev/weka-set/data=/dev/nvme1n1';

describe('weka-sim device map (a pod that has a node device as a block volume)', () => {
  it('lists only the mapped node device, at its alias, and answers for it there', async () => {
    const state = await signedNode(await simRoot());
    const inPod = (...argv: string[]) => sim('--state', state, '--device-map', MAP, '--', 'weka-sign-drive', ...argv);
    const onNode = (...argv: string[]) => sim('--state', state, '--', 'weka-sign-drive', ...argv);
    const nodeDrive = async (path: string) =>
      driveAt(parseSignDriveList((await expectOk(onNode('list', '-j'))).stdout), path);

    const listed = await expectOk(inPod('list', '-j'));
    expect((JSON.parse(listed.stdout) as { devices: Array<{ path: string }> }).devices.map((d) => d.path)).toEqual([
      '/dev/weka-set/data',
    ]);
    const unsigned = await nodeDrive('/dev/nvme1n1');
    expect(parseSignDriveList(listed.stdout)).toEqual([{ ...unsigned, devicePath: '/dev/weka-set/data' }]);
    expect(unsigned).toMatchObject({ type: 'QLC', signature: 'none' });
    const shown = JSON.parse((await expectOk(inPod('show', '/dev/weka-set/data', '--json'))).stdout) as unknown;
    expect(shown).toMatchObject({ partitions: [], hardware: { serial_number: unsigned.serial, iu_size: 16384 } });

    await expectOk(inPod('sign', 'proxy', '--', '/dev/weka-set/data'));
    const signed = await nodeDrive('/dev/nvme1n1');
    expect(signed).toMatchObject({ signature: 'proxy', physicalUUID: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(parseSignDriveList((await expectOk(inPod('list', '-j'))).stdout)).toEqual([
      { ...signed, devicePath: '/dev/weka-set/data' },
    ]);
  });

  it('refuses the alias without the map, as a pod whose volume is not attached would', async () => {
    const state = await signedNode(await simRoot());
    const show = await sim('--state', state, '--', 'weka-sign-drive', 'show', '--json', '/dev/weka-set/data');
    expect(show.exitCode).not.toBe(0);
    expect(show.stderr).toMatch(/no such device/);
  });

  it('refuses a map entry that is not ALIAS=PATH under /dev', async () => {
    const state = await signedNode(await simRoot());
    const bad = await sim('--state', state, '--device-map', '/dev/a=/tmp/x', '--', 'weka-sign-drive', 'show', '/dev/a');
    expect(bad.exitCode).toBe(64);
    expect(bad.stderr).toMatch(/--device-map entry/);
  });
});
