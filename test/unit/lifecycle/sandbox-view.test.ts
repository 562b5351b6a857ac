// The sandbox's progress view: phases counted, and per node the GiB given out per drive type.
import { describe, expect, it } from 'vitest';
import {
  nodeUsage,
  phaseCounts,
  renderSnapshot,
  templateCapacity,
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
      { type: 'QLC', usedGiB: 3000, totalGiB: 30720 },
      { type: 'TLC', usedGiB: 1500, totalGiB: 7680 },
    ]);
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
