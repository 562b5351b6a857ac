import { describe, expect, it } from 'vitest';
import {
  findDriveByVirtualUUID,
  planJoin,
  nextDriveRemovalStep,
  planVirtualAdd,
  planVirtualRemove,
  type ClusterDrive,
  type DriveRemovalStep,
  type DriveInfo,
} from '../../../src/weka/index.js';

const VIRTUAL = '11111111-2222-4333-8444-555555555555';
const OTHER_VIRTUAL = '22222222-2222-4333-8444-555555555555';
const CLUSTER = 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee';
const OTHER_CLUSTER = 'bbbbbbbb-bbbb-4ccc-8ddd-eeeeeeeeeeee';
const DRIVE = '99999999-8888-4777-8666-555555555555';

const unsigned: DriveInfo = {
  devicePath: '/dev/nvme0n1',
  serial: 'S1',
  capacityGiB: 1000,
  type: 'TLC',
  signature: 'none',
  physicalUUID: null,
  virtualDrives: [],
};
const proxy: DriveInfo = { ...unsigned, signature: 'proxy', physicalUUID: 'fb05d910-0000-4000-8000-000000000001' };
const withVirtual: DriveInfo = {
  ...proxy,
  virtualDrives: [{ virtualUUID: VIRTUAL, ownerClusterGUID: CLUSTER, sizeGiB: 400 }],
};
const addRequest = { devicePath: '/dev/nvme0n1', virtualUUID: VIRTUAL, ownerClusterGUID: CLUSTER, sizeGiB: 400 };

describe('planVirtualAdd', () => {
  it('runs when the UUID is absent and capacity suffices', () => {
    expect(planVirtualAdd(proxy, addRequest)).toBe('run');
    expect(planVirtualAdd(withVirtual, { ...addRequest, virtualUUID: OTHER_VIRTUAL, sizeGiB: 600 })).toBe('run');
  });

  it('is already done when the same UUID is signed for the same cluster and size (a lost answer)', () => {
    expect(planVirtualAdd(withVirtual, addRequest)).toBe('already-done');
    expect(planVirtualAdd(withVirtual, { ...addRequest, virtualUUID: VIRTUAL.toUpperCase() })).toBe('already-done');
  });

  it('reports a conflict when the UUID is signed for another cluster or size', () => {
    expect(planVirtualAdd(withVirtual, { ...addRequest, ownerClusterGUID: OTHER_CLUSTER })).toHaveProperty('conflict');
    expect(planVirtualAdd(withVirtual, { ...addRequest, sizeGiB: 401 })).toHaveProperty('conflict');
  });

  it('reports a conflict when the device is not signed for proxy or too full', () => {
    expect(planVirtualAdd(unsigned, addRequest)).toEqual({ conflict: expect.stringContaining('not signed for proxy') });
    expect(planVirtualAdd(withVirtual, { ...addRequest, virtualUUID: OTHER_VIRTUAL, sizeGiB: 601 })).toEqual({
      conflict: expect.stringContaining('600 GiB left'),
    });
  });

  it('reports a conflict when the probe read a different device', () => {
    expect(planVirtualAdd(proxy, { ...addRequest, devicePath: '/dev/nvme1n1' })).toHaveProperty('conflict');
  });
});

describe('planVirtualRemove', () => {
  const removeRequest = { devicePath: '/dev/nvme0n1', virtualUUID: VIRTUAL, ownerClusterGUID: CLUSTER };

  it('runs when the UUID is signed for the cluster and is done when it is gone', () => {
    expect(planVirtualRemove(withVirtual, removeRequest)).toBe('run');
    expect(planVirtualRemove(proxy, removeRequest)).toBe('already-done');
  });

  it("will not remove another cluster's virtual drive", () => {
    expect(planVirtualRemove(withVirtual, { ...removeRequest, ownerClusterGUID: OTHER_CLUSTER })).toHaveProperty(
      'conflict',
    );
  });
});

describe('the drive at a path is still the one the node recorded', () => {
  const PHYSICAL = proxy.physicalUUID!;
  const OTHER_PHYSICAL = 'fb05d910-0000-4000-8000-000000000002';
  const recorded = { physicalUUID: PHYSICAL, serial: 'S1' };
  const removeRequest = { devicePath: '/dev/nvme0n1', virtualUUID: VIRTUAL, ownerClusterGUID: CLUSTER };

  it('signs and unsigns on the recorded drive, whatever the case of its UUID', () => {
    expect(planVirtualAdd(proxy, { ...addRequest, expected: recorded })).toBe('run');
    expect(planVirtualAdd(proxy, { ...addRequest, expected: { physicalUUID: PHYSICAL.toUpperCase() } })).toBe('run');
    expect(planVirtualRemove(withVirtual, { ...removeRequest, expected: recorded })).toBe('run');
  });

  it.each<[string, DriveInfo, { physicalUUID: string; serial?: string }, string]>([
    [
      'another proxy drive',
      { ...proxy, physicalUUID: OTHER_PHYSICAL, serial: 'S2' },
      recorded,
      `/dev/nvme0n1 is now physical drive ${OTHER_PHYSICAL} (serial S2), not physical drive ${PHYSICAL} (serial S1) as the node recorded it`,
    ],
    [
      'the same UUID on a drive with another serial',
      { ...proxy, serial: 'S9' },
      recorded,
      `/dev/nvme0n1 is now physical drive ${PHYSICAL} (serial S9), not physical drive ${PHYSICAL} (serial S1)`,
    ],
    [
      'a drive not signed for Weka',
      { ...unsigned, serial: 'S3' },
      { physicalUUID: PHYSICAL },
      `/dev/nvme0n1 is now a drive not signed for Weka (serial S3), not physical drive ${PHYSICAL} as the node recorded it`,
    ],
  ])('refuses %s, naming both', (_what, found, expected, message) => {
    for (const plan of [
      planVirtualAdd(found, { ...addRequest, expected }),
      planVirtualRemove(found, { ...removeRequest, expected }),
    ]) {
      expect(plan).toEqual({ conflict: expect.stringContaining(message) });
      expect((plan as { conflict: string }).conflict).toContain('refusing to touch it');
    }
  });
});

describe('the drive to add or remove', () => {
  const drive = (status: string): ClusterDrive => ({
    uuid: VIRTUAL,
    devicePath: '/dev/nvme0n1',
    serial: 'S1',
    sizeBytes: 400 * 2 ** 30,
    status,
  });

  it('finds a virtual drive by its virtual UUID, in any case, only while it is listed', () => {
    expect(findDriveByVirtualUUID([drive('ACTIVE')], VIRTUAL.toUpperCase())?.uuid).toBe(VIRTUAL);
    expect(findDriveByVirtualUUID([], VIRTUAL)).toBeUndefined();
  });

  it.each<[string, ClusterDrive[], DriveRemovalStep]>([
    ['a drive the cluster does not have', [], 'already-done'],
    ['an active drive', [drive('ACTIVE')], 'deactivate'],
    ['an inactive drive', [drive('INACTIVE')], 'remove'],
    ['a drive whose data is still moving', [drive('PHASING_OUT')], { wait: 'PHASING_OUT' }],
    ['another drive than the one asked for', [{ ...drive('ACTIVE'), uuid: DRIVE }], 'already-done'],
  ])('takes out %s: %j', (_what, shown, step) => {
    expect(nextDriveRemovalStep(shown, VIRTUAL)).toEqual(step);
  });
});

describe('the join plan', () => {
  const member = { state: 'member', clusterGUID: CLUSTER, containerId: 4 } as const;
  it.each([
    ['a member of the cluster asked for', member, CLUSTER, 'already-done'],
    ['a member of the cluster, its GUID in another case', member, CLUSTER.toUpperCase(), 'already-done'],
    ['a member, no cluster named yet (standalone)', member, undefined, 'already-done'],
    ['a stem', { state: 'stem' }, CLUSTER, 'run'],
    ['an agent that cannot say yet', { state: 'unknown', reason: 'starting' }, CLUSTER, { wait: 'starting' }],
  ] as const)('for %s: %j', (_, identity, guid, plan) => {
    expect(planJoin(identity, guid)).toEqual(plan);
  });

  it('never moves a container of another cluster, naming both', () => {
    const other = 'bbbbbbbb-0000-4000-8000-000000000002';
    expect(planJoin(member, other)).toEqual({
      conflict: `its Weka container is container 4 of cluster ${CLUSTER}, not of ${other}`,
    });
  });
});
