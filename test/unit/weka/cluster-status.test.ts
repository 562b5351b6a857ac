// `weka status --json` as the operator reads it (src/weka/cluster-status.ts): the parser against a
// sample in the real tool's layout (the fields of the reference's WekaStatusResponse,
// weka/weka-operator internal/services/weka.go, among others the operator ignores), and the
// verdict of whether a disruption may go ahead.
import { describe, expect, it } from 'vitest';
import {
  clusterStatusCall,
  HEALTHY_CLUSTER_STATUSES,
  parseClusterStatus,
  unhealthyReasons,
  type ClusterStatus,
} from '../../../src/weka/cluster-status.js';
import { WekaOutputError } from '../../../src/weka/errors.js';

/** A healthy cluster as the real tool prints it: keys in its (alphabetical) order, fields the operator ignores kept. */
function realSample(): Record<string, unknown> {
  return {
    active_alerts_count: 3,
    activity: { num_ops: 0, num_reads: 0, num_writes: 0 },
    capacity: {
      hot_spare_bytes: 0,
      total_bytes: 98_765_432_123_456,
      unavailable_bytes: 0,
      unprovisioned_bytes: 91_234_567_890_123,
    },
    containers: {
      active: 11,
      backends: { active: 9, total: 9 },
      clients: { active: 2, total: 2 },
      computes: { active: 4, total: 4 },
      drives: { active: 5, total: 5 },
      total: 11,
    },
    drives: { active: 30, total: 30 },
    guid: '3f1c2b7e-9d40-4e55-a1a2-6b7c8d9e0f11',
    hot_spare: 1,
    io_status: 'STARTED',
    is_cluster: true,
    name: 'tenant-a',
    rebuild: {
      movingData: false,
      progressPercent: 0,
      protectionState: [
        { MiB: 2_345_678, numFailures: 0, percent: 100 },
        { MiB: 0, numFailures: 1, percent: 0 },
        { MiB: 0, numFailures: 2, percent: 0 },
      ],
      stickyProtectionState: [{ MiB: 2_345_678, numFailures: 0, percent: 100 }],
      unavailableMiB: 0,
    },
    status: 'OK',
    stripe_data_drives: 3,
    stripe_protection_drives: 2,
  };
}

const text = (value: unknown) => JSON.stringify(value, null, 4);

/** Marks a field to delete in `edited`. */
const REMOVE = Symbol('remove');

/** The sample with the field at `path` (keys and array indexes) set to `value`, or deleted. */
function edited(path: readonly (string | number)[], value: unknown): string {
  const sample = realSample();
  let at = sample as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) at = at[key] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  if (value === REMOVE) delete at[last];
  else at[last] = value;
  return text(sample);
}

const HEALTHY: ClusterStatus = {
  status: 'OK',
  drives: { active: 30, total: 30 },
  driveContainers: { active: 5, total: 5 },
  rebuild: {
    movingData: false,
    progressPercent: 0,
    protectionState: [
      { numFailures: 0, percent: 100 },
      { numFailures: 1, percent: 0 },
      { numFailures: 2, percent: 0 },
    ],
  },
};

describe('clusterStatusCall and parseClusterStatus', () => {
  it('runs weka status --json and reads what the gate needs from the real layout', () => {
    const call = clusterStatusCall();
    expect(call.argv).toEqual(['weka', 'status', '--json']);
    expect(call.parse(text(realSample()))).toEqual(HEALTHY);
    expect(parseClusterStatus(text(realSample()))).toEqual(HEALTHY);
  });

  it('skips warnings printed before the JSON', () => {
    expect(parseClusterStatus(`warning: the CLI is older than the cluster\n${text(realSample())}`)).toEqual(HEALTHY);
  });

  it.each([
    ['the ProtectionState of the reference Go struct', 'ProtectionState'],
    ['the camel case the real tool prints', 'protectionState'],
    ['any other case', 'PROTECTIONSTATE'],
  ])('finds the protection state in %s', (_what, key) => {
    const sample = realSample();
    const rebuild = sample['rebuild'] as Record<string, unknown>;
    delete rebuild['protectionState'];
    rebuild[key] = [{ MiB: 10, numFailures: 1, percent: 2.5 }];
    expect(parseClusterStatus(text(sample)).rebuild.protectionState).toEqual([{ numFailures: 1, percent: 2.5 }]);
  });

  it.each([
    ['null', null],
    ['absent', REMOVE],
  ])('reads a protection state that is %s as nothing lost', (_what, value) => {
    expect(parseClusterStatus(edited(['rebuild', 'protectionState'], value)).rebuild.protectionState).toEqual([]);
  });

  it.each<[string, (string | number)[], unknown, string]>([
    ['status missing', ['status'], REMOVE, 'output.status is not a non-empty string'],
    ['status empty', ['status'], '', 'output.status is not a non-empty string'],
    ['status a number', ['status'], 1, 'output.status is not a non-empty string'],
    ['drives missing', ['drives'], REMOVE, 'output.drives is not an object'],
    ['drives an array', ['drives'], [30, 30], 'output.drives is not an object'],
    ['drives.active a string', ['drives', 'active'], '30', 'output.drives.active is not an integer >= 0'],
    ['drives.total negative', ['drives', 'total'], -1, 'output.drives.total is not an integer >= 0'],
    ['drives.total fractional', ['drives', 'total'], 1.5, 'output.drives.total is not an integer >= 0'],
    ['containers missing', ['containers'], REMOVE, 'output.containers is not an object'],
    ['containers.drives missing', ['containers', 'drives'], REMOVE, 'output.containers.drives is not an object'],
    [
      'containers.drives.active missing',
      ['containers', 'drives', 'active'],
      REMOVE,
      'output.containers.drives.active is not an integer >= 0',
    ],
    ['rebuild missing', ['rebuild'], REMOVE, 'output.rebuild is not an object'],
    ['rebuild null', ['rebuild'], null, 'output.rebuild is not an object'],
    ['movingData a string', ['rebuild', 'movingData'], 'false', 'output.rebuild.movingData is not a boolean'],
    ['movingData missing', ['rebuild', 'movingData'], REMOVE, 'output.rebuild.movingData is not a boolean'],
    [
      'progressPercent missing',
      ['rebuild', 'progressPercent'],
      REMOVE,
      'output.rebuild.progressPercent is not a number',
    ],
    ['progressPercent a string', ['rebuild', 'progressPercent'], '0', 'output.rebuild.progressPercent is not a number'],
    [
      'protectionState an object',
      ['rebuild', 'protectionState'],
      { numFailures: 0, percent: 100 },
      'output.rebuild.protectionState is not an array',
    ],
    [
      'a protection entry not an object',
      ['rebuild', 'protectionState', 0],
      100,
      'output.rebuild.protectionState[0] is not an object',
    ],
    [
      'numFailures fractional',
      ['rebuild', 'protectionState', 1, 'numFailures'],
      1.5,
      'output.rebuild.protectionState[1].numFailures is not an integer >= 0',
    ],
    [
      'numFailures missing',
      ['rebuild', 'protectionState', 2, 'numFailures'],
      REMOVE,
      'output.rebuild.protectionState[2].numFailures is not an integer >= 0',
    ],
    [
      'percent missing',
      ['rebuild', 'protectionState', 0, 'percent'],
      REMOVE,
      'output.rebuild.protectionState[0].percent is not a number',
    ],
    [
      'percent a string',
      ['rebuild', 'protectionState', 0, 'percent'],
      '100',
      'output.rebuild.protectionState[0].percent is not a number',
    ],
  ])('refuses the output with %s', (_what, path, value, reason) => {
    const parse = () => parseClusterStatus(edited(path, value));
    expect(parse).toThrow(WekaOutputError);
    expect(parse).toThrow(`weka status --json: unexpected output (${reason})`);
  });

  it.each([
    ['no output', ''],
    ['not JSON', 'Cluster status: OK'],
    ['an array', '[]'],
  ])('refuses %s', (_what, stdout) => {
    expect(() => parseClusterStatus(stdout)).toThrow(WekaOutputError);
  });
});

describe('unhealthyReasons', () => {
  const status = (changes: Partial<ClusterStatus>, rebuild: Partial<ClusterStatus['rebuild']> = {}): ClusterStatus => ({
    ...HEALTHY,
    ...changes,
    rebuild: { ...HEALTHY.rebuild, ...rebuild },
  });

  it('takes OK and REDISTRIBUTING as healthy', () => {
    expect(HEALTHY_CLUSTER_STATUSES).toEqual(['OK', 'REDISTRIBUTING']);
    expect(unhealthyReasons(HEALTHY)).toEqual([]);
    expect(unhealthyReasons(status({ status: 'REDISTRIBUTING' }))).toEqual([]);
  });

  it.each(['REBUILDING', 'PARTIALLY_PROTECTED', 'UNINITIALIZED', 'A_STATUS_NO_ONE_KNOWS', 'ok'])(
    'takes status %s as unhealthy',
    (s) => {
      expect(unhealthyReasons(status({ status: s }))).toEqual([
        `status is ${s} (a disruption waits for OK or REDISTRIBUTING)`,
      ]);
    },
  );

  it.each<[string, ClusterStatus['rebuild']['protectionState']]>([
    ['nothing listed', []],
    ['all data with no failure', [{ numFailures: 0, percent: 100 }]],
    [
      'failure counts listed at 0 %',
      [
        { numFailures: 0, percent: 100 },
        { numFailures: 2, percent: 0 },
      ],
    ],
  ])('takes %s as fully protected', (_what, protectionState) => {
    expect(unhealthyReasons(status({}, { protectionState }))).toEqual([]);
  });

  it('names the largest share of data that has lost copies', () => {
    const protectionState = [
      { numFailures: 0, percent: 80 },
      { numFailures: 1, percent: 15 },
      { numFailures: 2, percent: 5 },
    ];
    expect(unhealthyReasons(status({}, { protectionState }))).toEqual([
      'not fully protected (15% of the data has lost 1 copies)',
    ]);
  });

  it('waits while a rebuild moves data', () => {
    expect(unhealthyReasons(status({}, { movingData: true, progressPercent: 37.5 }))).toEqual([
      'a rebuild is moving data (37.5% done)',
    ]);
  });

  it('waits while a drive or a drive container is not active', () => {
    expect(unhealthyReasons(status({ drives: { active: 29, total: 30 } }))).toEqual(['29 of 30 drives are active']);
    expect(unhealthyReasons(status({ driveContainers: { active: 4, total: 5 } }))).toEqual([
      '4 of 5 drive containers are active',
    ]);
  });

  it('gives every reason at once, in order', () => {
    const all = status(
      { status: 'REBUILDING', drives: { active: 28, total: 30 }, driveContainers: { active: 4, total: 5 } },
      { movingData: true, progressPercent: 3, protectionState: [{ numFailures: 1, percent: 20 }] },
    );
    expect(unhealthyReasons(all)).toEqual([
      'status is REBUILDING (a disruption waits for OK or REDISTRIBUTING)',
      'not fully protected (20% of the data has lost 1 copies)',
      'a rebuild is moving data (3% done)',
      '28 of 30 drives are active',
      '4 of 5 drive containers are active',
    ]);
  });
});
