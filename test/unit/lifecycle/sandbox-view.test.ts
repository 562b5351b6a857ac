// The sandbox's progress view: phases counted, and per node the GiB given out per drive type.
import { beforeEach, describe, expect, it } from 'vitest';
import {
  nodeUsage,
  phaseCounts,
  renderSnapshot,
  templateCapacity,
  ViewPrinter,
  type SandboxSnapshot,
  type ViewContainer,
  type ViewNode,
} from '../../../deploy/local/sandbox-view.js';

const node: ViewNode = {
  name: 'weka-node-1',
  drives: [
    { physicalUUID: 'p1', capacityGiB: 7680, type: 'TLC' },
    { physicalUUID: 'p2', capacityGiB: 30720, type: 'QLC' },
  ],
};
const containers: ViewContainer[] = [
  {
    namespace: 'a',
    name: 'd0',
    node: 'weka-node-1',
    phase: 'Ready',
    cluster: 'tenant-a',
    virtualDrives: [
      { capacityGiB: 1000, type: 'TLC', physicalUUID: 'p1' },
      { capacityGiB: 3000, type: 'QLC', physicalUUID: 'p2' },
    ],
  },
  {
    namespace: 'b',
    name: 'd0',
    node: 'weka-node-1',
    phase: 'Signing',
    virtualDrives: [{ capacityGiB: 500, type: 'TLC', physicalUUID: 'p1' }],
  },
  {
    namespace: 'b',
    name: 'd1',
    node: 'weka-node-2',
    phase: 'Ready',
    virtualDrives: [{ capacityGiB: 700, type: 'TLC', physicalUUID: 'elsewhere' }],
  },
];

describe('sandbox view', () => {
  it('counts containers by phase', () => {
    expect([...phaseCounts(containers)]).toEqual([
      ['Ready', 2],
      ['Signing', 1],
    ]);
  });

  it('sums per node and type only the virtual drives on that node', () => {
    expect(nodeUsage(node, containers)).toEqual([
      { type: 'QLC', usedGiB: 3000, totalGiB: 30720, blockedGiB: 0 },
      { type: 'TLC', usedGiB: 1500, totalGiB: 7680, blockedGiB: 0 },
    ]);
  });

  it('leaves a blocked drive out of what the node offers, and says how much is blocked', () => {
    const blocked: ViewNode = {
      ...node,
      drives: [...node.drives, { physicalUUID: 'p3', capacityGiB: 3840, type: 'TLC' }],
      blocked: ['p1'],
    };
    const moved: ViewContainer[] = [
      { ...containers[0]!, virtualDrives: [{ capacityGiB: 1000, type: 'TLC', physicalUUID: 'p3' }] },
    ];
    expect(nodeUsage(blocked, moved)).toEqual([
      { type: 'QLC', usedGiB: 0, totalGiB: 30720, blockedGiB: 0 },
      { type: 'TLC', usedGiB: 1000, totalGiB: 3840, blockedGiB: 7680 },
    ]);
    const text = renderSnapshot({ clusters: [], containers: moved, nodes: [blocked], elapsedMs: 0, stage: 's' });
    expect(text).toContain('1000 / 3840 (7680 GiB blocked)');
  });

  it('renders clusters, containers and node usage', () => {
    const text = renderSnapshot({
      clusters: [
        {
          namespace: 'a',
          name: 'tenant-a',
          phase: 'Ready',
          guid: 'g-1',
          driveContainers: 3,
          capacity: '3 x 2000 GiB each',
        },
      ],
      containers,
      nodes: [node],
      elapsedMs: 12_400,
      stage: 'forming',
    });
    expect(text).toContain('(12 s)');
    expect(text).toMatch(/a\/tenant-a\s+Ready\s+1\/3 Ready\s+3 x 2000 GiB each\s+g-1/);
    expect(text).toContain('Drive containers: 3 (Ready 2, Signing 1)');
    expect(text).toMatch(/weka-node-1\s+TLC\s+\[#+\.+\] 1500 \/ 7680/);
  });

  it('shows whole drives: per container, and per node given out of those signed for exclusive use', () => {
    const text = renderSnapshot({
      clusters: [],
      containers: [
        {
          namespace: 'c',
          name: 'd0',
          node: 'weka-node-1',
          phase: 'Ready',
          virtualDrives: [],
          wholeDrives: ['S1', 'S2'],
        },
      ],
      nodes: [{ ...node, wholeDrives: ['S1', 'S2', 'S3', 'S4'] }],
      elapsedMs: 0,
      stage: 'forming',
    });
    expect(text).toMatch(/c\/d0\s+weka-node-1\s+Ready\s+2 whole drives/);
    expect(text).toMatch(/weka-node-1\s+excl\s+\[#+\.+\] 2 \/ 4 whole drives/);
  });

  it.each([
    [{ containerCapacity: 12000 }, '12000 GiB each'],
    [{ numDrives: 4, driveCapacity: 1000 }, '4 x 1000 GiB each'],
    [{ numDrives: 4 }, '4 whole drives each'],
    [undefined, undefined],
  ])('shows a template %j as %s', (template, text) => expect(templateCapacity(template)).toBe(text));
});

describe('sandbox view printer', () => {
  const snapshot = (elapsedMs: number, phase = 'Signing'): SandboxSnapshot => ({
    clusters: [{ namespace: 'a', name: 'tenant-a', phase: 'Forming', driveContainers: 3 }],
    containers: containers.map((c, i) => (i === 1 ? { ...c, phase } : c)),
    nodes: [node],
    elapsedMs,
    stage: 'sign-drives shared Done, exclusive Done',
  });
  let written: string[];
  beforeEach(() => {
    written = [];
  });
  const printer = (terminal: boolean) =>
    new ViewPrinter({
      terminal,
      header: 'Where to look:\n  Temporal UI:  http://127.0.0.1:1\n',
      write: (t) => written.push(t),
    });

  describe('in a log', () => {
    it('prints a change once, and nothing more while only time passes', () => {
      const view = printer(false);
      view.show(snapshot(1_000), 1_000);
      for (let t = 2_000; t < 31_000; t += 1_000) view.show(snapshot(t), t);
      expect(written).toEqual([`${renderSnapshot(snapshot(1_000))}\n\n`]);
    });

    it('prints the next change in full, with its time', () => {
      const view = printer(false);
      view.show(snapshot(1_000), 1_000);
      view.show(snapshot(2_000), 2_000);
      view.show(snapshot(3_000, 'Ready'), 3_000);
      expect(written).toHaveLength(2);
      expect(written[1]).toBe(`${renderSnapshot(snapshot(3_000, 'Ready'))}\n\n`);
      expect(written[1]).toContain('(3 s)');
    });

    it('prints a heartbeat line after 30 s without a change, then again 30 s later', () => {
      const view = printer(false);
      view.show(snapshot(1_000), 1_000);
      view.show(snapshot(30_999), 30_999);
      expect(written).toHaveLength(1);
      view.show(snapshot(31_000), 31_000);
      expect(written[1]).toBe(
        '… 31 s: no change; 2 of 3 drive containers Ready (sign-drives shared Done, exclusive Done)\n',
      );
      view.show(snapshot(45_000), 45_000);
      view.show(snapshot(61_000), 61_000);
      expect(written).toHaveLength(3);
      expect(written[2]).toMatch(/^… 61 s: no change;/);
    });

    it('counts the heartbeat from the last change', () => {
      const view = printer(false);
      view.show(snapshot(1_000), 1_000);
      view.show(snapshot(20_000, 'Ready'), 20_000);
      view.show(snapshot(40_000, 'Ready'), 40_000);
      expect(written).toHaveLength(2);
      view.show(snapshot(50_000, 'Ready'), 50_000);
      expect(written[2]).toMatch(/^… 50 s: no change; 3 of 3 drive containers Ready/);
    });
  });

  describe('on a terminal', () => {
    it('redraws the screen with the addresses above the view, every time the view changes', () => {
      const view = printer(true);
      view.show(snapshot(1_000), 1_000);
      view.show(snapshot(1_000), 1_400);
      view.show(snapshot(2_000), 2_000);
      expect(written).toHaveLength(2);
      for (const frame of written) {
        expect(frame.startsWith('\x1b[H\x1b[2JWhere to look:\n  Temporal UI:  http://127.0.0.1:1\n\n')).toBe(true);
      }
      expect(written[1]).toContain('(2 s)');
    });
  });
});
