// Where the scale benchmark puts its containers, and in which order it creates them.
import { describe, expect, it } from 'vitest';
import { nodeByNode, roundRobin } from '../../bench/bench-env.js';

const nodesOf = (placements: { nodeName: string }[]) => placements.map((p) => p.nodeName);

describe('benchmark placements', () => {
  it('round robin puts each container on the next node', () => {
    expect(nodesOf(roundRobin('c', 5, ['a', 'b']))).toEqual(['a', 'b', 'a', 'b', 'a']);
  });

  it('node by node fills one node before the next, with no node over its share', () => {
    const placed = nodeByNode('c', 10, ['a', 'b', 'c']);
    expect(nodesOf(placed)).toEqual(['a', 'a', 'a', 'a', 'b', 'b', 'b', 'b', 'c', 'c']);
    expect(placed.map((p) => p.name)).toEqual(Array.from({ length: 10 }, (_, i) => `c-${i}`));
  });

  it('node by node uses every node when the containers divide evenly', () => {
    const placed = nodesOf(
      nodeByNode(
        'c',
        10_000,
        Array.from({ length: 200 }, (_, i) => `n${i}`),
      ),
    );
    const perNode = new Map<string, number>();
    for (const n of placed) perNode.set(n, (perNode.get(n) ?? 0) + 1);
    expect(perNode.size).toBe(200);
    expect(new Set(perNode.values())).toEqual(new Set([50]));
  });
});
