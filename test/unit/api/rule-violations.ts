// One manifest (or one change) per CEL rule that the apiserver must reject with that rule's
// message. The integration test sends them to a real apiserver; a unit test checks that every
// rule in the generated CRDs has an entry here, so a new rule cannot go untested.
import {
  API_GROUP_VERSION,
  CAPACITY_RULES,
  CLUSTER_PORTS_RULES,
  DEVICE_SET_RULES,
  DRIVE_TYPES_RATIO_RULES,
  DYNAMIC_TEMPLATE_CHANGE_RULES,
  WEKA_CLUSTER_KIND,
  WEKA_CONTAINER_KIND,
  WEKA_CONTAINER_RULES,
  WEKA_MANUAL_OPERATION_KIND,
  WEKA_MANUAL_OPERATION_RULES,
  WRITTEN_BY_RULE,
  type CelRule,
} from '../../../src/api/index.js';

type Manifest = Record<string, unknown>;
type Fields = Record<string, unknown>;

/** Rejected on create. */
export interface CreateViolation {
  what: string;
  kind: string;
  rule: CelRule;
  manifest: Manifest;
}

/** Accepted on create; the change of `spec` (or of `status`, through /status) is rejected. */
export interface UpdateViolation {
  what: string;
  kind: string;
  rule: CelRule;
  manifest: Manifest;
  subresource: 'main' | 'status';
  /** The status written through /status before the change, for a rule that compares with it. */
  status?: Fields;
  change: Fields;
}

const IMAGE = 'quay.io/weka.io/weka-in-container:4.4.10.183';

export function container(name: string, spec: Fields): Manifest {
  return {
    apiVersion: API_GROUP_VERSION,
    kind: WEKA_CONTAINER_KIND,
    metadata: { name },
    spec: { mode: 'drive', nodeName: 'weka-node-1', image: IMAGE, ...spec },
  };
}

export function cluster(name: string, dynamicTemplate: Fields): Manifest {
  return {
    apiVersion: API_GROUP_VERSION,
    kind: WEKA_CLUSTER_KIND,
    metadata: { name },
    spec: {
      image: IMAGE,
      nodeSelector: { 'weka.io/drive-sharing': 'true' },
      dynamicTemplate: { driveContainers: 3, ...dynamicTemplate },
    },
  };
}

export function signDrives(name: string, payload: Fields): Manifest {
  return {
    apiVersion: API_GROUP_VERSION,
    kind: WEKA_MANUAL_OPERATION_KIND,
    metadata: { name },
    spec: { action: 'sign-drives', payload: { signDrivesPayload: { type: 'all-not-root', ...payload } } },
  };
}

/** Capacity field sets that break one capacity rule each; valid for both kinds. */
const CAPACITY_CASES: Array<{ what: string; rule: CelRule; fields: Fields }> = [
  { what: 'driveCores 0', rule: CAPACITY_RULES.driveCoresPositive, fields: { driveCores: 0 } },
  { what: 'numDrives 0', rule: CAPACITY_RULES.numDrivesPositive, fields: { numDrives: 0 } },
  { what: 'driveCapacity 0', rule: CAPACITY_RULES.driveCapacityPositive, fields: { numDrives: 2, driveCapacity: 0 } },
  { what: 'containerCapacity -1', rule: CAPACITY_RULES.containerCapacityPositive, fields: { containerCapacity: -1 } },
  {
    what: 'driveCapacity with containerCapacity',
    rule: CAPACITY_RULES.driveCapacityExcludesContainerCapacity,
    fields: { driveCapacity: 1000, containerCapacity: 4000 },
  },
  {
    what: 'numDrives with containerCapacity',
    rule: CAPACITY_RULES.numDrivesExcludesContainerCapacity,
    fields: { numDrives: 4, containerCapacity: 4000 },
  },
  {
    what: 'driveTypesRatio with driveCapacity',
    rule: CAPACITY_RULES.driveTypesRatioNeedsContainerCapacity,
    fields: { numDrives: 4, driveCapacity: 1000, driveTypesRatio: { tlc: 1, qlc: 0 } },
  },
  {
    what: 'fewer numDrives than driveCores',
    rule: CAPACITY_RULES.numDrivesCoversDriveCores,
    fields: { driveCores: 4, numDrives: 2, driveCapacity: 1000 },
  },
  { what: 'driveCores 300', rule: CAPACITY_RULES.driveCoresAtMost, fields: { driveCores: 300 } },
  { what: 'numDrives 300', rule: CAPACITY_RULES.numDrivesAtMost, fields: { numDrives: 300 } },
  {
    what: '100 virtual drives on 1 drive core',
    rule: CAPACITY_RULES.numDrivesPerDriveCore,
    fields: { driveCores: 1, numDrives: 100, driveCapacity: 400 },
  },
  {
    what: 'a 2 PiB virtual drive',
    rule: CAPACITY_RULES.driveCapacityAtMost,
    fields: { numDrives: 1, driveCapacity: 2 * 1024 * 1024 },
  },
  {
    what: 'a 32 PiB container',
    rule: CAPACITY_RULES.containerCapacityAtMost,
    fields: { containerCapacity: 32 * 1024 * 1024 },
  },
  {
    what: '32 virtual drives of 1 PiB',
    rule: CAPACITY_RULES.fixedSizeCapacityAtMost,
    fields: { numDrives: 32, driveCapacity: 1024 * 1024 },
  },
  {
    what: 'negative tlc',
    rule: DRIVE_TYPES_RATIO_RULES.tlcNotNegative,
    fields: { containerCapacity: 4000, driveTypesRatio: { tlc: -1, qlc: 2 } },
  },
  {
    what: 'negative qlc',
    rule: DRIVE_TYPES_RATIO_RULES.qlcNotNegative,
    fields: { containerCapacity: 4000, driveTypesRatio: { tlc: 2, qlc: -1 } },
  },
  {
    what: 'ratio 0:0',
    rule: DRIVE_TYPES_RATIO_RULES.notBothZero,
    fields: { containerCapacity: 4000, driveTypesRatio: { tlc: 0, qlc: 0 } },
  },
];

export const CREATE_VIOLATIONS: CreateViolation[] = [
  ...CAPACITY_CASES.map(({ what, rule, fields }, i) => ({
    what,
    kind: WEKA_CONTAINER_KIND,
    rule,
    manifest: container(`bad-capacity-${i}`, fields),
  })),
  ...CAPACITY_CASES.map(({ what, rule, fields }, i) => ({
    what,
    kind: WEKA_CLUSTER_KIND,
    rule,
    manifest: cluster(`bad-template-${i}`, fields),
  })),
  {
    what: 'sign-drives without nodeSelector',
    kind: WEKA_MANUAL_OPERATION_KIND,
    rule: WEKA_MANUAL_OPERATION_RULES.signDrivesNeedsNodeSelector,
    manifest: signDrives('no-selector', {}),
  },
  {
    what: 'sign-drives with an empty nodeSelector',
    kind: WEKA_MANUAL_OPERATION_KIND,
    rule: WEKA_MANUAL_OPERATION_RULES.signDrivesNeedsNodeSelector,
    manifest: signDrives('empty-selector', { nodeSelector: {} }),
  },
  {
    what: 'clean-stale-virtual-drives without nodeSelector',
    kind: WEKA_MANUAL_OPERATION_KIND,
    rule: WEKA_MANUAL_OPERATION_RULES.cleanStaleNeedsNodeSelector,
    manifest: {
      apiVersion: API_GROUP_VERSION,
      kind: WEKA_MANUAL_OPERATION_KIND,
      metadata: { name: 'clean-no-selector' },
      spec: {
        action: 'clean-stale-virtual-drives',
        payload: { cleanStaleVirtualDrivesPayload: { deleteStaleVids: true } },
      },
    },
  },
  {
    what: 'device-paths without devicePaths',
    kind: WEKA_MANUAL_OPERATION_KIND,
    rule: WEKA_MANUAL_OPERATION_RULES.devicePathsNeededForDevicePaths,
    manifest: signDrives('no-paths', { type: 'device-paths', nodeSelector: { a: 'b' } }),
  },
  {
    what: 'a device name that is not a path',
    kind: WEKA_MANUAL_OPERATION_KIND,
    rule: WEKA_MANUAL_OPERATION_RULES.devicePathShape,
    manifest: signDrives('bare-name', { type: 'device-paths', nodeSelector: { a: 'b' }, devicePaths: ['nvme0n1'] }),
  },
  {
    what: 'a path that climbs out of /dev',
    kind: WEKA_MANUAL_OPERATION_KIND,
    rule: WEKA_MANUAL_OPERATION_RULES.devicePathShape,
    manifest: signDrives('dotdot', {
      type: 'device-paths',
      nodeSelector: { a: 'b' },
      devicePaths: ['/dev/../etc/passwd'],
    }),
  },
];

const MODE_1 = { driveCores: 2, numDrives: 4, driveCapacity: 1000 };
const MODE_2 = { driveCores: 2, containerCapacity: 12000, driveTypesRatio: { tlc: 4, qlc: 1 } };

export const UPDATE_VIOLATIONS: UpdateViolation[] = [
  { what: 'drive to compute', rule: WEKA_CONTAINER_RULES.modeImmutable, spec: MODE_1, change: { mode: 'compute' } },
  {
    what: 'move to another node',
    rule: WEKA_CONTAINER_RULES.nodeNameSetOnce,
    spec: MODE_1,
    change: { nodeName: 'weka-node-2' },
  },
  { what: 'unset the node', rule: WEKA_CONTAINER_RULES.nodeNameSetOnce, spec: MODE_1, change: { nodeName: undefined } },
  {
    what: 'move to another cluster',
    rule: WEKA_CONTAINER_RULES.clusterSetOnce,
    spec: { ...MODE_1, cluster: 'stores' },
    change: { cluster: 'other' },
  },
  { what: 'more drive cores', rule: WEKA_CONTAINER_RULES.driveCoresSetOnce, spec: MODE_1, change: { driveCores: 3 } },
  { what: 'fewer drives', rule: WEKA_CONTAINER_RULES.numDrivesGrowOnly, spec: MODE_1, change: { numDrives: 3 } },
  {
    what: 'no numDrives any more',
    rule: WEKA_CONTAINER_RULES.numDrivesGrowOnly,
    spec: MODE_1,
    change: { numDrives: undefined },
  },
  {
    what: 'bigger drives',
    rule: WEKA_CONTAINER_RULES.driveCapacitySetOnce,
    spec: MODE_1,
    change: { driveCapacity: 2000 },
  },
  {
    what: 'smaller container',
    rule: WEKA_CONTAINER_RULES.containerCapacityGrowOnly,
    spec: MODE_2,
    change: { containerCapacity: 8000 },
  },
  {
    what: 'another ratio',
    rule: WEKA_CONTAINER_RULES.driveTypesRatioSetOnce,
    spec: MODE_2,
    change: { driveTypesRatio: { tlc: 3, qlc: 1 } },
  },
].map(({ what, rule, spec, change }, i) => ({
  what,
  kind: WEKA_CONTAINER_KIND,
  rule,
  manifest: container(`immutable-${i}`, spec),
  subresource: 'main' as const,
  change,
}));

UPDATE_VIOLATIONS.push({
  what: 'a virtual drive count that disagrees with the list',
  kind: WEKA_CONTAINER_KIND,
  rule: WEKA_CONTAINER_RULES.virtualDriveCountMatches,
  manifest: container('wrong-count', MODE_1),
  subresource: 'status',
  change: {
    allocations: {
      virtualDrives: [{ virtualUUID: 'v-1', physicalUUID: 'p-1', capacityGiB: 1000 }],
      virtualDriveCount: 2,
    },
  },
});

const CLUSTER_MODE_1 = { driveCores: 2, numDrives: 4, driveCapacity: 1000 };
const CLUSTER_MODE_2 = { driveCores: 2, containerCapacity: 8000, driveTypesRatio: { tlc: 1, qlc: 4 } };
const [containerCapacityGrows, numDrivesGrows, driveCapacityFixed, ratioFixed, driveCoresFixed, modeFixed] =
  DYNAMIC_TEMPLATE_CHANGE_RULES;
UPDATE_VIOLATIONS.push(
  ...(
    [
      ['a smaller template containerCapacity', containerCapacityGrows, CLUSTER_MODE_2, { containerCapacity: 4000 }],
      ['fewer template drives', numDrivesGrows, CLUSTER_MODE_1, { numDrives: 2 }],
      ['bigger template drives', driveCapacityFixed, CLUSTER_MODE_1, { driveCapacity: 2000 }],
      ['another template ratio', ratioFixed, CLUSTER_MODE_2, { driveTypesRatio: { tlc: 1, qlc: 1 } }],
      ['more template drive cores', driveCoresFixed, CLUSTER_MODE_1, { driveCores: 3 }],
      [
        'a template moved from mode 1 to mode 2',
        modeFixed,
        { driveCores: 2, numDrives: 4, driveCapacity: 1000 },
        { numDrives: undefined, driveCapacity: undefined, containerCapacity: 8000 },
      ],
    ] as const
  ).map(([what, rule, template, change], i) => ({
    what,
    kind: WEKA_CLUSTER_KIND,
    rule: rule!,
    manifest: cluster(`template-${i}`, template),
    subresource: 'main' as const,
    change: { dynamicTemplate: { driveContainers: 3, ...template, ...change } },
  })),
);

/** A device set that every rule accepts; each case below breaks one rule. */
function deviceSet(extra: Fields = {}): Fields {
  return {
    name: 'fast',
    count: 2,
    config: { driveType: 'TLC' },
    volumeClaimTemplates: [
      { spec: { storageClassName: 'local-nvme', volumeMode: 'Block', resources: { requests: { storage: '1Ti' } } } },
    ],
    ...extra,
  };
}

function clusterWithSets(name: string, sets: Fields[]): Manifest {
  const manifest = cluster(name, { driveCores: 1, containerCapacity: 1000 });
  return { ...manifest, spec: { ...(manifest['spec'] as Fields), storageClassDeviceSets: sets } };
}

const affinity = (requirement: Fields): Fields => ({
  placement: {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [requirement] }] },
    },
  },
});

CREATE_VIOLATIONS.push(
  ...(
    [
      [
        'a device set placement Exists with values',
        DEVICE_SET_RULES.requirementValues,
        affinity({ key: 'zone', operator: 'Exists', values: ['a'] }),
      ],
      [
        'a device set placement In without values',
        DEVICE_SET_RULES.requirementValues,
        affinity({ key: 'zone', operator: 'In' }),
      ],
      [
        'a device set placement Gt a word',
        DEVICE_SET_RULES.requirementInteger,
        affinity({ key: 'disks', operator: 'Gt', values: ['many'] }),
      ],
      ['a device set config key unknown', DEVICE_SET_RULES.configKeys, { config: { driveTyp: 'TLC' } }],
      ['a device set drive type SLC', DEVICE_SET_RULES.configDriveType, { config: { driveType: 'SLC' } }],
      [
        'two unnamed claim templates',
        DEVICE_SET_RULES.templateNamesUnique,
        {
          volumeClaimTemplates: [0, 1].map(() => ({
            spec: { volumeMode: 'Block', resources: { requests: { storage: '1Ti' } } },
          })),
        },
      ],
    ] as const
  ).map(([what, rule, extra], i) => ({
    what,
    kind: WEKA_CLUSTER_KIND,
    rule,
    manifest: clusterWithSets(`device-set-${i}`, [deviceSet(extra)]),
  })),
);

UPDATE_VIOLATIONS.push(
  ...(
    [
      ['a device set of fewer devices', DEVICE_SET_RULES.countGrowOnly, [deviceSet({ count: 1 })]],
      [
        'a device set of another class',
        DEVICE_SET_RULES.setFixed,
        [
          deviceSet({
            volumeClaimTemplates: [
              { spec: { storageClassName: 'other', volumeMode: 'Block', resources: { requests: { storage: '1Ti' } } } },
            ],
          }),
        ],
      ],
      ['a device set removed', DEVICE_SET_RULES.setsKept, [deviceSet({ name: 'other' })]],
    ] as const
  ).map(([what, rule, sets], i) => {
    const manifest = clusterWithSets(`device-set-change-${i}`, [deviceSet()]);
    return {
      what,
      kind: WEKA_CLUSTER_KIND,
      rule,
      manifest,
      subresource: 'main' as const,
      change: { storageClassDeviceSets: sets },
    };
  }),
);

/** A write of a workflow task that timed out, after the write of the task done again in its place. */
const WRITTEN = { run: 'run-1', runStartTime: '2026-11-29T02:52:34.535Z', historyLength: 71, sequence: 1 };
UPDATE_VIOLATIONS.push(
  ...(
    [
      [WEKA_CONTAINER_KIND, container('late-write', MODE_1)],
      [WEKA_CLUSTER_KIND, cluster('late-write', CLUSTER_MODE_1)],
      [WEKA_MANUAL_OPERATION_KIND, signDrives('late-write', { nodeSelector: { a: 'b' } })],
    ] as const
  ).map(([kind, manifest]) => ({
    what: 'a late status write of a timed-out workflow task',
    kind,
    rule: WRITTEN_BY_RULE,
    manifest,
    subresource: 'status' as const,
    status: { writtenBy: WRITTEN },
    change: { writtenBy: { ...WRITTEN, historyLength: 68, sequence: 2 } },
  })),
);

/** A cluster whose port-range override takes more than one cluster's share, or runs past 65535. */
function clusterWithPorts(name: string, ports: Fields): Manifest {
  const manifest = cluster(name, { driveCores: 1, containerCapacity: 1000 });
  return { ...manifest, spec: { ...(manifest['spec'] as Fields), ports } };
}

CREATE_VIOLATIONS.push(
  {
    what: 'a port range of every port from 14000',
    kind: WEKA_CLUSTER_KIND,
    rule: CLUSTER_PORTS_RULES.rangeShare,
    manifest: clusterWithPorts('ports-all', { basePort: 14000, portRange: 51536 }),
  },
  {
    what: 'a port range past 65535',
    kind: WEKA_CLUSTER_KIND,
    rule: CLUSTER_PORTS_RULES.rangeEnds,
    manifest: clusterWithPorts('ports-past-end', { basePort: 65000, portRange: 1000 }),
  },
);
