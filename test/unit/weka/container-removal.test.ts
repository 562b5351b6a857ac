// Taking a container out of its Weka cluster: the argv of the probe, deactivate and remove, the
// probe's parser, and the plans that make a retry safe.
import { describe, expect, it } from 'vitest';
import {
  WekaInputError,
  WekaOutputError,
  containerDeactivateCall,
  containerRemoveCall,
  containerStatusCall,
  parseContainerStatus,
  hostNotFound,
  nextContainerRemovalStep,
  planContainerRemove,
  type WekaContainerState,
} from '../../../src/weka/index.js';

const active: WekaContainerState = { containerId: 7, name: 'ns_drive-0', hostname: 'node-1', status: 'ACTIVE' };
const inactive: WekaContainerState = { ...active, status: 'INACTIVE' };
/** One container as `weka cluster container 7 --json` prints it (test/fixtures/weka/cluster-container.json). */
const shown = (c: WekaContainerState = active) => ({
  host_id: `HostId<${c.containerId}>`,
  host_ip: '10.0.0.7',
  hostname: c.hostname,
  container_name: c.name,
  uid: '5c3b8a6e-2f61-4f0e-9d4a-7b1e0c2d3f4a',
  state: 'ACTIVE',
  status: c.status,
});

describe('container removal calls', () => {
  it.each([
    ['the probe', containerStatusCall(7), ['weka', 'cluster', 'container', '7', '--json']],
    ['deactivate', containerDeactivateCall(7), ['weka', 'cluster', 'container', 'deactivate', '7']],
    ['remove', containerRemoveCall(7), ['weka', 'cluster', 'container', 'remove', '7']],
    [
      'remove without unimprinting',
      containerRemoveCall(0, { noUnimprint: true }),
      ['weka', 'cluster', 'container', 'remove', '0', '--no-unimprint'],
    ],
  ])('builds %s as an argv array', (_what, call, argv) => {
    expect(call.argv).toEqual(argv);
  });

  it.each([-1, 1.5, Number.NaN, '3' as unknown as number])('rejects the container ID %s before anything runs', (id) => {
    expect(() => containerStatusCall(id)).toThrow(WekaInputError);
    expect(() => containerDeactivateCall(id)).toThrow(WekaInputError);
    expect(() => containerRemoveCall(id)).toThrow(WekaInputError);
  });

  it('ignores what deactivate and remove print', () => {
    expect(containerDeactivateCall(7).parse('Container 7 (ns_drive-0) is INACTIVE\n')).toBeUndefined();
    expect(containerRemoveCall(7).parse('')).toBeUndefined();
  });

  it('parses the probe: the container with its status, its ID from host_id, or nothing once it is removed', () => {
    expect(containerStatusCall(7).parse(JSON.stringify([shown()]))).toEqual([active]);
    expect(containerStatusCall(7).parse(JSON.stringify([{ ...shown(inactive), extra: 1 }]))).toEqual([inactive]);
    expect(containerStatusCall(7).parse(`warning: slow\n${JSON.stringify([shown()])}`)).toEqual([active]);
    expect(containerStatusCall(7).parse('[]\n')).toEqual([]);
  });

  it("recognises the cluster's answer for a container it does not have, and only for that container", () => {
    expect(hostNotFound(15).test('error: Host HostId<15> not found\n\u0000')).toBe(true);
    expect(hostNotFound(15).test('error: Host HostId<150> not found')).toBe(false);
  });

  it.each([
    ['text', 'no such container'],
    ['an object instead of a list', JSON.stringify(shown())],
    ['a missing status', JSON.stringify([{ ...shown(), status: undefined }])],
    ['an empty status', JSON.stringify([{ ...shown(), status: '' }])],
    ['another container', JSON.stringify([shown({ ...active, containerId: 8 })])],
    ['a host_id that is not HostId<N>', JSON.stringify([{ ...shown(), host_id: '7' }])],
    ['the container twice', JSON.stringify([shown(), shown()])],
    ['a missing container name', JSON.stringify([{ ...shown(), container_name: undefined }])],
  ])('rejects a probe answer with %s, naming the command', (_why, stdout) => {
    expect(() => containerStatusCall(7).parse(stdout)).toThrow(WekaOutputError);
    expect(() => parseContainerStatus(stdout, 7, 'probe')).toThrow(/^probe: unexpected output/);
    expect(() => containerStatusCall(7).parse(stdout)).toThrow(/^weka cluster container 7 --json: unexpected output/);
  });
});

describe('container removal plans', () => {
  it.each([
    ['an active container', [active], {}, 'deactivate'],
    ['an inactive container (deactivated by an earlier attempt)', [inactive], {}, 'remove'],
    ['a container no longer listed (removed by an earlier attempt)', [], {}, 'already-done'],
    [
      'a container Weka still takes data away from',
      [{ ...active, status: 'DEACTIVATING' }],
      {},
      { wait: 'DEACTIVATING' },
    ],
    ['a container in another status (UP, DOWN, ...)', [{ ...active, status: 'DOWN' }], {}, 'deactivate'],
    ['the expected name', [active], { name: 'ns_drive-0' }, 'deactivate'],
    ['a name for a container already removed', [], { name: 'ns_drive-0' }, 'already-done'],
  ] as const)('%s: %j', (_what, listed, extra, step) => {
    expect(nextContainerRemovalStep(listed, { containerId: 7, ...extra })).toEqual(step);
  });

  it('will not touch a container listed under the ID with another name', () => {
    const request = { containerId: 7, name: 'ns_drive-1' };
    for (const listed of [[active], [inactive]]) {
      expect(nextContainerRemovalStep(listed, request)).toEqual({
        conflict: 'container 7 is ns_drive-0 on node-1, not ns_drive-1; refusing to remove it',
      });
      expect(planContainerRemove(listed, request)).toHaveProperty('conflict');
    }
  });

  it('ignores other containers in the list', () => {
    expect(planContainerRemove([{ ...active, containerId: 8 }], { containerId: 7 })).toBe('already-done');
    expect(nextContainerRemovalStep([{ ...active, containerId: 8 }], { containerId: 7 })).toBe('already-done');
  });
});
