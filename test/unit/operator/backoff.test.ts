import { describe, expect, it } from 'vitest';
import { backoffDelay, DEFAULT_BACKOFF, type Backoff } from '../../../src/backoff.js';

const WATCHER: Backoff = { initialMs: 200, maxMs: 30_000 };
const EXEC: Backoff = { initialMs: 200, maxMs: 5_000, jitter: false };
const STEADY: Backoff = { initialMs: 1_000, maxMs: 1_000, jitter: false };
const ODD: Backoff = { initialMs: 3, maxMs: 100 };
const BACKOFFS = { WATCHER, EXEC, STEADY, ODD };

interface Case {
  failures: number;
  of: keyof typeof BACKOFFS;
  random: number;
  delay: number;
}

describe('backoffDelay', () => {
  it.each<Case>([
    { failures: 1, of: 'WATCHER', random: 0, delay: 100 },
    { failures: 1, of: 'WATCHER', random: 1, delay: 200 },
    { failures: 1, of: 'WATCHER', random: 0.5, delay: 150 },
    { failures: 3, of: 'WATCHER', random: 1, delay: 800 },
    { failures: 3, of: 'WATCHER', random: 0, delay: 400 },
    { failures: 30, of: 'WATCHER', random: 1, delay: 30_000 },
    { failures: 30, of: 'WATCHER', random: 0, delay: 15_000 },
    { failures: 0, of: 'WATCHER', random: 1, delay: 200 },
    { failures: 1, of: 'ODD', random: 0, delay: 2 },
    { failures: 1, of: 'EXEC', random: 0, delay: 200 },
    { failures: 2, of: 'EXEC', random: 0, delay: 400 },
    { failures: 3, of: 'EXEC', random: 0, delay: 800 },
    { failures: 5, of: 'EXEC', random: 0, delay: 3_200 },
    { failures: 6, of: 'EXEC', random: 0, delay: 5_000 },
    { failures: 20, of: 'EXEC', random: 0, delay: 5_000 },
    { failures: 1, of: 'STEADY', random: 0, delay: 1_000 },
    { failures: 29, of: 'STEADY', random: 0, delay: 1_000 },
  ])('$of after $failures failures, random() = $random: $delay ms', ({ failures, of, random, delay }) => {
    expect(backoffDelay(failures, BACKOFFS[of], () => random)).toBe(delay);
  });

  it('is jittered by default, between half and all of the capped delay', () => {
    expect(DEFAULT_BACKOFF).toEqual(WATCHER);
    for (let i = 0; i < 100; i++) {
      const delay = backoffDelay(4, DEFAULT_BACKOFF);
      expect(delay).toBeGreaterThanOrEqual(800);
      expect(delay).toBeLessThanOrEqual(1_600);
    }
  });

  it('asks for no random number without jitter', () => {
    expect(
      backoffDelay(2, EXEC, () => {
        throw new Error('no jitter, no random()');
      }),
    ).toBe(400);
  });
});
