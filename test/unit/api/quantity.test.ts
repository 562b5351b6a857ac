// Resource quantities compared by amount, as the apiserver rewrites them.
import { describe, expect, it } from 'vitest';
import { quantityValue, sameQuantity } from '../../../src/api/quantity.js';

describe('resource quantities', () => {
  it.each([
    ['3000', 3000],
    ['3k', 3000],
    ['1.5k', 1500],
    ['2Ki', 2048],
    ['1Gi', 2 ** 30],
    ['500m', 0.5],
    ['1e3', 1000],
    ['0', 0],
  ])('reads %s as %d', (text, value) => {
    expect(quantityValue(text)).toBe(value);
  });

  it.each(['', 'GiB', '3 k', '1Xi', 'ten'])('reads %j as no quantity', (text) => {
    expect(quantityValue(text)).toBeNaN();
  });

  it('compares by amount, and a missing one equals only a missing one', () => {
    expect(sameQuantity('3000', '3k')).toBe(true);
    expect(sameQuantity('3000', '3001')).toBe(false);
    expect(sameQuantity(undefined, '0')).toBe(false);
    expect(sameQuantity(undefined, undefined)).toBe(true);
  });
});
