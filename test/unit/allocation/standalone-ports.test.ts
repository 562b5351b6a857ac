import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  allocateStandalonePorts,
  containerPortBlocks,
  overlappingRange,
  type PortBlock,
} from '../../../src/allocation/index.js';

const overlaps = (a: PortBlock, b: PortBlock): boolean => a.port < b.port + b.count && b.port < a.port + a.count;

describe('allocateStandalonePorts', () => {
  it("gives the first standalone container Weka's default ports: a block at 14000 and agent port 14100", () => {
    expect(allocateStandalonePorts([], [])).toEqual({ ok: true, ports: { wekaPort: 14000, agentPort: 14100 } });
  });

  it('avoids the ports taken on the node', () => {
    const taken = containerPortBlocks({ wekaPort: 14000, agentPort: 14100 });
    expect(allocateStandalonePorts(taken, [])).toEqual({ ok: true, ports: { wekaPort: 14101, agentPort: 14201 } });
  });

  it("avoids every cluster's range, even one a basePort override put below 35000", () => {
    expect(allocateStandalonePorts([], [{ basePort: 14050, size: 500 }])).toEqual({
      ok: true,
      ports: { wekaPort: 14550, agentPort: 14000 },
    });
  });

  it('reports exhaustion when no block of 100 is left', () => {
    const result = allocateStandalonePorts([], [{ basePort: 14000, size: 65535 - 14000 - 50 }]);
    expect(result).toMatchObject({ ok: false, error: { type: 'PortsExhausted', purpose: 'weka-port' } });
  });

  it('never overlaps what is taken on the node or any cluster range', () => {
    const block = fc.record({ port: fc.integer({ min: 13000, max: 40000 }), count: fc.integer({ min: 1, max: 600 }) });
    const range = fc.record({
      basePort: fc.integer({ min: 13000, max: 40000 }),
      size: fc.integer({ min: 1, max: 600 }),
    });
    fc.assert(
      fc.property(fc.array(block, { maxLength: 20 }), fc.array(range, { maxLength: 5 }), (taken, ranges) => {
        const result = allocateStandalonePorts(taken, ranges);
        if (!result.ok) return;
        const given = containerPortBlocks(result.ports);
        expect(overlaps(given[0]!, given[1]!)).toBe(false);
        for (const g of given) {
          expect(g.port).toBeGreaterThanOrEqual(14000);
          expect(g.port + g.count - 1).toBeLessThanOrEqual(65535);
          for (const t of taken) expect(overlaps(g, t)).toBe(false);
          for (const r of ranges) expect(overlaps(g, { port: r.basePort, count: r.size })).toBe(false);
        }
      }),
    );
  });
});

describe('overlappingRange', () => {
  const others = [
    { name: 'ns/a', range: { basePort: 35000, size: 500 } },
    { name: 'ns/b', range: { basePort: 36000, size: 500 } },
  ];

  it.each([
    [35499, 'ns/a'],
    [34501, 'ns/a'],
    [35900, 'ns/b'],
    [35500, undefined],
    [34500, undefined],
  ])('a range of 500 from %s overlaps %s', (basePort, name) => {
    expect(overlappingRange({ basePort, size: 500 }, others)?.name).toBe(name);
  });
});
