import { describe, expect, it } from 'vitest';
import { activitySummary } from '../../../src/lifecycle/activity-summary.js';

const ref = { namespace: 'tenant-a', name: 'drive-0' };
const target = { namespace: 'weka-operator-system', name: 'drive-0-pod', container: 'weka' };

describe('activity summaries in the Temporal UI', () => {
  it.each([
    ['readContainer', ref, 'read container tenant-a/drive-0'],
    ['nodeExists', 'node-1', 'node exists node-1'],
    [
      'writeStatus',
      { kind: 'WekaContainer', ref, uid: 'u', status: { phase: 'Ready', conditions: [] }, events: [] },
      'write status tenant-a/drive-0 phase Ready',
    ],
    [
      'writeStatus',
      {
        kind: 'WekaContainer',
        ref,
        uid: 'u',
        events: [
          { name: 'drive-0.a', type: 'Normal', reason: 'Allocated', message: 'x' },
          { name: 'drive-0.b', type: 'Warning', reason: 'StepFailed', message: 'y' },
        ],
      },
      'write status tenant-a/drive-0 Events Allocated, StepFailed',
    ],
    [
      'recordEvent',
      { kind: 'WekaContainer', ref, type: 'Warning', reason: 'AllocationFailed', message: 'x' },
      'record event tenant-a/drive-0 Warning AllocationFailed',
    ],
    [
      'signVirtualDrive',
      { target, node: 'node-1', drive: { virtualUUID: 'v-1', physicalUUID: 'p' }, clusterGUID: 'g' },
      'sign virtual drive in pod weka-operator-system/drive-0-pod on node-1 drive v-1',
    ],
    [
      'sendMutexRequest',
      { mutexId: 'weka-node/node-1', request: { kind: 'allocate', requestId: 'r' }, node: 'node-1' },
      'send mutex request on node-1 to weka-node/node-1 allocate',
    ],
    [
      'removeWekaContainer',
      { target, containerId: 3, name: 'drive-0' },
      'remove weka container in pod weka-operator-system/drive-0-pod drive-0',
    ],
    [
      'ensureDeviceSet',
      { ref, uid: 'u', set: 'nvme', node: 'node-2' },
      'ensure device set tenant-a/drive-0 on node-2 set nvme',
    ],
    ['deviceSetRemnants', { uid: 'u' }, 'device set remnants'],
    ['answerMutexRequests', [1, 2], 'answer mutex requests'],
    ['anything', undefined, 'anything'],
  ])('%s', (activity, input, summary) => {
    expect(activitySummary(activity, input)).toBe(summary);
  });

  it('stays one bounded line whatever the input', () => {
    const long = activitySummary('readContainer', { namespace: 'n', name: 'x'.repeat(500) });
    expect(long.length).toBeLessThanOrEqual(200);
    expect(long.endsWith('…')).toBe(true);
  });
});
