import { describe, expect, it } from 'vitest';
import { driveContainerResources, proxyResources } from '../../../src/manifests/pod-resources.js';

describe('driveContainerResources', () => {
  // Figures worked out by hand from the reference's formulas (see the module's header).
  it.each([
    // cores, drives: CPU, memory, huge pages, Weka's MEMORY (huge pages less 200 MiB per drive, or per core)
    [1, 0, '3', '11000Mi', '1600Mi', '1400MiB'],
    [1, 2, '3', '12400Mi', '1800Mi', '1400MiB'],
    [2, 0, '5', '14000Mi', '3200Mi', '2800MiB'],
    [4, 8, '9', '25600Mi', '7200Mi', '5600MiB'],
  ])(
    'sizes %i cores and %i drives as %s CPUs, %s memory, %s huge pages, MEMORY %s',
    (driveCores, numDrives, cpu, memory, hp, weka) => {
      const r = driveContainerResources({ driveCores, numDrives });
      expect(r.requests).toEqual({ cpu, memory, 'hugepages-2Mi': hp });
      expect(r.wekaMemory).toBe(weka);
      // Guaranteed: every limit is its request.
      expect(r.limits).toEqual(r.requests);
    },
  );

  it('counts at least one core and no negative drives', () => {
    expect(driveContainerResources({ driveCores: 0, numDrives: -1 })).toEqual(
      driveContainerResources({ driveCores: 1, numDrives: 0 }),
    );
  });
});

describe('proxyResources', () => {
  it.each([
    // drives (GiB): huge pages
    [[], '2426Mi'],
    [[7680, 7680, 30720, 30720], `${378 + 4 * 4 * 30 + 2048}Mi`],
    // 7153 GiB rounds up to 7 TiB; 1025 GiB to 2 TiB.
    [[7153, 100, 100, 100], `${378 + 4 * 4 * 7 + 2048}Mi`],
    [[1025], `${378 + 4 * 2 + 2048}Mi`],
  ])('gives drives of %j GiB %s of huge pages, request equal to limit', (sizes, hp) => {
    const r = proxyResources(sizes.map((capacityGiB) => ({ capacityGiB })));
    expect(r.requests['hugepages-2Mi']).toBe(hp);
    expect(r.limits['hugepages-2Mi']).toBe(hp);
    // Weka is told it may use all but the 2048 MiB it keeps for itself.
    expect(r.wekaMemory).toBe(`${Number(hp.slice(0, -2)) - 2048}MiB`);
  });

  it('asks for half a CPU and 2500 MB, and may use two CPUs and 7500 MB (Burstable)', () => {
    const r = proxyResources([{ capacityGiB: 7680 }]);
    expect(r.requests).toMatchObject({ cpu: '500m', memory: '2500M' });
    expect(r.limits).toMatchObject({ cpu: '2000m', memory: '7500M' });
  });
});
