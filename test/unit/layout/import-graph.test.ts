import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importCircles, importGraph, type ImportGraph } from '../../support/import-graph.js';

const root = resolve(import.meta.dirname, '../../..');

/**
 * The parts of the code, lowest first: a file may import its own part and the parts of lower
 * layers, nothing above and nothing beside. Inside src/, the pure core: the allocator; the API,
 * annotation and Weka formats over it; the protocol; the decisions of the node mutex, of the
 * lifecycles and the manifests they make; the operator process's own decisions; the CLI.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['src/allocation/', 'src/errors.ts', 'src/backoff.ts', 'src/map-limited.ts'],
  ['src/annotations/', 'src/api/', 'src/weka/'],
  ['src/protocol.ts'],
  ['src/manifests/', 'src/node/', 'src/lifecycle/'],
  ['src/operator/'],
  ['src/cli/', 'crds/'],
  ['activities/'],
  ['workflows/', 'deploy/operator/'],
  ['deploy/local/'],
];

/** What workflows may import of activities: their types only (Temporal proxies the rest). */
const WORKFLOW_VIEW_OF_ACTIVITIES = ['activities/types.ts', 'activities/index.ts'];

function partOf(file: string): { part: string; layer: number } | undefined {
  for (const [layer, parts] of LAYERS.entries())
    for (const part of parts) if (file === part || file.startsWith(part)) return { part, layer };
  return undefined;
}

/** Every import that goes up, sideways, or from production code into development code. */
function arrowsBackUp(graph: ImportGraph): string[] {
  const wrong: string[] = [];
  for (const [file, targets] of graph) {
    const from = partOf(file);
    if (!from) continue;
    for (const target of targets) {
      const to = partOf(target);
      if (!to) {
        wrong.push(`${file} -> ${target} (outside every part)`);
        continue;
      }
      if (to.part === from.part) continue;
      if (from.part === 'workflows/' && to.part === 'activities/' && !WORKFLOW_VIEW_OF_ACTIVITIES.includes(target))
        wrong.push(`${file} -> ${target} (workflows see activities' types only)`);
      else if (to.layer >= from.layer && !(from.part === 'workflows/' && to.part === 'activities/'))
        wrong.push(`${file} -> ${target}`);
    }
  }
  return wrong.sort();
}

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

  const graph = importGraph(root, ['src', 'workflows', 'activities', 'deploy', 'crds']);

  it('has no circle in the code', () => {
    expect(graph.size).toBeGreaterThan(200);
    expect(importCircles(graph)).toEqual([]);
  });

  it('places every file in a part', () => {
    expect([...graph.keys()].filter((f) => !partOf(f))).toEqual([]);
  });

  it('tells an arrow back up, sideways, or from production code into development code', () => {
    const graph = new Map([
      ['src/node/a.ts', ['src/allocation/b.ts', 'src/operator/c.ts', 'src/manifests/d.ts']],
      ['workflows/w.ts', ['activities/types.ts', 'activities/weka.ts']],
      ['deploy/operator/m.ts', ['deploy/local/sim.ts', 'test/support/x.ts']],
    ]);
    expect(arrowsBackUp(graph)).toEqual([
      'deploy/operator/m.ts -> deploy/local/sim.ts',
      'deploy/operator/m.ts -> test/support/x.ts (outside every part)',
      'src/node/a.ts -> src/manifests/d.ts',
      'src/node/a.ts -> src/operator/c.ts',
      "workflows/w.ts -> activities/weka.ts (workflows see activities' types only)",
    ]);
  });

  it('has no arrow back up', () => {
    expect(arrowsBackUp(graph)).toEqual([]);
  });
});
