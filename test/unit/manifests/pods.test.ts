// What to do about the pod that should run under a name, from its phase and deletionTimestamp.
import { describe, expect, it } from 'vitest';
import {
  CONTAINER_NAME_LABEL,
  CONTAINER_NAMESPACE_LABEL,
  decidePod,
  describePod,
  driveContainerPod,
  identityEnv,
  nodeOwner,
  podEnded,
  podRequests,
  wekaPod,
  type PodFacts,
} from '../../../src/manifests/pods.js';
import { proxyResources } from '../../../src/manifests/pod-resources.js';

const DELETING = '2026-01-01T00:00:00Z';
const PROXY_POD = { name: 'p', namespace: 'ops', node: 'n', image: 'i', role: 'drive' } as const;

describe('decidePod', () => {
  it('creates a missing pod', () => {
    expect(decidePod(null)).toBe('create');
    expect(decidePod(undefined)).toBe('create');
  });

  it.each(['Pending', 'Running', 'Unknown', undefined])('keeps a pod in phase %s', (phase) => {
    expect(decidePod({ uid: 'u', phase })).toBe('keep');
  });

  it.each(['Failed', 'Succeeded'])(
    'replaces a pod that ended in phase %s: the operator’s pods run for ever',
    (phase) => {
      expect(decidePod({ uid: 'u', phase, reason: 'Evicted' })).toBe('replace');
    },
  );

  it("replaces a running pod whose environment lacks its container's ports or has others, keeps one that has them", () => {
    const wanted = [
      { name: 'PORT', value: '14000' },
      { name: 'AGENT_PORT', value: '14100' },
    ];
    expect(decidePod({ uid: 'u', phase: 'Running' }, wanted)).toBe('replace');
    expect(decidePod({ uid: 'u', phase: 'Running', env: { PORT: '14101', AGENT_PORT: '14100' } }, wanted)).toBe(
      'replace',
    );
    expect(decidePod({ uid: 'u', phase: 'Running', env: { PORT: '14000', AGENT_PORT: '14100', X: '1' } }, wanted)).toBe(
      'keep',
    );
    expect(decidePod({ uid: 'u', phase: 'Running', env: {} })).toBe('keep');
    expect(decidePod({ uid: 'u', phase: 'Running', deletionTimestamp: DELETING }, wanted)).toBe('wait-for-deletion');
  });

  it.each(['Pending', 'Running', 'Failed', 'Succeeded', 'Unknown'])(
    'waits out a pod being deleted, whatever its phase (%s)',
    (phase) => {
      expect(decidePod({ uid: 'u', phase, deletionTimestamp: DELETING })).toBe('wait-for-deletion');
      expect(decidePod({ uid: 'u', phase, deletionTimestamp: new Date(DELETING) })).toBe('wait-for-deletion');
    },
  );

  it('says a pod ended only for the terminal phases', () => {
    const phases = ['Pending', 'Running', 'Unknown', 'Failed', 'Succeeded'];
    expect(phases.filter((phase) => podEnded({ phase }))).toEqual(['Failed', 'Succeeded']);
  });
});

describe('describePod', () => {
  it('says what a pod is, with the reason and message when there are some', () => {
    const evicted: PodFacts = {
      phase: 'Failed',
      reason: 'Evicted',
      message: 'The node was low on resource: memory.',
    };
    expect(describePod(evicted)).toBe('phase Failed (Evicted: The node was low on resource: memory.)');
    expect(describePod({ phase: 'Failed', reason: 'Shutdown' })).toBe('phase Failed (Shutdown)');
    expect(describePod({ phase: 'Running' })).toBe('phase Running');
    expect(describePod({})).toBe('phase unknown');
    expect(describePod({ phase: 'Running', deletionTimestamp: DELETING })).toBe('being deleted, phase Running');
    expect(describePod(null)).toBe('missing');
  });

  it('says why its container waits to start: a pod Pending for an image that cannot be pulled', () => {
    expect(describePod({ phase: 'Pending', waiting: 'ErrImagePull: failed to pull image x: not found' })).toBe(
      'phase Pending, its container waiting (ErrImagePull: failed to pull image x: not found)',
    );
  });
});

describe('wekaPod', () => {
  it('restarts its container always: only a pod that ended as a whole needs replacing', () => {
    const pod = wekaPod({ name: 'p', namespace: 'ns', node: 'n', image: 'i', role: 'drive', owner: 'ns/p' });
    expect(pod.spec.restartPolicy).toBe('Always');
  });

  it('passes its ports as the weka-in-container image reads them: PORT and WEKA_PORT the base port, AGENT_PORT', () => {
    const input = { name: 'p', namespace: 'ns', node: 'n', image: 'i', role: 'drive', owner: 'ns/p' } as const;
    const env = (pod: ReturnType<typeof wekaPod>) =>
      Object.fromEntries(pod.spec.containers[0]!.env.map((e) => [e.name, 'value' in e ? e.value : undefined]));
    expect(env(wekaPod({ ...input, ports: { wekaPort: 35000, agentPort: 35303 } }))).toMatchObject({
      PORT: '35000',
      WEKA_PORT: '35000',
      AGENT_PORT: '35303',
    });
    expect(Object.keys(env(wekaPod(input)))).not.toContain('PORT');
  });

  it("gives a standalone container's pod its spec.joinIps as JOIN_IPS, and a member's none", () => {
    const container = (spec: object) =>
      ({
        metadata: { name: 'drive-0', namespace: 'tenant-a', uid: 'uid-1' },
        spec: { mode: 'drive', nodeName: 'n', image: 'i', joinIps: ['10.0.0.5:14000', '[fd00::7]:14000'], ...spec },
      }) as never;
    const given = { virtualDrives: [], wekaPort: 35000, agentPort: 35300 } as never;
    const env = (pod: ReturnType<typeof wekaPod>) =>
      Object.fromEntries(pod.spec.containers[0]!.env.flatMap((e) => ('value' in e ? [[e.name, e.value]] : [])));
    expect(env(driveContainerPod(container({}), given))['JOIN_IPS']).toBe('10.0.0.5:14000,[fd00::7]:14000');
    expect(env(driveContainerPod(container({ cluster: 'c' }), given))).not.toHaveProperty('JOIN_IPS');
    expect(env(driveContainerPod(container({ joinIps: [] }), given))).not.toHaveProperty('JOIN_IPS');
  });

  it("carries the reference's env: name, mode, id, memory, UDP networking, and the pod's node, address and identity", () => {
    const drive = driveContainerPod(
      {
        metadata: { name: 'drive-0', namespace: 'tenant-a', uid: 'uid-1' },
        spec: { mode: 'drive', nodeName: 'n', image: 'i', driveCores: 2, numDrives: 4 },
      } as never,
      { virtualDrives: [], wekaPort: 35000, agentPort: 35300 } as never,
    );
    expect(drive.spec.containers[0]!.env).toEqual([
      { name: 'NAME', value: 'tenant-a_drive-0' },
      { name: 'MODE', value: 'drive' },
      { name: 'WEKA_CONTAINER_ID', value: 'uid-1' },
      { name: 'PORT', value: '35000' },
      { name: 'WEKA_PORT', value: '35000' },
      { name: 'AGENT_PORT', value: '35300' },
      { name: 'MEMORY', value: '2800MiB' },
      { name: 'NETWORK_DEVICE', value: 'udp' },
      { name: 'UDP_MODE', value: 'false' },
      { name: 'NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
      { name: 'MANAGEMENT_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
      { name: 'POD_ID', valueFrom: { fieldRef: { fieldPath: 'metadata.uid' } } },
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
    ]);
    const proxy = wekaPod({
      ...PROXY_POD,
      role: 'ssdproxy',
      owner: 'ops/p',
      resources: proxyResources([{ capacityGiB: 7680 }]),
    });
    expect(proxy.spec.containers[0]!.env.slice(0, 2)).toEqual([
      { name: 'NAME', value: 'ssdproxy' },
      { name: 'MODE', value: 'ssdproxy' },
    ]);
    expect(proxy.spec.containers[0]!.env).toContainEqual({ name: 'MEMORY', value: `${378 + 4 * 8}MiB` });
  });

  it("mounts the host's /dev, /sys, /run and os-release, and huge pages, where the reference's pods have them", () => {
    const pod = wekaPod({ ...PROXY_POD, owner: 'ops/p' });
    const mounts = Object.fromEntries(pod.spec.containers[0]!.volumeMounts.map((m) => [m.mountPath, m.name]));
    const volumes = Object.fromEntries(pod.spec.volumes.map(({ name, ...source }) => [name, source]));
    expect(mounts).toMatchObject({
      '/dev': 'dev',
      '/sys': 'sys',
      '/host/run': 'run',
      '/hostside/etc/os-release': 'osrelease',
      '/dev/hugepages': 'hugepages',
    });
    expect(volumes).toMatchObject({
      dev: { hostPath: { path: '/dev' } },
      sys: { hostPath: { path: '/sys' } },
      run: { hostPath: { path: '/run' } },
      osrelease: { hostPath: { path: '/etc/os-release', type: 'File' } },
      hugepages: { emptyDir: { medium: 'HugePages-2Mi' } },
    });
  });

  it('keeps a running pod whatever its memory or downward variables: only its ports decide', () => {
    const input = { ...PROXY_POD, owner: 'ops/p', resources: proxyResources([]) };
    const env = wekaPod({ ...input, ports: { wekaPort: 35000, agentPort: 35300 } }).spec.containers[0]!.env;
    expect(identityEnv(env)).toEqual([
      { name: 'PORT', value: '35000' },
      { name: 'WEKA_PORT', value: '35000' },
      { name: 'AGENT_PORT', value: '35300' },
    ]);
  });

  it('names its WekaContainer in labels, so kubectl can select the pods of a container or a namespace', () => {
    const pod = wekaPod({ ...PROXY_POD, owner: 'tenant-a/drive-0' });
    expect(pod.metadata.labels).toMatchObject({
      [CONTAINER_NAME_LABEL]: 'drive-0',
      [CONTAINER_NAMESPACE_LABEL]: 'tenant-a',
    });
  });

  it('leaves out a name too long for a label value; the annotation still names it', () => {
    const long = `drive-${'x'.repeat(80)}`;
    const pod = wekaPod({ ...PROXY_POD, owner: `tenant-a/${long}` });
    expect(pod.metadata.labels).not.toHaveProperty(CONTAINER_NAME_LABEL);
    expect(pod.metadata.labels[CONTAINER_NAMESPACE_LABEL]).toBe('tenant-a');
    expect(pod.metadata.annotations?.['weka.weka.io/container']).toBe(`tenant-a/${long}`);
  });
});

describe('what pods ask the scheduler for', () => {
  const drive = (capacityGiB: number, type: 'TLC' | 'QLC') => ({
    virtualUUID: `v-${capacityGiB}-${type}`,
    physicalUUID: 'p',
    capacityGiB,
    serial: 's',
    type,
  });

  it('asks for the GiB of its virtual drives per drive type, each request equal to its limit', () => {
    const requests = podRequests({ virtualDrives: [drive(100, 'TLC'), drive(50, 'TLC'), drive(400, 'QLC')] });
    expect(requests).toEqual({
      'weka.io/shared-drives-capacity': '150',
      'weka.io/shared-drives-capacity-qlc': '400',
    });
    const pod = wekaPod({ name: 'd', namespace: 'ns', node: 'n', image: 'i', role: 'drive', owner: 'ns/d', requests });
    expect(pod.spec.containers[0]!.resources).toEqual({ requests, limits: requests });
  });

  it('asks for whole drives by count', () => {
    expect(podRequests({ virtualDrives: [], drives: ['S1', 'S2'] })).toEqual({ 'weka.io/drives': '2' });
  });

  it('asks for nothing before an allocation, and then sets no resources', () => {
    expect(podRequests(undefined)).toEqual({});
    const pod = wekaPod({
      name: 'd',
      namespace: 'ns',
      node: 'n',
      image: 'i',
      role: 'drive',
      owner: 'ns/d',
      requests: {},
    });
    expect(pod.spec.containers[0]!.resources).toBeUndefined();
  });

  it('binds the proxy pod to its node, owned by the node so that it goes with it', () => {
    const owners = [nodeOwner({ name: 'n', uid: 'node-uid' })];
    const pod = wekaPod({ name: 'p', namespace: 'ns', node: 'n', image: 'i', role: 'ssdproxy', owner: 'ns/p', owners });
    expect(pod.spec.nodeName).toBe('n');
    expect(pod.spec.affinity).toBeUndefined();
    expect(pod.metadata.ownerReferences).toEqual([{ apiVersion: 'v1', kind: 'Node', name: 'n', uid: 'node-uid' }]);
  });

  it("shares the host's PID namespace in the proxy pod only, where the host's disks and mounts are read", () => {
    const input = { name: 'p', namespace: 'ns', node: 'n', image: 'i', owner: 'ns/p' };
    expect(wekaPod({ ...input, role: 'ssdproxy' }).spec.hostPID).toBe(true);
    expect(wekaPod({ ...input, role: 'drive' }).spec.hostPID).toBeUndefined();
  });
});
