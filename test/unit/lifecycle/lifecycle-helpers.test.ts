// Conditions, allocation requests through the settings chain, and the pods the operator creates.
import { describe, expect, it } from 'vitest';
import { setCondition, toReason } from '../../../src/lifecycle/conditions.js';
import { wekaPod } from '../../../src/manifests/pods.js';
import { allocationRequest, usesDriveSharing } from '../../../src/node/requests.js';

describe('conditions', () => {
  const base = { type: 'Allocated', status: 'False' as const, reason: 'InsufficientDriveCapacity', message: 'full' };

  it('keeps the transition time while the status stays the same', () => {
    const first = setCondition([], base, '2026-01-01T00:00:00Z');
    const second = setCondition(first, { ...base, message: 'still full' }, '2026-01-01T00:05:00Z');
    expect(second).toHaveLength(1);
    expect(second[0]).toMatchObject({ message: 'still full', lastTransitionTime: '2026-01-01T00:00:00Z' });
  });

  it('moves the transition time when the status changes', () => {
    const first = setCondition([], base, '2026-01-01T00:00:00Z');
    const second = setCondition(first, { ...base, status: 'True', reason: 'Allocated' }, '2026-01-01T00:05:00Z');
    expect(second[0]!.lastTransitionTime).toBe('2026-01-01T00:05:00Z');
  });

  it('turns any error type into a valid CamelCase reason', () => {
    expect(toReason('InsufficientDriveCapacity')).toBe('InsufficientDriveCapacity');
    expect(toReason('weka command refused')).toBe('wekaCommandRefused');
    expect(toReason('409 conflict')).toMatch(/^[A-Za-z][A-Za-z0-9]*$/);
    expect(toReason('')).toMatch(/^[A-Za-z]/);
  });
});

describe('allocation request through the settings chain', () => {
  it('takes the container spec over the cluster template, field by field, including 0', () => {
    expect(allocationRequest({ driveCores: 0 }, { driveCores: 4, containerCapacity: 8000 })).toEqual({
      driveCores: 0,
      containerCapacity: 8000,
    });
    expect(
      allocationRequest({}, { driveCores: 4, containerCapacity: 8000, driveTypesRatio: { tlc: 4, qlc: 1 } }),
    ).toEqual({
      driveCores: 4,
      containerCapacity: 8000,
      driveTypesRatio: { tlc: 4, qlc: 1 },
    });
  });

  it('takes the allocation mode whole from the narrowest layer that sets a capacity', () => {
    const template = { driveCores: 2, numDrives: 4, driveCapacity: 1000 };
    expect(allocationRequest({ containerCapacity: 6000 }, template)).toEqual({
      driveCores: 2,
      containerCapacity: 6000,
    });
    expect(allocationRequest({ driveCores: 3 }, template)).toEqual({
      driveCores: 3,
      numDrives: 4,
      driveCapacity: 1000,
    });
  });

  it('lets a ratio of the container replace the template ratio whole', () => {
    expect(
      allocationRequest(
        { containerCapacity: 1, driveTypesRatio: { tlc: 1, qlc: 0 } },
        { driveTypesRatio: { tlc: 4, qlc: 1 } },
      ).driveTypesRatio,
    ).toEqual({ tlc: 1, qlc: 0 });
  });

  it('turns drive sharing on when either layer sets a capacity', () => {
    expect(usesDriveSharing({}, { containerCapacity: 100 })).toBe(true);
    expect(usesDriveSharing({ driveCapacity: 100 })).toBe(true);
    expect(usesDriveSharing({ driveCores: 2, numDrives: 2 }, { driveCores: 2 })).toBe(false);
  });
});

describe('weka pods', () => {
  it("pins a drive container's pod to its node through the scheduler and mounts the node ssdproxy directory", () => {
    const pod = wekaPod({
      name: 'd',
      namespace: 'ns',
      node: 'n1',
      image: 'img',
      role: 'drive',
      owner: 'ns/d',
      imagePullSecret: 'pull',
    });
    expect(pod.spec.nodeName).toBeUndefined();
    expect(pod.spec.affinity?.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms).toEqual([
      { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] },
    ]);
    expect(pod.spec.tolerations).toEqual([{ operator: 'Exists' }]);
    expect(pod.spec.volumes).toContainEqual({
      name: 'ssdproxy',
      hostPath: { path: '/opt/k8s-weka/ssdproxy/', type: 'DirectoryOrCreate' },
    });
    expect(pod.spec.containers[0]!.volumeMounts).toContainEqual({
      name: 'ssdproxy',
      mountPath: '/host-binds/ssdproxy',
    });
    expect(pod.spec.imagePullSecrets).toEqual([{ name: 'pull' }]);
    expect(pod.metadata.labels['app.kubernetes.io/managed-by']).toBe('weka-drives-operator');
  });
});
