// The benchmark's reading of the apiserver's audit log: which writes are allocations, and the time
// from one allocation's write to the next one's on the same node.
import { describe, expect, it } from 'vitest';
import { allocationGaps, parseStatusWrites, preciseTime, type StatusWrite } from '../../bench/status-writes.js';

const T0 = Date.parse('2026-11-22T01:00:00Z');

function auditLine(o: {
  name: string;
  namespace?: string;
  fieldManager?: string;
  code?: number;
  received: string;
  completed: string;
  stage?: string;
  verb?: string;
  subresource?: string;
}): string {
  const namespace = o.namespace ?? 'ns';
  return JSON.stringify({
    kind: 'Event',
    apiVersion: 'audit.k8s.io/v1',
    level: 'Metadata',
    stage: o.stage ?? 'ResponseComplete',
    requestURI: `/apis/weka.weka.io/v1alpha1/namespaces/${namespace}/wekacontainers/${o.name}/status?fieldManager=${o.fieldManager ?? 'alloc'}&force=true`,
    verb: o.verb ?? 'patch',
    objectRef: {
      resource: 'wekacontainers',
      namespace,
      name: o.name,
      apiGroup: 'weka.weka.io',
      apiVersion: 'v1alpha1',
      subresource: o.subresource ?? 'status',
    },
    responseStatus: { metadata: {}, code: o.code ?? 200 },
    requestReceivedTimestamp: o.received,
    stageTimestamp: o.completed,
  });
}

describe('audit log times', () => {
  it.each([
    ['2026-11-22T01:00:00Z', 0],
    ['2026-11-22T01:00:00.5Z', 500],
    ['2026-11-22T01:00:00.123456Z', 123.456],
    ['2026-11-22T01:00:01.000001Z', 1000.001],
  ])('reads %s to the microsecond', (text, ms) => {
    expect(preciseTime(text) - T0).toBeCloseTo(ms, 3);
  });

  it('refuses a time that is not RFC 3339 UTC', () => {
    expect(() => preciseTime('2026-11-22 01:00:00')).toThrow(/not an RFC 3339 UTC time/);
    expect(() => preciseTime('2026-11-22T01:00:00+01:00')).toThrow(/not an RFC 3339 UTC time/);
  });
});

describe('status writes from an audit log', () => {
  it('keeps only successful WekaContainer status patches, with their field manager', () => {
    const log = [
      auditLine({ name: 'a', received: '2026-11-22T01:00:00.010000Z', completed: '2026-11-22T01:00:00.015500Z' }),
      auditLine({
        name: 'b',
        code: 409,
        received: '2026-11-22T01:00:00.020000Z',
        completed: '2026-11-22T01:00:00.021000Z',
      }),
      auditLine({
        name: 'c',
        subresource: '',
        received: '2026-11-22T01:00:00.030000Z',
        completed: '2026-11-22T01:00:00.031000Z',
      }),
      auditLine({
        name: 'd',
        verb: 'update',
        received: '2026-11-22T01:00:00.040000Z',
        completed: '2026-11-22T01:00:00.041000Z',
      }),
      auditLine({
        name: 'e',
        stage: 'ResponseStarted',
        received: '2026-11-22T01:00:00.050000Z',
        completed: '2026-11-22T01:00:00.051000Z',
      }),
      auditLine({
        name: 'f',
        fieldManager: 'other',
        received: '2026-11-22T01:00:00.060000Z',
        completed: '2026-11-22T01:00:00.062000Z',
      }),
      '',
    ].join('\n');
    const writes = parseStatusWrites(log);
    expect(writes.map((w) => [w.container, w.fieldManager])).toEqual([
      ['ns/a', 'alloc'],
      ['ns/f', 'other'],
    ]);
    expect(writes[0]!.receivedAt - T0).toBeCloseTo(10, 3);
    expect(writes[0]!.completedAt - T0).toBeCloseTo(15.5, 3);
  });

  it('skips a last line still being written, and reports any other line that is not JSON', () => {
    const whole = auditLine({
      name: 'a',
      received: '2026-11-22T01:00:00.010000Z',
      completed: '2026-11-22T01:00:00.011000Z',
    });
    expect(parseStatusWrites(`${whole}\n${whole.slice(0, 40)}`)).toHaveLength(1);
    expect(() => parseStatusWrites(`${whole.slice(0, 40)}\n${whole}\n`)).toThrow(/audit log line 1 is not JSON/);
  });
});

describe('allocation to allocation on a node', () => {
  const write = (container: string, receivedAt: number, completedAt: number, fieldManager = 'alloc'): StatusWrite => ({
    container,
    fieldManager,
    receivedAt,
    completedAt,
  });
  const nodeOf = new Map([
    ['ns/a', 'n1'],
    ['ns/b', 'n1'],
    ['ns/c', 'n1'],
    ['ns/x', 'n2'],
    ['ns/y', 'n2'],
  ]);

  it('measures from one write answered to the next one received, per node and in order', () => {
    const writes = [
      write('ns/b', 120, 130),
      write('ns/a', 100, 110),
      write('ns/x', 100, 105),
      write('ns/y', 300, 310),
      write('ns/c', 135, 150),
    ];
    const askedAt = new Map([...nodeOf.keys()].map((c) => [c, 0]));
    expect(allocationGaps(writes, { fieldManager: 'alloc', nodeOf, askedAt })).toEqual([
      { node: 'n1', from: 'ns/a', to: 'ns/b', ms: 10 },
      { node: 'n1', from: 'ns/b', to: 'ns/c', ms: 5 },
      { node: 'n2', from: 'ns/x', to: 'ns/y', ms: 195 },
    ]);
  });

  it('does not count a container that asked after the previous write: the node was idle', () => {
    const writes = [write('ns/a', 100, 110), write('ns/b', 500, 510), write('ns/c', 520, 530)];
    const askedAt = new Map([
      ['ns/a', 0],
      ['ns/b', 400],
      ['ns/c', 450],
    ]);
    expect(allocationGaps(writes, { fieldManager: 'alloc', nodeOf, askedAt }).map((g) => [g.to, g.ms])).toEqual([
      ['ns/c', 10],
    ]);
  });

  it("counts each container's first write by the allocator's field manager only, and only the containers given", () => {
    const writes = [
      write('ns/a', 100, 110),
      write('ns/b', 105, 108, 'status-writer'),
      write('ns/b', 130, 140),
      write('ns/a', 200, 210),
      write('other/z', 115, 120),
      write('ns/c', 150, 160),
    ];
    const askedAt = new Map([...nodeOf.keys()].map((c) => [c, 0]));
    expect(allocationGaps(writes, { fieldManager: 'alloc', nodeOf, askedAt }).map((g) => [g.from, g.to, g.ms])).toEqual(
      [
        ['ns/a', 'ns/b', 20],
        ['ns/b', 'ns/c', 10],
      ],
    );
  });

  it('does not count a container whose request was never seen', () => {
    const writes = [write('ns/a', 100, 110), write('ns/b', 120, 130)];
    expect(allocationGaps(writes, { fieldManager: 'alloc', nodeOf, askedAt: new Map([['ns/a', 0]]) })).toEqual([]);
  });
});
