import { describe, expect, it } from 'vitest';
import type { WekaContainer } from '../../../src/api/index.js';
import { laggardSummary } from '../../support/containers.js';

function container(name: string, phase: string, extra: Partial<WekaContainer['metadata']> = {}, message?: string) {
  return {
    metadata: { namespace: 'ns', name, ...extra },
    spec: {},
    status: {
      phase,
      ...(message === undefined
        ? {}
        : {
            conditions: [
              {
                type: 'Ready',
                status: 'False',
                reason: 'TearingDown',
                message,
                lastTransitionTime: '2026-12-08T00:00:00Z',
              },
            ],
          }),
    },
  } as unknown as WekaContainer;
}

describe('what a wait for Ready containers says when it times out', () => {
  it('names the containers not Ready, how long a deleted one has been deleted, its finalizers and its Ready condition', () => {
    const now = Date.parse('2026-12-08T00:04:10Z');
    const text = laggardSummary(
      [
        container('a', 'Ready'),
        container(
          'b',
          'Deleting',
          { deletionTimestamp: '2026-12-08T00:00:00Z', finalizers: ['weka.weka.io/drive-sharing'] },
          'removing virtual drive 2 of 4',
        ),
        container('c', 'Allocating'),
      ],
      5,
      now,
    );
    expect(text).toBe(
      'ns/b Deleting deleted 250 s ago, finalizers [weka.weka.io/drive-sharing]; Ready TearingDown: removing virtual drive 2 of 4; ns/c Allocating',
    );
  });

  it('lists at most the limit and counts the rest', () => {
    const all = ['a', 'b', 'c'].map((n) => container(n, 'Pending'));
    expect(laggardSummary(all, 2)).toBe('ns/a Pending; ns/b Pending; and 1 more');
  });
});
