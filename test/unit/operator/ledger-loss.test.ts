// Which Nodes the watcher asks to have their allocation ledger rebuilt.
import { describe, expect, it } from 'vitest';
import { SHARED_DRIVES_ANNOTATION } from '../../../src/annotations/index.js';
import { ALLOCATIONS_ANNOTATION } from '../../../src/node/allocation-ledger.js';
import { ledgerLost, watchedNodeOf, type WatchedNode } from '../../../src/operator/ledger-loss.js';
import type { KnownContainer } from '../../../src/operator/pod-loss.js';

const lost: WatchedNode = { uid: 'u2', name: 'n1', hasLedger: false, hasSharedDrives: true };
const on = (phase: string | undefined, node = 'n1'): KnownContainer => ({
  uid: `c-${phase}-${node}`,
  namespace: 't',
  name: 'drive-0',
  node,
  ...(phase === undefined ? {} : { phase }),
});

describe('a Node that lost its allocation ledger', () => {
  it.each([
    ['a Ready container on it', lost, [on('Ready')], true],
    ['a container being deleted that still holds its drives', lost, [on('Deleting')], true],
    ['a container between allocation and Ready', lost, [on('AddingDrives')], true],
    ['only containers not allocated yet', lost, [on('Allocating'), on('Pending'), on(undefined)], false],
    ['a Ready container on another node only', lost, [on('Ready', 'n2')], false],
    ['no container at all', lost, [], false],
    ['its ledger present', { ...lost, hasLedger: true }, [on('Ready')], false],
    ['no shared drives listed to rebuild from', { ...lost, hasSharedDrives: false }, [on('Ready')], false],
  ] as const)('with %s: rebuilt now is %s', (_, node, containers, expected) => {
    expect(ledgerLost(node, containers)).toBe(expected);
  });
});

describe('what the watcher keeps of a Node', () => {
  it('reads whether it carries the ledger and the shared drives', () => {
    const annotations = { [SHARED_DRIVES_ANNOTATION]: '[]', [ALLOCATIONS_ANNOTATION]: '{}' };
    expect(watchedNodeOf({ metadata: { uid: 'u', name: 'n', annotations } })).toEqual({
      uid: 'u',
      name: 'n',
      hasLedger: true,
      hasSharedDrives: true,
    });
    expect(watchedNodeOf({ metadata: { uid: 'u', name: 'n' } })).toEqual({
      uid: 'u',
      name: 'n',
      hasLedger: false,
      hasSharedDrives: false,
    });
  });

  it('skips an object without a name or uid', () => {
    expect(watchedNodeOf({ metadata: { name: 'n' } })).toBeUndefined();
    expect(watchedNodeOf({})).toBeUndefined();
  });
});
