// The clean-stale-virtual-drives operation's decisions: its spec read or refused, the found drives
// no status names, and the fingerprint two passes or a person must agree on.
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../../src/node/sha256.js';
import {
  cleanStaleRequest,
  knownClusterGUIDs,
  staleFingerprint,
  unclaimedFound,
  type StaleVirtualDrive,
} from '../../../src/node/stale-virtual-drives.js';

const action = 'clean-stale-virtual-drives';
const FP = 'a'.repeat(64);

describe('cleanStaleRequest', () => {
  it.each([
    [
      'reports only unless deleteStaleVids',
      { nodeSelector: { a: 'b' } },
      { remove: false, secondPassAfterSeconds: 60 },
    ],
    [
      'removes after two passes with deleteStaleVids',
      { nodeSelector: { a: 'b' }, deleteStaleVids: true, secondPassAfterSeconds: 5 },
      { remove: true, secondPassAfterSeconds: 5 },
    ],
    [
      'removes at once what a person confirmed',
      { nodeSelector: { a: 'b' }, deleteStaleVids: true, confirmFingerprint: FP },
      { remove: true, confirmFingerprint: FP },
    ],
  ])('%s', (_name, payload, expected) => {
    const result = cleanStaleRequest({ action, payload: { cleanStaleVirtualDrivesPayload: payload } });
    expect(result).toMatchObject({ ok: true, request: { nodeSelector: { a: 'b' }, ...expected } });
  });

  it.each([
    ['another action', { action: 'sign-drives' }, 'UnsupportedAction'],
    ['no payload', { action }, 'MissingPayload'],
    [
      'an empty selector',
      { action, payload: { cleanStaleVirtualDrivesPayload: { nodeSelector: {} } } },
      'MissingNodeSelector',
    ],
    [
      'a fingerprint that is not one',
      {
        action,
        payload: {
          cleanStaleVirtualDrivesPayload: {
            nodeSelector: { a: 'b' },
            deleteStaleVids: true,
            confirmFingerprint: 'ABC',
          },
        },
      },
      'InvalidFingerprint',
    ],
    [
      'a fingerprint without deleteStaleVids',
      { action, payload: { cleanStaleVirtualDrivesPayload: { nodeSelector: { a: 'b' }, confirmFingerprint: FP } } },
      'FingerprintWithoutDelete',
    ],
    [
      'a pass interval out of bounds',
      { action, payload: { cleanStaleVirtualDrivesPayload: { nodeSelector: { a: 'b' }, secondPassAfterSeconds: 1 } } },
      'InvalidSecondPass',
    ],
  ])('refuses %s', (_name, spec, reason) => {
    expect(cleanStaleRequest(spec)).toMatchObject({ ok: false, reason });
  });
});

describe('unclaimedFound', () => {
  it('leaves out the found drives a status names', () => {
    const found = [
      { virtualUUID: 'v1', physicalUUID: 'p', capacityGiB: 10, ownerClusterGUID: 'g' },
      { virtualUUID: 'v2', physicalUUID: 'p', capacityGiB: 20, ownerClusterGUID: 'g' },
    ];
    expect(unclaimedFound(found, new Set(['v1']))).toEqual([found[1]]);
  });
});

describe('knownClusterGUIDs', () => {
  it("knows the clusters drive containers joined and those WekaClusters name, in either operator's field", () => {
    const known = knownClusterGUIDs(
      [{ status: { clusterGUID: 'joined' } }, { status: {} }, {}],
      [
        { status: { clusterGUID: 'ours' } },
        { status: { clusterID: 'weka-operators' } },
        { status: { clusterID: 7 } },
        {},
      ],
    );
    expect([...known].sort()).toEqual(['joined', 'ours', 'weka-operators']);
  });
});

describe('staleFingerprint', () => {
  const drive = (n: number, over: Partial<StaleVirtualDrive> = {}): StaleVirtualDrive => ({
    virtualUUID: `v${n}`,
    physicalUUID: `p${n}`,
    capacityGiB: 100 * n,
    ownerClusterGUID: 'g',
    ...over,
  });

  it('is the SHA-256 of the sorted lines, whatever order they were found in', () => {
    const a = new Map([
      ['n1', [drive(1), drive(2)]],
      ['n2', [drive(3)]],
    ]);
    const b = new Map([
      ['n2', [drive(3)]],
      ['n1', [drive(2), drive(1)]],
    ]);
    const lines = ['n1|v1|p1|g|100', 'n1|v2|p2|g|200', 'n2|v3|p3|g|300'].join('\n');
    expect(staleFingerprint(a)).toBe(createHash('sha256').update(lines).digest('hex'));
    expect(staleFingerprint(b)).toBe(staleFingerprint(a));
  });

  it('changes when a drive is added, gone, resized or on another node', () => {
    const base = staleFingerprint(new Map([['n1', [drive(1)]]]));
    for (const other of [
      new Map([['n1', [drive(1), drive(2)]]]),
      new Map([['n1', []]]),
      new Map([['n1', [drive(1, { capacityGiB: 101 })]]]),
      new Map([['n2', [drive(1)]]]),
    ])
      expect(staleFingerprint(other)).not.toBe(base);
  });

  it('hashes as node:crypto does, for any text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (text) => {
        expect(sha256Hex(text)).toBe(createHash('sha256').update(text, 'utf8').digest('hex'));
      }),
    );
  });
});
