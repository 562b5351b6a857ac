// Kubernetes resource quantities as numbers, for comparing what a node publishes with what it
// should: the apiserver writes "3000" back as "3k".
const SUFFIXES: Record<string, number> = {
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
  m: 1e-3,
};

/** The quantity's value; NaN for text that is not a quantity. */
export function quantityValue(text: string): number {
  const match = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:[eE]([+-]?\d+)|([kMGTPE]i?|Ki|m)?)$/.exec(text.trim());
  if (!match) return Number.NaN;
  const [, number, exponent, suffix] = match;
  const base = Number(number);
  if (exponent !== undefined) return base * 10 ** Number(exponent);
  const factor = SUFFIXES[suffix ?? ''];
  return factor === undefined ? Number.NaN : base * factor;
}

/** Whether two quantities are the same amount ("3000" and "3k"). */
export function sameQuantity(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return quantityValue(a) === quantityValue(b);
}
