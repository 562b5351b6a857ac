// Whether a Temporal namespace has the search attributes the operator sets on its workflows. Without
// one, every start of a workflow that sets it fails; the operator says so at start instead.
import { SEARCH_ATTRIBUTE_KEYS } from '../protocol.js';

/** Temporal's IndexedValueType by number (temporal/api/enums/v1/common.proto). */
const INDEXED_VALUE_TYPES = ['UNSPECIFIED', 'TEXT', 'KEYWORD', 'INT', 'DOUBLE', 'BOOL', 'DATETIME', 'KEYWORD_LIST'];

/**
 * What is wrong with the namespace's custom search attributes (name -> type, as the server lists
 * them: an IndexedValueType number, or its name), each problem with the command that mends it;
 * empty when nothing is.
 */
export function searchAttributeProblems(namespace: string, registered: ReadonlyMap<string, number | string>): string[] {
  const problems: string[] = [];
  const missing = SEARCH_ATTRIBUTE_KEYS.filter((k) => !registered.has(k.name));
  if (missing.length > 0)
    problems.push(
      `Temporal namespace ${namespace} lacks the search attributes ${missing.map((k) => k.name).join(', ')}; register them: temporal operator search-attribute create --namespace ${namespace} ${missing.map((k) => `--name ${k.name} --type ${typeName(k.type)}`).join(' ')}`,
    );
  for (const k of SEARCH_ATTRIBUTE_KEYS) {
    const type = registered.get(k.name);
    if (type === undefined) continue;
    const bare =
      typeof type === 'number'
        ? (INDEXED_VALUE_TYPES[type] ?? `type ${type}`)
        : type.replace(/^INDEXED_VALUE_TYPE_/, '');
    if (bare !== k.type)
      problems.push(
        `Temporal namespace ${namespace} has the search attribute ${k.name} of type ${typeName(bare)}, not ${typeName(k.type)}: a search attribute's type cannot change, so use a namespace where it is ${typeName(k.type)}`,
      );
  }
  return problems;
}

/** KEYWORD -> Keyword, KEYWORD_LIST -> KeywordList, as the temporal CLI spells types. */
const typeName = (type: string): string =>
  type
    .split('_')
    .map((w) => w.charAt(0) + w.slice(1).toLowerCase())
    .join('');
