import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  allocateClusterPortRange,
  allocateContainerPorts,
  allocateSingletonPorts,
  containerPortBlocks,
  type PortBlock,
  type PortRange,
} from '../../../src/allocation/index.js';

const range: PortRange = { basePort: 35000, size: 500 };

const overlaps = (a: PortBlock, b: PortBlock): boolean => a.port < b.port + b.count && b.port < a.port + a.count;

describe('allocateClusterPortRange', () => {
  it('starts at 35000 with 500 ports', () => {
    expect(allocateClusterPortRange([])).toEqual({ ok: true, range: { basePort: 35000, size: 500 } });
  });

  it('takes the first free gap, including the one before the first range', () => {
    expect(allocateClusterPortRange([{ basePort: 35500, size: 500 }])).toEqual({
      ok: true,
      range: { basePort: 35000, size: 500 },
    });
    expect(
      allocateClusterPortRange([
        { basePort: 35000, size: 500 },
        { basePort: 36500, size: 500 },
      ]),
    ).toEqual({ ok: true, range: { basePort: 35500, size: 500 } });
  });

  it('skips a gap that is too small', () => {
    const existing = [
      { basePort: 35000, size: 500 },
      { basePort: 35700, size: 500 },
    ];
    expect(allocateClusterPortRange(existing)).toEqual({ ok: true, range: { basePort: 36200, size: 500 } });
  });

  it('may end exactly at 65535 but never past it', () => {
    const upTo65499: PortRange[] = [{ basePort: 35000, size: 30500 }];
    expect(allocateClusterPortRange(upTo65499, 36)).toEqual({ ok: true, range: { basePort: 65500, size: 36 } });
    expect(allocateClusterPortRange(upTo65499, 37)).toMatchObject({
      ok: false,
      error: { type: 'PortsExhausted', purpose: 'cluster-range', toPort: 65535 },
    });
  });

  it('never overlaps an existing range and stays within 35000-65535', () => {
    const rangeArb = fc.record({
      basePort: fc.integer({ min: 30000, max: 66000 }),
      size: fc.integer({ min: 1, max: 3000 }),
    });
    fc.assert(
      fc.property(fc.array(rangeArb, { maxLength: 20 }), fc.integer({ min: 1, max: 2000 }), (existing, size) => {
        const result = allocateClusterPortRange(existing, size);
        if (!result.ok) return;
        const block = { port: result.range.basePort, count: size };
        expect(block.port).toBeGreaterThanOrEqual(35000);
        expect(block.port + size - 1).toBeLessThanOrEqual(65535);
        for (const other of existing) expect(overlaps(block, { port: other.basePort, count: other.size })).toBe(false);
      }),
    );
  });
});

describe('allocateSingletonPorts', () => {
  it('gives LB, LB admin and S3 one port each from base + 300', () => {
    expect(allocateSingletonPorts(range, [])).toEqual({
      ok: true,
      ports: { lbPort: 35300, lbAdminPort: 35301, s3Port: 35302 },
    });
  });

  it('avoids every container port of the cluster, on any node', () => {
    const containerPorts = [
      ...containerPortBlocks({ wekaPort: 35000, agentPort: 35300 }),
      ...containerPortBlocks({ wekaPort: 35100, agentPort: 35302 }),
    ];
    expect(allocateSingletonPorts(range, containerPorts)).toEqual({
      ok: true,
      ports: { lbPort: 35301, lbAdminPort: 35303, s3Port: 35304 },
    });
  });

  it('keeps the singletons the cluster already has and avoids them for the others', () => {
    expect(allocateSingletonPorts(range, [], { lbAdminPort: 35300 })).toEqual({
      ok: true,
      ports: { lbPort: 35301, lbAdminPort: 35300, s3Port: 35302 },
    });
  });

  it('reports exhaustion when base + 300 to the end of the range is taken', () => {
    const everyPort = [{ port: 35300, count: 199 }];
    expect(allocateSingletonPorts(range, everyPort)).toMatchObject({
      ok: false,
      error: { type: 'PortsExhausted', purpose: 'singleton', fromPort: 35300, toPort: 35499 },
    });
  });

  it('refuses a range too small to have single ports', () => {
    expect(allocateSingletonPorts({ basePort: 35000, size: 300 }, [])).toMatchObject({
      ok: false,
      error: { type: 'InvalidAllocationRequest' },
    });
  });
});

describe('allocateContainerPorts', () => {
  it('gives the first container a block of 100 at base and an agent port at base + 300', () => {
    expect(allocateContainerPorts(range, [])).toEqual({ ok: true, ports: { wekaPort: 35000, agentPort: 35300 } });
  });

  it('avoids every allocation on the node and the cluster singletons', () => {
    const nodePorts = containerPortBlocks({ wekaPort: 35000, agentPort: 35300 });
    const result = allocateContainerPorts(range, nodePorts, { lbPort: 35301, s3Port: 35302 });
    expect(result).toEqual({ ok: true, ports: { wekaPort: 35100, agentPort: 35303 } });
  });

  it('keeps weka port blocks below base + 300, where single ports start', () => {
    const nodePorts = [0, 100, 200].flatMap((offset) =>
      containerPortBlocks({ wekaPort: 35000 + offset, agentPort: 35300 + offset / 100 }),
    );
    expect(allocateContainerPorts(range, nodePorts)).toMatchObject({
      ok: false,
      error: { type: 'PortsExhausted', purpose: 'weka-port', toPort: 35299 },
    });
  });

  it('never overlaps what is taken on the node', () => {
    const blockArb = fc.record({
      port: fc.integer({ min: 34900, max: 35600 }),
      count: fc.integer({ min: 1, max: 120 }),
    });
    fc.assert(
      fc.property(fc.array(blockArb, { maxLength: 12 }), (nodePorts) => {
        const result = allocateContainerPorts(range, nodePorts);
        if (!result.ok) return;
        for (const mine of containerPortBlocks(result.ports)) {
          for (const taken of nodePorts) expect(overlaps(mine, taken)).toBe(false);
        }
        expect(result.ports.wekaPort + 99).toBeLessThan(35300);
        expect(result.ports.agentPort).toBeGreaterThanOrEqual(35300);
        expect(result.ports.agentPort).toBeLessThan(35500);
      }),
    );
  });
});
