// The cluster-ports mutex's decision: a range for each cluster that overlaps no other's, an
// override that would overlap refused, and singletons that avoid every container's ports.
import { describe, expect, it } from 'vitest';
import type { WekaCluster } from '../../../src/api/index.js';
import { emptyLedger, withAllocation } from '../../../src/node/allocation-ledger.js';
import { clusterRangesOf, decideClusterPorts, ledgerPortBlocks } from '../../../src/node/cluster-ports.js';

function cluster(name: string, spec: WekaCluster['spec']['ports'] = undefined, ports?: object): WekaCluster {
  return {
    apiVersion: 'weka.weka.io/v1alpha1',
    kind: 'WekaCluster',
    metadata: { name, namespace: 'ns', uid: `uid-${name}` },
    spec: { image: 'img', ...(spec ? { ports: spec } : {}) },
    ...(ports ? { status: { ports } } : {}),
  } as WekaCluster;
}

const A = cluster('a', undefined, {
  basePort: 35000,
  portRange: 500,
  lbPort: 35300,
  lbAdminPort: 35301,
  s3Port: 35302,
});

describe('cluster port decisions', () => {
  it('gives a new cluster the first free range after the others, with its range as text', () => {
    const b = cluster('b');
    expect(decideClusterPorts({ cluster: b, clusters: [A, b], containerPorts: [] })).toEqual({
      ok: true,
      write: true,
      ports: {
        basePort: 35500,
        portRange: 500,
        lbPort: 35800,
        lbAdminPort: 35801,
        s3Port: 35802,
        range: '35500-35999',
      },
    });
  });

  it.each([
    [35400, undefined, '35400-35899', '35000-35499'],
    [34600, 500, '34600-35099', '35000-35499'],
    [34000, 1001, '34000-35000', '35000-35499'],
  ])('refuses a basePort %s (range %s) overlapping another cluster', (basePort, portRange, asked, theirs) => {
    const b = cluster('b', { basePort, ...(portRange ? { portRange } : {}) });
    const decision = decideClusterPorts({ cluster: b, clusters: [A, b], containerPorts: [] });
    expect(decision).toMatchObject({ ok: false, error: { type: 'PortRangeTaken' }, waitForCapacity: true });
    if (decision.ok) return;
    expect(decision.error.message).toContain(`ports ${asked}, which overlap ports ${theirs} of WekaCluster ns/a`);
  });

  it('takes a basePort override that overlaps no other cluster as given', () => {
    const b = cluster('b', { basePort: 40000, portRange: 400 });
    expect(decideClusterPorts({ cluster: b, clusters: [A, b], containerPorts: [] })).toMatchObject({
      ok: true,
      ports: { basePort: 40000, portRange: 400, lbPort: 40300, range: '40000-40399' },
    });
  });

  it('keeps singletons away from every port a container holds on any node', () => {
    const b = cluster('b');
    const node1 = withAllocation(emptyLedger(), 'x', 'ns/x', { virtualDrives: [], wekaPort: 35600, agentPort: 35800 });
    const node2 = withAllocation(emptyLedger(), 'y', 'ns/y', { virtualDrives: [], wekaPort: 14000, agentPort: 35801 });
    const containerPorts = [...ledgerPortBlocks(node1), ...ledgerPortBlocks(node2)];
    expect(decideClusterPorts({ cluster: b, clusters: [A, b], containerPorts })).toMatchObject({
      ok: true,
      ports: { lbPort: 35802, lbAdminPort: 35803, s3Port: 35804 },
    });
  });

  it('answers a cluster whose status records its ports with them, writing only what is missing', () => {
    expect(decideClusterPorts({ cluster: A, clusters: [A], containerPorts: [] })).toEqual({
      ok: true,
      write: true,
      ports: {
        basePort: 35000,
        portRange: 500,
        lbPort: 35300,
        lbAdminPort: 35301,
        s3Port: 35302,
        range: '35000-35499',
      },
    });
    const complete = cluster('a', undefined, { ...A.status!.ports, range: '35000-35499' });
    expect(decideClusterPorts({ cluster: complete, clusters: [complete], containerPorts: [] })).toMatchObject({
      ok: true,
      write: false,
    });
  });

  it("lists every cluster's recorded range", () => {
    expect(clusterRangesOf([A, cluster('b')])).toEqual([{ basePort: 35000, size: 500 }]);
  });
});
