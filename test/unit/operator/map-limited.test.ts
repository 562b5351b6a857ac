import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mapLimited } from '../../../src/map-limited.js';

const tick = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe('mapLimited', () => {
  it('keeps the order of the items and never runs more than the limit at once', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 12 }),
        fc.integer({ min: 1, max: 5 }),
        async (delays, limit) => {
          let running = 0;
          let most = 0;
          const results = await mapLimited(delays, limit, async (delay, index) => {
            running++;
            most = Math.max(most, running);
            await tick(delay);
            running--;
            return index * 10;
          });
          expect(results).toEqual(delays.map((_, i) => i * 10));
          expect(most).toBeLessThanOrEqual(limit);
          if (delays.length > 0) expect(most).toBeGreaterThanOrEqual(1);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('runs up to the limit together: four reads of 50 ms at four at a time take about one read', async () => {
    let running = 0;
    let most = 0;
    await mapLimited([1, 2, 3, 4], 4, async () => {
      running++;
      most = Math.max(most, running);
      await tick(50);
      running--;
    });
    expect(most).toBe(4);
  });

  it('rejects with the first failure and starts nothing after it', async () => {
    const started: number[] = [];
    const failing = mapLimited([0, 1, 2, 3, 4, 5], 2, async (item) => {
      started.push(item);
      await tick(item === 1 ? 1 : 20);
      if (item === 1) throw new Error('device 1 cannot be read');
      return item;
    });
    await expect(failing).rejects.toThrow('device 1 cannot be read');
    await tick(60);
    expect(started).toEqual([0, 1]);
  });

  it('treats a limit below one as one', async () => {
    expect(await mapLimited(['a', 'b'], 0, async (x) => x.toUpperCase())).toEqual(['A', 'B']);
  });
});
