// A tiny seeded PRNG (mulberry32) for the chaos tests. Every random choice a chaos test makes
// (when to kill, what to delete, the simulator's fault seed) comes from it, so a failing run can be
// replayed with the seed it printed: CHAOS_SEED=<seed> npx vitest run --project integration ...
// (Timing still varies between runs; the choices do not.) Without CHAOS_SEED every run draws a
// fresh seed, so that successive CI runs explore different choices.
import { randomInt } from 'node:crypto';

export interface Random {
  /** A number in [0, 1). */
  next(): number;
  /** A whole number in [min, max], both included. */
  int(min: number, max: number): number;
  /** `count` distinct items of `items`, in a random order. */
  sample<T>(items: readonly T[], count: number): T[];
}

export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  const int = (min: number, max: number): number => min + Math.floor(next() * (max - min + 1));
  return {
    next,
    int,
    sample(items, count) {
      if (count > items.length) throw new Error(`cannot pick ${count} of ${items.length} items`);
      const pool = [...items];
      // Fisher-Yates, stopped after `count` picks.
      for (let i = 0; i < count; i++) {
        const j = int(i, pool.length - 1);
        [pool[i], pool[j]] = [pool[j]!, pool[i]!];
      }
      return pool.slice(0, count);
    },
  };
}

/** The seed from CHAOS_SEED (a whole number), or a fresh one; a malformed value is an error, never ignored. */
export function chaosSeed(env: NodeJS.ProcessEnv = process.env): number {
  const text = env['CHAOS_SEED']?.trim();
  if (text === undefined || text === '') return randomInt(0, 2 ** 32);
  const seed = Number(text);
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff)
    throw new Error(`CHAOS_SEED must be a whole number from 0 to ${0xffffffff}, got "${text}"`);
  return seed;
}

/** The scenario's PRNG, with its seed printed so that a failure can be replayed. */
export function chaosRandom(scenario: string): { seed: number; random: Random } {
  const seed = chaosSeed();
  console.log(`chaos ${scenario}: seed ${seed} (replay with CHAOS_SEED=${seed})`);
  return { seed, random: seededRandom(seed) };
}
