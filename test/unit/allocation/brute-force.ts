/**
 * Tries every assignment of pieces to drives: the reference the exact feasibility test must agree
 * with. Equal pieces are interchangeable, so a run of equal pieces only tries non-decreasing drive
 * indices; that skips permutations of the same assignment and nothing else.
 */
export function bruteForceFits(available: readonly number[], sizes: readonly number[]): boolean {
  const pieces = [...sizes].sort((a, b) => b - a);
  const free = [...available];
  const place = (i: number, firstDrive: number): boolean => {
    const size = pieces[i];
    if (size === undefined) return true;
    for (let d = firstDrive; d < free.length; d++) {
      if ((free[d] ?? 0) < size) continue;
      free[d] = (free[d] ?? 0) - size;
      const ok = place(i + 1, pieces[i + 1] === size ? d : 0);
      free[d] = (free[d] ?? 0) + size;
      if (ok) return true;
    }
    return false;
  };
  return place(0, 0);
}
