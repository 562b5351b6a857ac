// Taking a container out of its Weka cluster: the argv of the probe, deactivate and remove, the
// probe's parser, and the plans that make a retry safe.
import { describe, expect, it } from 'vitest';
import {
  WekaInputError,
  WekaOutputError,
  clusterDestroyCall,
  containerDeactivateCall,
  containerRemoveCall,
  containerStatusCall,
  parseContainerStatus,
  planClusterDestroy,
  planContainerDeactivate,
  planContainerRemove,
  type WekaContainerState,
} from '../../../src/weka/index.js';

const CLUSTER = 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee';
const active: WekaContainerState = {
  containerId: 7,
  name: 'ns_drive-0',
  hostname: 'node-1',
  clusterGUID: CLUSTER,
  status: 'ACTIVE',
};
const inactive: WekaContainerState = { ...active, status: 'INACTIVE' };

describe('container removal calls', () => {
  it.each([
    ['the probe', containerStatusCall(7), ['weka', 'cluster', 'container', 'list', '7', '--json']],
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

  it('parses the probe: the container with its status, or nothing once it is removed', () => {
    expect(containerStatusCall(7).parse(JSON.stringify([active]))).toEqual([active]);
    expect(containerStatusCall(7).parse(JSON.stringify([{ ...inactive, extra: 1 }]))).toEqual([inactive]);
    expect(containerStatusCall(7).parse('[]\n')).toEqual([]);
  });

  it.each([
    ['text', 'no such container'],
    ['an object instead of a list', JSON.stringify(active)],
    ['a missing status', JSON.stringify([{ ...active, status: undefined }])],
    ['an empty status', JSON.stringify([{ ...active, status: '' }])],
    ['another container', JSON.stringify([{ ...active, containerId: 8 }])],
    ['the container twice', JSON.stringify([active, active])],
    ['a missing cluster GUID', JSON.stringify([{ ...active, clusterGUID: undefined }])],
  ])('rejects a probe answer with %s, naming the command', (_why, stdout) => {
    expect(() => containerStatusCall(7).parse(stdout)).toThrow(WekaOutputError);
    expect(() => parseContainerStatus(stdout, 7, 'probe')).toThrow(/^probe: unexpected output/);
    expect(() => containerStatusCall(7).parse(stdout)).toThrow(
      /^weka cluster container list 7 --json: unexpected output/,
    );
  });
});

describe('container removal plans', () => {
  it.each([
    ['an active container', [active], {}, 'run', 'run'],
    ['an inactive container (deactivated by an earlier attempt)', [inactive], {}, 'already-done', 'run'],
    ['a container no longer listed (removed by an earlier attempt)', [], {}, 'already-done', 'already-done'],
    ['a container whose status is anything but INACTIVE', [{ ...active, status: 'DEACTIVATING' }], {}, 'run', 'run'],
    ['the expected name', [active], { name: 'ns_drive-0' }, 'run', 'run'],
    ['a name for a container already removed', [], { name: 'ns_drive-0' }, 'already-done', 'already-done'],
  ] as const)('%s: deactivate %s, remove %s', (_what, listed, extra, deactivate, remove) => {
    const request = { containerId: 7, ...extra };
    expect(planContainerDeactivate(listed, request)).toBe(deactivate);
    expect(planContainerRemove(listed, request)).toBe(remove);
  });

  it('will not touch a container listed under the ID with another name', () => {
    const request = { containerId: 7, name: 'ns_drive-1' };
    for (const listed of [[active], [inactive]]) {
      expect(planContainerDeactivate(listed, request)).toEqual({
        conflict: `container 7 is ns_drive-0 in cluster ${CLUSTER}, not ns_drive-1; refusing to remove it`,
      });
      expect(planContainerRemove(listed, request)).toHaveProperty('conflict');
    }
  });

  it('ignores other containers in the list', () => {
    expect(planContainerRemove([{ ...active, containerId: 8 }], { containerId: 7 })).toBe('already-done');
  });
});

describe('destroying an empty cluster', () => {
  const guid = 'aaaaaaaa-0000-4000-8000-000000000001';
  const member = { containerId: 3, name: 'drive-0', hostname: 'node-1', clusterGUID: guid };

  it('builds the destroy command for the GUID and refuses a malformed GUID', () => {
    expect(clusterDestroyCall(guid).argv).toEqual(['weka', 'cluster', 'destroy', guid]);
    expect(() => clusterDestroyCall('not-a-guid')).toThrow(/cluster GUID/);
  });

  it.each([
    ['runs when the cluster is listed and empty', [{ name: 'a', guid }], [], 'run'],
    ['is already done when the cluster is not listed', [], [], 'already-done'],
    ['runs for a listed cluster whose GUID differs only in case', [{ name: 'a', guid: guid.toUpperCase() }], [], 'run'],
  ] as const)('%s', (_, clusters, members, plan) => {
    expect(planClusterDestroy(clusters, members, guid)).toBe(plan);
  });

  it('is a conflict naming the containers still in the cluster', () => {
    expect(planClusterDestroy([{ name: 'a', guid }], [member], guid)).toEqual({
      conflict: `cluster ${guid} still has 1 container(s): 3 (drive-0)`,
    });
  });
});
