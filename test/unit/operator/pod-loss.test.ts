// Whom the loss of one of the operator's pods concerns, as the watcher decides it.
import { describe, expect, it } from 'vitest';
import {
  containersToTell,
  podLost,
  readyContainersWithoutPods,
  watchedPodOf,
  type KnownContainer,
  type WatchedPod,
} from '../../../src/operator/pod-loss.js';
import { wekaPod } from '../../../src/manifests/pods.js';

const OPS = 'weka-system';
const containers = new Map<string, KnownContainer>(
  [
    { uid: 'a', namespace: 't1', name: 'drive-a', node: 'n1', phase: 'Ready' },
    { uid: 'b', namespace: 't2', name: 'drive-b', node: 'n1', phase: 'Ready' },
    { uid: 'c', namespace: 't1', name: 'drive-c', node: 'n2', phase: 'Allocating' },
  ].map((c) => [c.uid, c]),
);

const drivePod = (c: KnownContainer, over: Partial<WatchedPod> = {}): WatchedPod => ({
  uid: `pod-${c.uid}`,
  namespace: c.namespace,
  name: c.name,
  role: 'drive',
  ownerUID: c.uid,
  deleting: false,
  phase: 'Running',
  ...over,
});
const proxyPod = (node: string, over: Partial<WatchedPod> = {}): WatchedPod => ({
  uid: `proxy-${node}`,
  namespace: OPS,
  name: `weka-drives-proxy-${node}`,
  role: 'ssdproxy',
  node,
  deleting: false,
  phase: 'Running',
  ...over,
});

describe('watchedPodOf', () => {
  it("reads a drive container's pod as the operator makes it", () => {
    const manifest = wekaPod({
      name: 'drive-a',
      namespace: 't1',
      node: 'n1',
      image: 'i',
      role: 'drive',
      owner: 't1/drive-a',
      ownerUID: 'a',
    });
    const raw = { ...manifest, metadata: { ...manifest.metadata, uid: 'p1' }, status: { phase: 'Failed' } };
    expect(watchedPodOf(raw)).toEqual({
      uid: 'p1',
      namespace: 't1',
      name: 'drive-a',
      role: 'drive',
      ownerUID: 'a',
      phase: 'Failed',
      deleting: false,
    });
  });

  it.each([
    ['no managed-by label', { labels: { 'weka.weka.io/role': 'drive' } }],
    ['another manager', { labels: { 'app.kubernetes.io/managed-by': 'helm', 'weka.weka.io/role': 'drive' } }],
    ['a device pod', { labels: { 'app.kubernetes.io/managed-by': 'weka-drives-operator', 'weka.weka.io/role': 'x' } }],
  ])('skips a pod with %s', (_why, metadata) => {
    expect(watchedPodOf({ metadata: { uid: 'u', namespace: 'n', name: 'p', ...metadata } })).toBeUndefined();
  });

  it('sees a deletionTimestamp as a Date (a typed list) or a string (a watch event)', () => {
    const labels = { 'app.kubernetes.io/managed-by': 'weka-drives-operator', 'weka.weka.io/role': 'ssdproxy' };
    for (const deletionTimestamp of [new Date(), '2026-01-01T00:00:00Z'])
      expect(
        watchedPodOf({ metadata: { uid: 'u', namespace: 'n', name: 'p', labels, deletionTimestamp } })?.deleting,
      ).toBe(true);
  });
});

describe('podLost', () => {
  it.each<[string, Partial<WatchedPod>, boolean, boolean]>([
    ['running', {}, false, false],
    ['pending', { phase: 'Pending' }, false, false],
    ['unknown (its node stopped reporting)', { phase: 'Unknown' }, false, false],
    ['deleted', {}, true, true],
    ['being deleted (an eviction, a drain)', { deleting: true }, false, true],
    ['failed (a kubelet eviction)', { phase: 'Failed' }, false, true],
    ['succeeded', { phase: 'Succeeded' }, false, true],
  ])('a pod %s is lost: %s', (_what, over, deleted, lost) => {
    expect(podLost(drivePod(containers.get('a')!, over), deleted)).toBe(lost);
  });
});

describe('containersToTell', () => {
  it('tells a drive container of its own pod, and no one else', () => {
    expect(containersToTell(drivePod(containers.get('a')!), containers, OPS)).toEqual(['a']);
  });

  it("tells nobody of a pod that names a container's uid under another name or namespace", () => {
    const a = containers.get('a')!;
    expect(containersToTell(drivePod(a, { namespace: 'attacker' }), containers, OPS)).toEqual([]);
    expect(containersToTell(drivePod(a, { name: 'other' }), containers, OPS)).toEqual([]);
    expect(containersToTell(drivePod(a, { ownerUID: 'unknown' }), containers, OPS)).toEqual([]);
  });

  it("tells every drive container on a proxy pod's node", () => {
    expect(containersToTell(proxyPod('n1'), containers, OPS).sort()).toEqual(['a', 'b']);
    expect(containersToTell(proxyPod('n2'), containers, OPS)).toEqual(['c']);
  });

  it("tells nobody of a proxy pod outside the operator's namespace, or when that is not known", () => {
    expect(containersToTell(proxyPod('n1', { namespace: 't1' }), containers, OPS)).toEqual([]);
    expect(containersToTell(proxyPod('n1'), containers, undefined)).toEqual([]);
  });
});

describe('readyContainersWithoutPods', () => {
  const all = [drivePod(containers.get('a')!), drivePod(containers.get('b')!), proxyPod('n1')];

  it('finds none while every Ready container has its pod and its proxy', () => {
    expect(readyContainersWithoutPods(all, containers, OPS)).toEqual([]);
  });

  it('finds a Ready container whose pod is missing, not one that is still making its own', () => {
    expect(readyContainersWithoutPods(all.slice(1), containers, OPS)).toEqual(['a']);
    expect(readyContainersWithoutPods(all, containers, OPS)).not.toContain('c');
  });

  it('finds the Ready containers of a node whose proxy pod is missing', () => {
    expect(readyContainersWithoutPods(all.slice(0, 2), containers, OPS).sort()).toEqual(['a', 'b']);
    expect(readyContainersWithoutPods(all.slice(0, 2), containers, undefined)).toEqual([]);
  });

  it("does not take another object's pod of the same name for the container's", () => {
    const stale = drivePod(containers.get('a')!, { ownerUID: 'earlier' });
    expect(readyContainersWithoutPods([stale, ...all.slice(1)], containers, OPS)).toEqual(['a']);
  });
});
