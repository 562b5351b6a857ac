import { describe, expect, it } from 'vitest';
import type { StorageClassDeviceSet } from '../../../src/api/schemas/device-sets.js';
import {
  claimManifest,
  deviceSetClaims,
  deviceSetDriveType,
  deviceSetNodes,
  deviceSetProblem,
  deviceSetReadiness,
  devicePod,
  meetsRequirement,
} from '../../../src/manifests/device-set-pods.js';

const cluster = {
  namespace: 'tenant-a',
  name: 'alpha',
  uid: 'uid-alpha',
  image: 'quay.io/weka.io/weka-in-container:4.4',
};
const node = { name: 'node-1', uid: 'node-uid-1' };

function set(extra: Partial<StorageClassDeviceSet> = {}): StorageClassDeviceSet {
  return {
    name: 'fast',
    count: 2,
    volumeClaimTemplates: [
      { spec: { storageClassName: 'local-nvme', volumeMode: 'Block', resources: { requests: { storage: '1Ti' } } } },
    ],
    ...extra,
  };
}

describe('device set claims and pods', () => {
  it('claims one volume per template for each device, each device in a pod of its own', () => {
    const twoTemplates = set({
      volumeClaimTemplates: [
        { spec: { volumeMode: 'Block', resources: { requests: { storage: '1Ti' } } } },
        { metadata: { name: 'meta' }, spec: { volumeMode: 'Block', resources: { requests: { storage: '500Gi' } } } },
      ],
    });
    const claims = deviceSetClaims(cluster, twoTemplates, 'node-1');
    expect(claims.map((c) => [c.index, c.template, c.devicePath, c.storage])).toEqual([
      [0, 'data', '/dev/weka-set/data', '1Ti'],
      [0, 'meta', '/dev/weka-set/meta', '500Gi'],
      [1, 'data', '/dev/weka-set/data', '1Ti'],
      [1, 'meta', '/dev/weka-set/meta', '500Gi'],
    ]);
    expect(new Set(claims.map((c) => c.name)).size).toBe(4);
    expect(claims[0]!.pod).toBe(claims[1]!.pod);
    expect(claims[0]!.pod).not.toBe(claims[2]!.pod);
    for (const c of claims) expect(c.name).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
  });

  it('names the objects of another cluster, or of another node, differently', () => {
    const [a] = deviceSetClaims(cluster, set(), 'node-1');
    const [b] = deviceSetClaims({ ...cluster, uid: 'uid-other' }, set(), 'node-1');
    const [c] = deviceSetClaims(cluster, set(), 'node-2');
    expect(new Set([a!.name, b!.name, c!.name]).size).toBe(3);
  });

  it('keeps the names of the longest cluster, set and node names valid', () => {
    const long = { ...cluster, name: 'a'.repeat(253) };
    const longest = set({
      name: 'x'.repeat(16),
      volumeClaimTemplates: [
        {
          metadata: { name: 't'.repeat(16) },
          spec: { volumeMode: 'Block', resources: { requests: { storage: '1Ti' } } },
        },
      ],
    });
    for (const c of deviceSetClaims(long, { ...longest, count: 32 }, 'n'.repeat(253))) {
      expect(c.name.length).toBeLessThanOrEqual(253);
      expect(c.pod.length).toBeLessThanOrEqual(253);
    }
    const pod = devicePod(long, longest, { name: 'n'.repeat(253), uid: 'u' }, 0, 'ns');
    for (const v of pod.spec.volumes) expect(v.name).toMatch(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/);
  });

  it("makes the pod from the device's claims, placed by the scheduler on the node", () => {
    const pod = devicePod(cluster, set({ resources: { requests: { cpu: '100m' } } }), node, 1, 'weka-operator');
    expect(pod.spec).not.toHaveProperty('nodeName');
    expect(pod.spec.affinity).toEqual({
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-1'] }] }],
        },
      },
    });
    const [claim] = deviceSetClaims(cluster, set(), 'node-1').filter((c) => c.index === 1);
    expect(pod.metadata.name).toBe(claim!.pod);
    expect(pod.spec.volumes).toEqual([{ name: 'data', persistentVolumeClaim: { claimName: claim!.name } }]);
    expect(pod.spec.containers[0]!.volumeDevices).toEqual([{ name: 'data', devicePath: '/dev/weka-set/data' }]);
    expect(pod.spec.containers[0]!.resources).toEqual({ requests: { cpu: '100m' } });
    expect(pod.metadata.ownerReferences).toEqual([
      { apiVersion: 'v1', kind: 'Node', name: 'node-1', uid: 'node-uid-1' },
    ]);
  });

  it("makes a Block claim of the template's class, labelled with its cluster and set, owned by nobody, kept by the operator's finalizer", () => {
    const [claim] = deviceSetClaims(cluster, set(), 'node-1');
    const pvc = claimManifest(cluster, set(), node, claim!, 'weka-operator');
    expect(pvc.metadata).not.toHaveProperty('ownerReferences');
    expect(pvc.metadata.finalizers).toEqual(['weka.weka.io/device-in-use']);
    expect(pvc.metadata.namespace).toBe('weka-operator');
    expect(pvc.metadata.labels).toMatchObject({
      'weka.weka.io/cluster-uid': 'uid-alpha',
      'weka.weka.io/device-set': 'fast',
    });
    expect(pvc.metadata.annotations).toMatchObject({
      'weka.weka.io/node': 'node-1',
      'weka.weka.io/cluster': 'tenant-a/alpha',
    });
    expect(pvc.spec).toEqual({
      storageClassName: 'local-nvme',
      volumeMode: 'Block',
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: '1Ti' } },
    });
  });

  it("drops the operator's own keys from a template's labels and annotations", () => {
    const forged = set({
      volumeClaimTemplates: [
        {
          metadata: {
            labels: { team: 'a', 'weka.weka.io/cluster-uid': 'other' },
            annotations: { note: 'x', 'weka.weka.io/physical-uuid': '11111111-0000-4000-8000-000000000001' },
          },
          spec: { volumeMode: 'Block', resources: { requests: { storage: '1Ti' } } },
        },
      ],
    });
    const [claim] = deviceSetClaims(cluster, forged, 'node-1');
    const pvc = claimManifest(cluster, forged, node, claim!, 'weka-operator');
    expect(pvc.metadata.labels).toMatchObject({ team: 'a', 'weka.weka.io/cluster-uid': 'uid-alpha' });
    expect(pvc.metadata.annotations).toMatchObject({ note: 'x' });
    expect(pvc.metadata.annotations).not.toHaveProperty('weka.weka.io/physical-uuid');
  });
});

describe('device set checks', () => {
  it('refuses a claim smaller than the smallest virtual drive', () => {
    const small = set({
      volumeClaimTemplates: [{ spec: { volumeMode: 'Block', resources: { requests: { storage: '383Gi' } } } }],
    });
    expect(deviceSetProblem(small)).toMatchObject({ reason: 'ClaimTooSmall' });
    expect(deviceSetProblem(small)?.message).toContain('383Gi');
    expect(
      deviceSetProblem(
        set({
          volumeClaimTemplates: [{ spec: { volumeMode: 'Block', resources: { requests: { storage: '384Gi' } } } }],
        }),
      ),
    ).toBeNull();
  });

  it('declares TLC unless the config says QLC', () => {
    expect(deviceSetDriveType(set())).toBe('TLC');
    expect(deviceSetDriveType(set({ config: { driveType: 'QLC' } }))).toBe('QLC');
  });

  it("takes the cluster's nodes that its placement matches", () => {
    const nodes = [
      { name: 'b', labels: { zone: 'z1', disks: '4' } },
      { name: 'a', labels: { zone: 'z2', disks: '8' } },
      { name: 'c', labels: {} },
    ];
    expect(deviceSetNodes(set(), nodes)).toEqual(['a', 'b', 'c']);
    const only = (
      exprs: { key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt'; values?: string[] }[][],
    ) =>
      set({
        placement: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: exprs.map((e) => ({ matchExpressions: e })),
            },
          },
        },
      });
    expect(deviceSetNodes(only([[{ key: 'zone', operator: 'In', values: ['z1'] }]]), nodes)).toEqual(['b']);
    expect(deviceSetNodes(only([[{ key: 'disks', operator: 'Gt', values: ['5'] }]]), nodes)).toEqual(['a']);
    expect(
      deviceSetNodes(
        only([[{ key: 'zone', operator: 'DoesNotExist' }], [{ key: 'zone', operator: 'In', values: ['z2'] }]]),
        nodes,
      ),
    ).toEqual(['a', 'c']);
  });

  it('reads node affinity requirements as the scheduler does', () => {
    const labels = { zone: 'z1', n: '10' };
    expect(meetsRequirement({ key: 'zone', operator: 'NotIn', values: ['z2'] }, labels)).toBe(true);
    expect(meetsRequirement({ key: 'other', operator: 'NotIn', values: ['z2'] }, labels)).toBe(true);
    expect(meetsRequirement({ key: 'zone', operator: 'Exists' }, labels)).toBe(true);
    expect(meetsRequirement({ key: 'n', operator: 'Lt', values: ['11'] }, labels)).toBe(true);
    expect(meetsRequirement({ key: 'zone', operator: 'Lt', values: ['11'] }, labels)).toBe(false);
  });
});

describe('device set readiness', () => {
  const running = { phase: 'Running' };
  const bound = (name: string) => ({ name, phase: 'Bound' });

  it('is ready for the devices whose claims are bound and whose pod runs', () => {
    const r = deviceSetReadiness({
      set: 'fast',
      node: 'node-1',
      missingClasses: [],
      devices: [
        { index: 0, claims: [bound('c0')], pod: running },
        {
          index: 1,
          claims: [{ name: 'c1', phase: 'Pending' }],
          pod: { phase: 'Pending', unschedulable: '0/1 nodes are available' },
        },
      ],
    });
    expect(r.ready).toEqual([0]);
    expect(r.problem).toMatchObject({ reason: 'ClaimPending' });
    expect(r.problem?.message).toContain('c1');
    expect(r.problem?.message).toContain('0/1 nodes are available');
  });

  it('names a StorageClass that does not exist first', () => {
    const r = deviceSetReadiness({
      set: 'fast',
      node: 'n',
      missingClasses: ['nope'],
      devices: [{ index: 0, claims: [{ name: 'c0', phase: 'Pending' }], pod: null }],
    });
    expect(r.problem).toMatchObject({ reason: 'StorageClassNotFound' });
    expect(r.problem?.message).toContain('nope');
  });

  it('says which device pods do not run, and has no problem when all are ready', () => {
    const stopped = deviceSetReadiness({
      set: 's',
      node: 'n',
      missingClasses: [],
      devices: [{ index: 0, claims: [bound('c0')], pod: { phase: 'Failed' } }],
    });
    expect(stopped.problem).toMatchObject({ reason: 'DevicePodNotRunning' });
    const lost = deviceSetReadiness({
      set: 's',
      node: 'n',
      missingClasses: [],
      devices: [{ index: 0, claims: [{ name: 'c0', phase: 'Lost' }], pod: running }],
    });
    expect(lost.problem).toMatchObject({ reason: 'ClaimLost' });
    const ok = deviceSetReadiness({
      set: 's',
      node: 'n',
      missingClasses: [],
      devices: [{ index: 0, claims: [bound('c0')], pod: running }],
    });
    expect(ok).toEqual({ ready: [0], problem: null });
  });
});
