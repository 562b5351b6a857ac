import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importCircles, importGraph } from '../../support/import-graph.js';

const root = resolve(import.meta.dirname, '../../..');

describe('the import graph', () => {
  it('finds a circle, and only files that import each other', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts', 'd.ts']],
      ['d.ts', []],
      ['e.ts', ['e.ts']],
    ]);
    expect(importCircles(graph)).toEqual([['a.ts', 'b.ts', 'c.ts'], ['e.ts']]);
  });

  it('has no circle in the code', () => {
    const graph = importGraph(root, ['src', 'workflows', 'activities', 'deploy', 'crds']);
    expect(graph.size).toBeGreaterThan(200);
    expect(importCircles(graph)).toEqual([]);
  });
});
