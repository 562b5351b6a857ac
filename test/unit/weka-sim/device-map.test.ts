import { describe, expect, it } from 'vitest';
import { sim, signedNode, simRoot } from './helpers.js';

const MAP = '/dev/weka-set/data=/dev/nvme1n1';

describe('weka-sim device map (a pod that has a node device as a block volume)', () => {
  it('answers for the node device the alias leads to, reporting its path on the node', async () => {
    const state = await signedNode(await simRoot());
    const show = await sim(
      '--state',
      state,
      '--device-map',
      MAP,
      '--',
      'weka-sign-drive',
      'show',
      '--json',
      '/dev/weka-set/data',
    );
    expect(show.exitCode).toBe(0);
    expect(JSON.parse(show.stdout)).toMatchObject({ devicePath: '/dev/nvme1n1', type: 'QLC', signature: 'none' });
    const signed = await sim(
      '--state',
      state,
      '--device-map',
      MAP,
      '--',
      'weka-sign-drive',
      'sign',
      'proxy',
      '--',
      '/dev/weka-set/data',
    );
    expect(signed.exitCode).toBe(0);
    const onNode = await sim('--state', state, '--', 'weka-sign-drive', 'show', '--json', '/dev/nvme1n1');
    expect(JSON.parse(onNode.stdout)).toMatchObject({ signature: 'proxy' });
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
