// Turns TypeBox schemas into CustomResourceDefinitions (apiextensions.k8s.io/v1).
//
// TypeBox emits JSON Schema; Kubernetes accepts a structural subset of OpenAPI v3. The
// conversion rewrites the few constructs that differ (literals, unions of literals, records),
// drops what Kubernetes does not know, and refuses anything else, naming the path, so a schema
// that would not be structural fails here rather than at `kubectl apply`.
import type { TSchema } from '@sinclair/typebox';
import type { CelRule } from './schemas/common.js';

/** An OpenAPI v3 schema node as the apiserver stores it. */
export interface JsonSchemaProps {
  type?: string;
  format?: string;
  description?: string;
  properties?: Record<string, JsonSchemaProps>;
  additionalProperties?: JsonSchemaProps;
  items?: JsonSchemaProps;
  required?: string[];
  enum?: unknown[];
  'x-kubernetes-validations'?: CelRule[];
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  [keyword: string]: unknown;
}

export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description: string;
  priority?: number;
}

/** Everything needed to build one kind's CRD. */
export interface CrdSource {
  group: string;
  version: string;
  kind: string;
  plural: string;
  singular: string;
  shortNames: string[];
  categories: string[];
  description: string;
  spec: TSchema;
  status: TSchema;
  printerColumns: PrinterColumn[];
  /** Spec fields clients may filter lists by with a field selector (e.g. spec.nodeName). */
  selectableFields?: string[];
}

export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string };
  spec: {
    group: string;
    names: {
      kind: string;
      listKind: string;
      plural: string;
      singular: string;
      shortNames: string[];
      categories: string[];
    };
    scope: 'Namespaced';
    versions: Array<{
      name: string;
      served: boolean;
      storage: boolean;
      schema: { openAPIV3Schema: JsonSchemaProps };
      subresources: { status: Record<string, never> };
      additionalPrinterColumns: PrinterColumn[];
      selectableFields?: Array<{ jsonPath: string }>;
    }>;
  };
}

/** Keywords passed through unchanged: the part of OpenAPI v3 the apiserver supports and we use. */
const KEPT_KEYWORDS = new Set([
  'type',
  'format',
  'description',
  'default',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'pattern',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
  'enum',
  'required',
  'nullable',
  'x-kubernetes-validations',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-int-or-string',
  'x-kubernetes-embedded-resource',
]);
/** Keywords that carry no meaning for the apiserver. */
const DROPPED_KEYWORDS = new Set(['$id', '$schema', 'title', 'examples']);
/** TypeBox's key pattern for Type.Record(Type.String(), ...). */
const ANY_KEY_PATTERN = '^(.*)$';

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A union of literals, which TypeBox emits as anyOf of consts, becomes an OpenAPI enum. */
function literalUnionToEnum(node: Json, path: string): Json {
  const members = node['anyOf'];
  if (!Array.isArray(members) || members.length === 0 || !members.every((m) => isObject(m) && 'const' in m)) {
    throw new Error(`${path}: anyOf is only supported as a union of literals`);
  }
  const types = new Set(members.map((m) => (m as Json)['type']));
  if (types.size !== 1) throw new Error(`${path}: a union of literals must have one type`);
  const { anyOf: _anyOf, ...rest } = node;
  return { ...rest, type: [...types][0], enum: members.map((m) => (m as Json)['const']) };
}

function convert(input: Json, path: string): JsonSchemaProps {
  let node: Json = { ...input };
  if ('anyOf' in node) node = literalUnionToEnum(node, path);
  if ('const' in node) {
    const { const: value, ...rest } = node;
    node = { ...rest, enum: [value] };
  }
  const out: JsonSchemaProps = {};
  for (const [key, value] of Object.entries(node)) {
    if (DROPPED_KEYWORDS.has(key)) continue;
    if (key === 'additionalProperties' && value === false) continue; // pruning already drops unknown fields
    if (key === 'properties' && isObject(value)) {
      out.properties = Object.fromEntries(
        Object.entries(value).map(([name, child]) => [name, convert(child as Json, `${path}.${name}`)]),
      );
    } else if (key === 'items' && isObject(value)) {
      out.items = convert(value, `${path}[]`);
    } else if (key === 'additionalProperties' && isObject(value)) {
      out.additionalProperties = convert(value, `${path}{}`);
    } else if (key === 'patternProperties' && isObject(value)) {
      const patterns = Object.keys(value);
      if (patterns.length !== 1 || patterns[0] !== ANY_KEY_PATTERN) {
        throw new Error(`${path}: only Type.Record(Type.String(), ...) maps are supported`);
      }
      out.additionalProperties = convert(value[ANY_KEY_PATTERN] as Json, `${path}{}`);
    } else if (KEPT_KEYWORDS.has(key)) {
      out[key] = value;
    } else {
      throw new Error(`${path}: keyword '${key}' is not supported in a CRD schema`);
    }
  }
  return out;
}

/** The problems that would make the apiserver reject the schema or leave `kubectl explain` mute. */
export function structuralProblems(schema: JsonSchemaProps, path = ''): string[] {
  const problems: string[] = [];
  const untyped =
    schema['x-kubernetes-int-or-string'] === true || schema['x-kubernetes-preserve-unknown-fields'] === true;
  if (schema.type === undefined && !untyped) problems.push(`${path || '<root>'}: no type`);
  if (schema.type === 'array' && schema.items === undefined) problems.push(`${path}: array without items`);
  if (schema.properties !== undefined && schema.additionalProperties !== undefined) {
    problems.push(`${path}: both properties and additionalProperties`);
  }
  for (const [name, child] of Object.entries(schema.properties ?? {})) {
    const childPath = `${path}.${name}`;
    // metadata belongs to the apiserver, which forbids describing it in a CRD.
    if (childPath !== '.metadata' && !child.description) problems.push(`${childPath}: no description`);
    problems.push(...structuralProblems(child, childPath));
  }
  if (schema.items !== undefined) {
    problems.push(...structuralProblems(schema.items, `${path}[]`));
    for (const key of schema['x-kubernetes-list-map-keys'] ?? []) {
      if (!(schema.items.required ?? []).includes(key)) problems.push(`${path}: list map key '${key}' is not required`);
    }
  }
  if (schema.additionalProperties !== undefined)
    problems.push(...structuralProblems(schema.additionalProperties, `${path}{}`));
  return problems;
}

/** Converts a TypeBox schema to a structural CRD schema, or throws naming every problem. */
export function toStructuralSchema(schema: TSchema, path = ''): JsonSchemaProps {
  // A JSON round trip drops TypeBox's symbol-keyed bookkeeping ([Kind], [OptionalKind]).
  const converted = convert(JSON.parse(JSON.stringify(schema)) as Json, path);
  const problems = structuralProblems(converted, path);
  if (problems.length > 0) throw new Error(`schema is not structural:\n  ${problems.join('\n  ')}`);
  return converted;
}

export function buildCrd(source: CrdSource): CustomResourceDefinition {
  const openAPIV3Schema = toStructuralSchema({
    type: 'object',
    description: source.description,
    required: ['spec'],
    properties: {
      apiVersion: {
        type: 'string',
        description: `Versioned schema of this representation of an object; ${source.group}/${source.version}.`,
      },
      kind: { type: 'string', description: `Kind of the object; ${source.kind}.` },
      metadata: { type: 'object' },
      spec: source.spec,
      status: source.status,
    },
  } as unknown as TSchema);
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${source.plural}.${source.group}` },
    spec: {
      group: source.group,
      names: {
        kind: source.kind,
        listKind: `${source.kind}List`,
        plural: source.plural,
        singular: source.singular,
        shortNames: source.shortNames,
        categories: source.categories,
      },
      scope: 'Namespaced',
      versions: [
        {
          name: source.version,
          served: true,
          storage: true,
          schema: { openAPIV3Schema },
          subresources: { status: {} },
          additionalPrinterColumns: source.printerColumns,
          ...(source.selectableFields
            ? { selectableFields: source.selectableFields.map((jsonPath) => ({ jsonPath })) }
            : {}),
        },
      ],
    },
  };
}
