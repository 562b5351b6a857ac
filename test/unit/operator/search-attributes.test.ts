import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { searchAttributeProblems } from '../../../src/operator/search-attributes.js';
import { SEARCH_ATTRIBUTE_KEYS } from '../../../src/protocol.js';

const ALL = SEARCH_ATTRIBUTE_KEYS.map((k) => k.name);
const keyword = (names: readonly string[]) => new Map(names.map((n) => [n, 'INDEXED_VALUE_TYPE_KEYWORD']));

describe('searchAttributeProblems', () => {
  it('finds nothing wrong when every attribute is a Keyword', () => {
    expect(searchAttributeProblems('weka', keyword(ALL))).toEqual([]);
    expect(searchAttributeProblems('weka', new Map(ALL.map((n) => [n, 'KEYWORD'])))).toEqual([]);
    expect(searchAttributeProblems('weka', new Map(ALL.map((n) => [n, 2])))).toEqual([]);
  });

  it('names the missing attributes and the command that registers them', () => {
    const [problem, ...rest] = searchAttributeProblems('weka', keyword(['WekaNode', 'WekaCluster', 'WekaContainer']));
    expect(rest).toEqual([]);
    expect(problem).toContain('lacks the search attributes WekaPhase, WekaOperation');
    expect(problem).toContain(
      'temporal operator search-attribute create --namespace weka --name WekaPhase --type Keyword --name WekaOperation --type Keyword',
    );
  });

  it('names an attribute of another type, which cannot be changed', () => {
    const registered = new Map<string, number | string>(keyword(ALL)).set('WekaPhase', 7);
    expect(searchAttributeProblems('weka', registered)).toEqual([
      expect.stringContaining('WekaPhase of type KeywordList, not Keyword'),
    ]);
  });
});

describe('the set-up the chart and the docs give', () => {
  it.each(['deploy/helm/weka-drives-operator/templates/NOTES.txt', 'docs/production.md'])(
    '%s registers every search attribute the operator needs',
    (file) => {
      const text = readFileSync(new URL(`../../../${file}`, import.meta.url), 'utf8');
      const command = /temporal operator search-attribute create(?:\\\n|[^\n])*/.exec(text)?.[0] ?? '';
      for (const name of ALL) expect(command).toContain(`--name ${name} --type Keyword`);
    },
  );
});
