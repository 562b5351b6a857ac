// The chaos tests' invariant checker must be able to fail: on hand-made observations it reports
// each kind of violation, and nothing for a consistent one. (Pure: no server is touched.)
import { describe, expect, it } from 'vitest';
import type { WekaCluster, WekaContainer } from '../../../src/api/index.js';
import { allDeletedViolations, steadyStateViolations, type ObservedState } from '../../support/invariants.js';
import type { SimLogEntry } from '../../support/simulator.js';

const GUID = 'c1a55e00-0000-4000-8000-000000000001';
const PHYSICAL = 'f0000000-0000-4000-8000-000000000001';
const VIRTUAL = 'a0000000-0000-4000-8000-000000000001';

function container(overrides: Partial<NonNullable<WekaContainer['status']>> = {}): WekaContainer {
  return {
    apiVersion: 'weka.weka.io/v1alpha1',
    kind: 'WekaContainer',
    metadata: { namespace: 'ns', name: 'drive-0', uid: 'u0', finalizers: ['weka.weka.io/teardown'] },
    spec: { mode: 'drive', image: 'weka:test', nodeName: 'n1' },
    status: {
      phase: 'Ready',
      clusterGUID: GUID,
      containerID: 7,
      allocations: {
        virtualDrives: [{ virtualUUID: VIRTUAL, physicalUUID: PHYSICAL, capacityGiB: 400 }],
        virtualDriveCount: 1,
      },
      addedVirtualDrives: [VIRTUAL],
      ...overrides,
    },
  } as WekaContainer;
}

const log = (...changes: Array<{ kind: string; [k: string]: unknown }>): SimLogEntry[] =>
  changes.map((c) => ({ argv: [], exitCode: 0, changes: [c] }));

/** Everything deleted after consistent(), its log followed by `then`. */
function allGone(then: SimLogEntry[]): ObservedState {
  return {
    ...consistent(),
    containers: [],
    ledgers: EMPTY_LEDGERS,
    pods: [],
    runningPods: [],
    devices: [],
    clusterMembers: [],
    clusterDrives: [],
    logs: [{ node: 'n1', entries: [...consistent().logs[0]!.entries, ...then] }],
  };
}

function consistent(): ObservedState {
  return {
    containers: [container()],
    proxies: [],
    pods: ['ns/drive-0', 'weka-system/weka-drives-proxy-n1'],
    runningPods: ['ns/drive-0', 'weka-system/weka-drives-proxy-n1'],
    devices: [
      {
        node: 'n1',
        info: {
          devicePath: '/dev/nvme0n1',
          serial: 'S1',
          capacityGiB: 1000,
          type: 'TLC',
          signature: 'proxy',
          physicalUUID: PHYSICAL,
          virtualDrives: [{ virtualUUID: VIRTUAL, ownerClusterGUID: GUID, sizeGiB: 400 }],
        },
      },
    ],
    wekaClusters: [],
    listedClusterGUIDs: [GUID],
    formedClusterGUIDs: [],
    clusterMembers: [{ containerId: 7, name: 'ns_drive-0', hostname: 'n1', clusterGUID: GUID }],
    clusterDrives: [
      {
        driveUUID: 'd0000000-0000-4000-8000-000000000001',
        virtualUUID: VIRTUAL,
        devicePath: null,
        containerId: 7,
        status: 'ACTIVE',
      },
    ],
    leftBehind: { containers: [], virtualUUIDs: new Set() },
    logs: [
      {
        node: 'n1',
        entries: log(
          { kind: 'virtual-add', device: '/dev/nvme0n1', virtualUUID: VIRTUAL },
          { kind: 'drive-add', virtualUUID: VIRTUAL, pool: 'iu4k' },
        ),
      },
    ],
    ledgers: [
      {
        node: 'n1',
        ledger: {
          containers: {
            u0: {
              container: 'ns/drive-0',
              allocation: {
                virtualDrives: [
                  { virtualUUID: VIRTUAL, physicalUUID: PHYSICAL, capacityGiB: 400, serial: 'S1', type: 'TLC' },
                ],
              },
            },
          },
          found: [],
        },
      },
    ],
  };
}

/** Every node's ledger once nothing holds anything. */
const EMPTY_LEDGERS: ObservedState['ledgers'] = [{ node: 'n1', ledger: { containers: {}, found: [] } }];

function withDevice(state: ObservedState, change: Partial<ObservedState['devices'][number]['info']>): ObservedState {
  return { ...state, devices: state.devices.map((d) => ({ ...d, info: { ...d.info, ...change } })) };
}

describe('the chaos invariant checker', () => {
  it('finds nothing wrong with a consistent observation', () => {
    expect(steadyStateViolations(consistent())).toEqual([]);
  });

  it("reports a Ready container whose pod, or whose node's ssdproxy pod, does not run", () => {
    const noPod = { ...consistent(), runningPods: ['weka-system/weka-drives-proxy-n1'] };
    expect(steadyStateViolations(noPod)).toContain('ns/drive-0: Ready but its pod does not run');
    const noProxy = { ...consistent(), runningPods: ['ns/drive-0'] };
    expect(steadyStateViolations(noProxy)).toContain(
      "ns/drive-0: Ready but its node's ssdproxy pod weka-drives-proxy-n1 does not run",
    );
  });

  it('reports an over-committed physical drive, on the device and in the statuses', () => {
    const violations = steadyStateViolations(withDevice(consistent(), { capacityGiB: 300 }));
    expect(violations).toContain('device n1 /dev/nvme0n1: 400 GiB signed on 300 GiB');
    expect(violations).toContain('statuses allocate 400 GiB of n1 /dev/nvme0n1, which has 300 GiB');
  });

  it('reports an added virtual drive that is not signed, signed for another cluster, or with another size', () => {
    expect(steadyStateViolations(withDevice(consistent(), { virtualDrives: [] })).join('\n')).toMatch(
      /virtual drive .* is signed 0 times/,
    );
    const other = withDevice(consistent(), {
      virtualDrives: [{ virtualUUID: VIRTUAL, ownerClusterGUID: 'other', sizeGiB: 500 }],
    });
    expect(steadyStateViolations(other).join('\n')).toMatch(
      /signed for cluster other[\s\S]*signed with 500 GiB, allocated 400/,
    );
  });

  it('reports a virtual drive that is in the Weka cluster twice, or not at all', () => {
    const state = consistent();
    const twice = {
      ...state,
      clusterDrives: [...state.clusterDrives, { ...state.clusterDrives[0]!, driveUUID: 'd2' }],
    };
    expect(steadyStateViolations(twice).join('\n')).toMatch(/is in the Weka cluster 2 times/);
    expect(steadyStateViolations({ ...state, clusterDrives: [] }).join('\n')).toMatch(/is in the Weka cluster 0 times/);
  });

  it('reports a Ready container that has not added every drive it was allocated', () => {
    expect(
      steadyStateViolations({ ...consistent(), containers: [container({ addedVirtualDrives: [] })] }).join('\n'),
    ).toMatch(/Ready but added \[\] of allocated/);
  });

  it('reports a signature and a Weka drive that no container holds', () => {
    const violations = steadyStateViolations({ ...consistent(), containers: [] }).join('\n');
    expect(violations).toMatch(/is signed on n1 \/dev\/nvme0n1 but no container there holds it/);
    expect(violations).toMatch(/is in the cluster but no status lists it as added/);
  });

  it('reports a virtual drive signed or added twice according to the log', () => {
    const state = consistent();
    const doubled = {
      ...state,
      logs: [
        {
          node: 'n1',
          entries: [
            ...state.logs[0]!.entries,
            ...log(
              { kind: 'virtual-add', device: '/dev/nvme0n1', virtualUUID: VIRTUAL },
              { kind: 'drive-add', virtualUUID: VIRTUAL, pool: 'iu4k' },
            ),
          ],
        },
      ],
    };
    expect(steadyStateViolations(doubled)).toEqual([
      `log: virtual-add of ${VIRTUAL} happened 2 times`,
      `log: drive-add of ${VIRTUAL} happened 2 times`,
    ]);
  });

  it('reports a virtual drive added to no pool or to the pool of the other type, and a whole drive added to a pool', () => {
    const state = consistent();
    const withLog = (...changes: Array<{ kind: string; [k: string]: unknown }>) => ({
      ...state,
      logs: [
        { node: 'n1', entries: log({ kind: 'virtual-add', device: '/dev/nvme0n1', virtualUUID: VIRTUAL }, ...changes) },
      ],
    });
    expect(steadyStateViolations(withLog({ kind: 'drive-add', virtualUUID: VIRTUAL, pool: null }))).toEqual([
      `log: virtual drive ${VIRTUAL} added to pool null, not iu4k`,
    ]);
    expect(steadyStateViolations(withLog({ kind: 'drive-add', virtualUUID: VIRTUAL, pool: 'iubig' }))).toEqual([
      `log: virtual drive ${VIRTUAL} added to pool iubig, not iu4k`,
    ]);
    expect(
      steadyStateViolations(
        withLog(
          { kind: 'drive-add', virtualUUID: VIRTUAL, pool: 'iu4k' },
          { kind: 'drive-add', driveUUID: 'd1', devicePath: '/dev/nvme1n1', serial: 'S2', pool: 'iu4k' },
        ),
      ),
    ).toContain('log: whole drive /dev/nvme1n1 on n1 added to pool iu4k');
  });

  it('reports one virtual drive given to two containers, and GiB given twice', () => {
    const state = consistent();
    const twin = container();
    twin.metadata = { ...twin.metadata, name: 'drive-1', uid: 'u1' };
    expect(steadyStateViolations({ ...state, containers: [container(), twin] })).toContain(
      `virtual drive ${VIRTUAL} is allocated to 2 containers`,
    );
    const other = container({
      allocations: {
        virtualDrives: [
          { virtualUUID: 'a0000000-0000-4000-8000-000000000002', physicalUUID: PHYSICAL, capacityGiB: 700 },
        ],
        virtualDriveCount: 1,
      },
      addedVirtualDrives: [],
      phase: 'Allocating',
    });
    other.metadata = { ...other.metadata, name: 'drive-2', uid: 'u2' };
    expect(steadyStateViolations({ ...state, containers: [container(), other] })).toContain(
      'statuses allocate 1100 GiB of n1 /dev/nvme0n1, which has 1000 GiB',
    );
  });

  it('reports an allocation on a physical drive the node does not have', () => {
    const violations = steadyStateViolations(
      withDevice(consistent(), { physicalUUID: 'f0000000-0000-4000-8000-0000000000ff' }),
    );
    expect(violations).toContain(`statuses allocate from physical drive ${PHYSICAL}, which node n1 does not have`);
  });

  it('reports an added virtual drive that is not in the allocation', () => {
    const stray = 'a0000000-0000-4000-8000-0000000000aa';
    const violations = steadyStateViolations({
      ...consistent(),
      containers: [container({ addedVirtualDrives: [VIRTUAL, stray] })],
    });
    expect(violations).toContain(`ns/drive-0: added virtual drive ${stray} is not in its allocations`);
  });

  it('reports a drive in the Weka cluster under another container than the status says', () => {
    const violations = steadyStateViolations({ ...consistent(), containers: [container({ containerID: 8 })] });
    expect(violations.join('\n')).toMatch(/is a drive of Weka container 7, not 8/);
  });

  it('after deletion, reports a WekaCluster left, and a Weka cluster a WekaCluster formed that was not destroyed', () => {
    const formed = 'f0000000-0000-4000-8000-000000000001';
    const cluster = { metadata: { namespace: 'ns', name: 'tenant' }, status: { phase: 'Deleting' } } as WekaCluster;
    const state: ObservedState = {
      ...consistent(),
      containers: [],
      ledgers: EMPTY_LEDGERS,
      pods: [],
      runningPods: [],
      devices: [],
      clusterMembers: [],
      clusterDrives: [],
      logs: [],
      wekaClusters: [cluster],
      formedClusterGUIDs: [formed, 'f0000000-0000-4000-8000-000000000002'],
      listedClusterGUIDs: [GUID, formed],
    };
    expect(allDeletedViolations(state)).toEqual([
      'WekaCluster ns/tenant is left (phase Deleting)',
      `Weka cluster ${formed} is left: no member destroyed it`,
    ]);
  });

  it('after deletion, reports a Weka container left in the cluster', () => {
    const clean: ObservedState = {
      ...consistent(),
      containers: [],
      ledgers: EMPTY_LEDGERS,
      pods: [],
      devices: [],
      clusterDrives: [],
      logs: [],
    };
    expect(allDeletedViolations(clean)).toContain(`Weka container ns_drive-0 (7) is left in cluster ${GUID} on n1`);
  });

  it('after deletion, reports every container, proxy, pod, signature and Weka drive left, and adds never undone', () => {
    const state = { ...consistent(), proxies: [container()], pods: ['ns/drive-0'] };
    const violations = allDeletedViolations(state).join('\n');
    for (const expected of [
      'ns/drive-0 is left',
      'proxy container ns/drive-0 is left',
      'pod ns/drive-0 is left',
      `virtual drive ${VIRTUAL} is left signed`,
      'is left in container 7',
      `virtual-add of ${VIRTUAL} was followed by 0 virtual-remove`,
      `drive-add of ${VIRTUAL} was followed by 0 drive-remove`,
    ]) {
      expect(violations).toContain(expected);
    }
    const clean = allGone(
      log({ kind: 'drive-remove', virtualUUID: VIRTUAL }, { kind: 'virtual-remove', virtualUUID: VIRTUAL }),
    );
    expect(allDeletedViolations(clean)).toEqual([]);
  });

  it('after deletion, takes a drive the operator recorded as left in its Weka cluster as recorded, and no other', () => {
    const gone = allGone(log({ kind: 'virtual-remove', virtualUUID: VIRTUAL }));
    expect(allDeletedViolations(gone).join('\n')).toContain(`drive-add of ${VIRTUAL} was followed by 0 drive-remove`);
    const recorded = { ...gone, leftBehind: { containers: [], virtualUUIDs: new Set([VIRTUAL]) } };
    expect(allDeletedViolations(recorded)).toEqual([]);
  });

  it('reports a ledger entry of a container that is gone, and a status the ledger does not hold', () => {
    const gone = { ...consistent(), containers: [] };
    expect(steadyStateViolations(gone)).toContain('ledger of n1 still holds ns/drive-0 (uid u0), which is gone');
    const unheld = { ...consistent(), ledgers: EMPTY_LEDGERS };
    expect(steadyStateViolations(unheld)).toContain(
      'ns/drive-0: its status shows an allocation that the ledger of n1 does not hold',
    );
    const other = consistent();
    const entry = (other.ledgers[0] as { ledger: { containers: Record<string, { allocation: object }> } }).ledger
      .containers['u0']!;
    entry.allocation = { ...entry.allocation, wekaPort: 14000 };
    expect(steadyStateViolations(other)).toContain(
      'ns/drive-0: its status shows an allocation that the ledger of n1 holds otherwise',
    );
  });

  it('after deletion, reports a ledger that still holds a container, or counts a found drive no device holds', () => {
    const found = { virtualUUID: VIRTUAL, physicalUUID: PHYSICAL, capacityGiB: 400, ownerClusterGUID: GUID };
    const state: ObservedState = {
      ...consistent(),
      containers: [],
      pods: [],
      runningPods: [],
      devices: [],
      clusterMembers: [],
      clusterDrives: [],
      logs: [],
      ledgers: [{ node: 'n1', ledger: { containers: {}, found: [found] } }],
    };
    expect(allDeletedViolations(state)).toEqual([
      `ledger of n1 still counts found virtual drive ${VIRTUAL} (400 GiB), which no device holds`,
    ]);
    const held: ObservedState = { ...state, ledgers: consistent().ledgers };
    expect(allDeletedViolations(held)).toEqual(['ledger of n1 still holds ns/drive-0 (uid u0), which is gone']);
  });
});
