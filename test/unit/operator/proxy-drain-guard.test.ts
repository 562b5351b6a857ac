// A node's ssdproxy is held against evictions while drive containers' pods are on its node.
import { describe, expect, it } from 'vitest';
import { proxyName } from '../../../src/api/names.js';
import { watchedPodOf, type WatchedPod } from '../../../src/operator/pod-loss.js';
import { wekaPod } from '../../../src/manifests/pods.js';
import { proxiesToGuard, proxyGuardBudget, proxyGuardName } from '../../../src/operator/proxy-drain-guard.js';

const OPS = 'weka-operator-system';
const drive = (node: string, o: Partial<WatchedPod> = {}): WatchedPod => ({
  uid: `d-${node}-${o.phase ?? 'Running'}`,
  namespace: 'tenant-a',
  name: 'drive',
  role: 'drive',
  ownerUID: 'c1',
  node,
  phase: 'Running',
  deleting: false,
  ...o,
});
const proxy = (node: string, o: Partial<WatchedPod> = {}): WatchedPod => ({
  uid: `p-${node}`,
  namespace: OPS,
  name: proxyName(node),
  role: 'ssdproxy',
  ownerUID: `proxy-${node}`,
  node,
  phase: 'Running',
  deleting: false,
  ...o,
});

const withoutOwner = ({ ownerUID: _, ...pod }: WatchedPod): WatchedPod => pod;

describe('proxiesToGuard', () => {
  it.each<[string, WatchedPod[], string[]]>([
    ['a proxy with a running drive pod on its node', [proxy('n1'), drive('n1')], ['n1']],
    ['a proxy with a pending drive pod', [proxy('n1'), drive('n1', { phase: 'Pending' })], ['n1']],
    ['a proxy with a drive pod still terminating', [proxy('n1'), drive('n1', { deleting: true })], ['n1']],
    ['a proxy alone on its node', [proxy('n1'), drive('n2')], []],
    ['a proxy whose only drive pod ended (Failed)', [proxy('n1'), drive('n1', { phase: 'Failed' })], []],
    ['a proxy being deleted', [proxy('n1', { deleting: true }), drive('n1')], []],
    ['a proxy pod outside the operator namespace', [proxy('n1', { namespace: 'tenant-a' }), drive('n1')], []],
    ['a proxy pod of no proxy container', [withoutOwner(proxy('n1')), drive('n1')], []],
    ['two nodes, one with drives', [proxy('n1'), proxy('n2'), drive('n2')], ['n2']],
  ])('%s', (_, pods, nodes) => {
    expect([...proxiesToGuard(pods, OPS).keys()]).toEqual(nodes);
  });
});

describe('proxyGuardBudget', () => {
  it("selects only the node's proxy pod, lets none be evicted while healthy, and is the proxy container's", () => {
    const b = proxyGuardBudget({ node: 'n1', proxyUID: 'pu' }, OPS);
    expect(b.metadata).toMatchObject({ name: proxyGuardName('n1'), namespace: OPS });
    expect(b.metadata.ownerReferences).toEqual([
      { apiVersion: 'weka.weka.io/v1alpha1', kind: 'WekaContainer', name: proxyName('n1'), uid: 'pu' },
    ]);
    expect(b.spec.minAvailable).toBe(1);
    expect(b.spec.unhealthyPodEvictionPolicy).toBe('AlwaysAllow');
    const pod = (ownerUID: string, role: 'ssdproxy' | 'drive' = 'ssdproxy') =>
      wekaPod({ name: 'p', namespace: OPS, node: 'n1', image: 'i', role, owner: `${OPS}/p`, ownerUID });
    const selects = (p: ReturnType<typeof pod>) =>
      Object.entries(b.spec.selector.matchLabels).every(([k, v]) => p.metadata.labels[k] === v);
    expect(selects(pod('pu'))).toBe(true);
    expect(selects(pod('other'))).toBe(false);
    expect(selects(pod('pu', 'drive'))).toBe(false);
    // The pod watch reads the same pod back as the proxy of its container.
    const made = pod('pu');
    const read = watchedPodOf({
      ...made,
      metadata: { ...made.metadata, uid: 'x' },
      spec: { ...made.spec, nodeName: 'n1' },
    });
    expect(read).toMatchObject({ role: 'ssdproxy', ownerUID: 'pu', node: 'n1' });
  });
});
