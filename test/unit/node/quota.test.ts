import { describe, expect, it } from 'vitest';
import { quotaExcess, quotaExcessMessage } from '../../../src/node/quota.js';

const TLC = 'weka.io/shared-drives-capacity';
const QLC = 'weka.io/shared-drives-capacity-qlc';
const quota = (name: string, hard: Record<string, string>) => ({ name, hard });

describe('a namespace quota counted by what its containers hold', () => {
  it.each([
    ['no quota', [], [{ [TLC]: '900' }], { [TLC]: '500' }, undefined],
    ['a quota on another resource', [quota('q', { [`requests.${QLC}`]: '100' })], [], { [TLC]: '500' }, undefined],
    [
      'exactly at the limit',
      [quota('q', { [`requests.${TLC}`]: '1000' })],
      [{ [TLC]: '500' }],
      { [TLC]: '500' },
      undefined,
    ],
    [
      'one GiB past the limit',
      [quota('q', { [`requests.${TLC}`]: '1000' })],
      [{ [TLC]: '500' }],
      { [TLC]: '501' },
      { quota: 'q', resource: `requests.${TLC}`, hard: 1000, held: 500, wants: 501 },
    ],
    [
      'the tighter of two quotas',
      [quota('loose', { [`requests.${TLC}`]: '5000' }), quota('tight', { [`requests.${TLC}`]: '1Ki' })],
      [{ [TLC]: '600' }, { [QLC]: '4000' }],
      { [TLC]: '500' },
      { quota: 'tight', resource: `requests.${TLC}`, hard: 1024, held: 600, wants: 500 },
    ],
    [
      'whole drives',
      [quota('q', { 'requests.weka.io/drives': '2' })],
      [{ 'weka.io/drives': '1' }],
      { 'weka.io/drives': '2' },
      { quota: 'q', resource: 'requests.weka.io/drives', hard: 2, held: 1, wants: 2 },
    ],
  ])('%s', (_, quotas, others, wants, expected) => {
    expect(quotaExcess(quotas, others, wants)).toEqual(expected);
  });

  it("says it in the apiserver's words, which the Allocated condition's reason is read from", () => {
    const message = quotaExcessMessage({ quota: 'q', resource: `requests.${TLC}`, hard: 1200, held: 500, wants: 1000 });
    expect(message).toMatch(
      /^exceeded quota: q, requested: requests\.weka\.io\/shared-drives-capacity=1000, used: .*=500, limited: .*=1200/,
    );
  });
});
