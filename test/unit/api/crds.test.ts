import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  buildCrdFiles,
  CAPACITY_RULES,
  CLUSTER_PORTS_RULES,
  DRIVE_TYPES_RATIO_RULES,
  renderCrdYaml,
  WEKA_CONTAINER_RULES,
  WEKA_MANUAL_OPERATION_RULES,
  type CelRule,
  type CustomResourceDefinition,
  type JsonSchemaProps,
} from '../../../src/api/index.js';
import { CHART_CRD_TEMPLATE_DIR, renderChartCrdTemplate } from '../../../crds/chart-templates.js';
import { CREATE_VIOLATIONS, UPDATE_VIOLATIONS } from './rule-violations.js';

const CRD_DIR = fileURLToPath(new URL('../../../crds/', import.meta.url));
const CHART_CRD_DIR = fileURLToPath(new URL(`../../../${CHART_CRD_TEMPLATE_DIR}/`, import.meta.url));
const files = buildCrdFiles();
const crdOf = (kind: string): CustomResourceDefinition => {
  const file = files.find((f) => f.crd.spec.names.kind === kind);
  if (!file) throw new Error(`no CRD for ${kind}`);
  return file.crd;
};
const rootSchema = (kind: string): JsonSchemaProps => {
  const version = crdOf(kind).spec.versions[0];
  if (!version) throw new Error(`no version for ${kind}`);
  return version.schema.openAPIV3Schema;
};

/** The schema node at a dotted path such as `spec.dynamicTemplate`; `[]` steps into list items. */
function at(kind: string, path: string): JsonSchemaProps {
  let node = rootSchema(kind);
  for (const step of path.split('.')) {
    const next = step === '[]' ? node.items : node.properties?.[step];
    if (!next) throw new Error(`${kind}: no ${path}`);
    node = next;
  }
  return node;
}

interface Visited {
  path: string;
  node: JsonSchemaProps;
  isProperty: boolean;
}

/** Every schema node, walked independently of the builder's own checks. */
function walk(node: JsonSchemaProps, path = '', isProperty = false): Visited[] {
  const children = [
    ...Object.entries(node.properties ?? {}).map(([name, child]) => walk(child, `${path}.${name}`, true)),
    node.items ? walk(node.items, `${path}[]`) : [],
    node.additionalProperties ? walk(node.additionalProperties, `${path}{}`) : [],
  ];
  return [{ path, node, isProperty }, ...children.flat()];
}

const allRules = (kind: string): Array<{ path: string; rule: CelRule }> =>
  walk(rootSchema(kind)).flatMap(({ path, node }) =>
    (node['x-kubernetes-validations'] ?? []).map((rule) => ({ path, rule })),
  );

const KINDS = ['WekaCluster', 'WekaContainer', 'WekaManualOperation'];

describe('generated CRDs', () => {
  it('match the committed crds/*.yaml byte for byte', () => {
    for (const { fileName, crd } of files) {
      expect(readFileSync(`${CRD_DIR}${fileName}`, 'utf8'), fileName).toBe(renderCrdYaml(crd));
    }
  });

  it("match the Helm chart's templated copies in templates/crds byte for byte", () => {
    expect(readdirSync(CHART_CRD_DIR).sort()).toEqual(files.map((f) => f.fileName).sort());
    for (const { fileName, crd } of files) {
      expect(readFileSync(`${CHART_CRD_DIR}${fileName}`, 'utf8'), fileName).toBe(renderChartCrdTemplate(crd));
    }
  });

  it('are one YAML document each that parses back to the built object', () => {
    for (const { crd } of files) expect(parse(renderCrdYaml(crd))).toEqual(crd);
  });

  it.each(KINDS)('%s is namespaced in weka.weka.io/v1alpha1 with the status subresource', (kind) => {
    const crd = crdOf(kind);
    expect(crd.metadata.name).toBe(`${crd.spec.names.plural}.weka.weka.io`);
    expect(crd.spec.scope).toBe('Namespaced');
    expect(crd.spec.versions.map((v) => [v.name, v.served, v.storage, v.subresources])).toEqual([
      ['v1alpha1', true, true, { status: {} }],
    ]);
    expect(crd.spec.names.categories).toEqual(['weka']);
  });

  it('use the short names wcl, wc and wmo', () => {
    expect(KINDS.map((k) => crdOf(k).spec.names.shortNames)).toEqual([['wcl'], ['wc'], ['wmo']]);
  });

  it.each(KINDS)('%s: every node has a type and every property a description', (kind) => {
    const problems = walk(rootSchema(kind)).flatMap(({ path, node, isProperty }) => [
      ...(node.type === undefined ? [`${path}: no type`] : []),
      ...(isProperty && path !== '.metadata' && !node.description ? [`${path}: no description`] : []),
    ]);
    expect(problems).toEqual([]);
  });

  it.each(KINDS)('%s: keeps no JSON Schema keyword the apiserver rejects', (kind) => {
    const forbidden = ['$id', '$schema', 'anyOf', 'const', 'patternProperties', 'additionalProperties'];
    const found = walk(rootSchema(kind)).flatMap(({ path, node }) =>
      forbidden
        .filter((k) => k in node && !(k === 'additionalProperties' && typeof node[k] === 'object'))
        .map((k) => `${path}: ${k}`),
    );
    expect(found).toEqual([]);
  });

  it.each(KINDS)('%s: status requires nothing, so each writer can apply only its own fields', (kind) => {
    expect(at(kind, 'status').required).toBeUndefined();
    expect(rootSchema(kind).required).toEqual(['spec']);
  });

  it('key status lists for server-side apply by their identity', () => {
    const listType = (kind: string, path: string) => {
      const node = at(kind, path);
      return [node['x-kubernetes-list-type'], node['x-kubernetes-list-map-keys']];
    };
    for (const kind of KINDS) expect(listType(kind, 'status.conditions')).toEqual(['map', ['type']]);
    expect(listType('WekaContainer', 'status.allocations.virtualDrives')).toEqual(['map', ['virtualUUID']]);
    expect(listType('WekaContainer', 'status.addedVirtualDrives')).toEqual(['set', undefined]);
    expect(listType('WekaContainer', 'status.addedDrives')).toEqual(['map', ['uuid']]);
    expect(listType('WekaManualOperation', 'status.results')).toEqual(['map', ['node']]);
  });

  it('store GiB values as int64 integers', () => {
    for (const path of [
      'spec.driveCapacity',
      'spec.containerCapacity',
      'status.allocations.virtualDrives.[].capacityGiB',
    ]) {
      expect([at('WekaContainer', path).type, at('WekaContainer', path).format], path).toEqual(['integer', 'int64']);
    }
  });

  it('offer the known Weka modes as an enum, including drive and ssdproxy', () => {
    const mode = at('WekaContainer', 'spec.mode');
    expect(mode.type).toBe('string');
    expect(mode.enum).toEqual(expect.arrayContaining(['drive', 'ssdproxy', 'compute', 'client', 's3']));
  });

  it('show mode, node, cluster, phase, Ready with its reason and the time since it changed, capacity, virtual drives and age for wekacontainers', () => {
    const columns = crdOf('WekaContainer').spec.versions[0]?.additionalPrinterColumns ?? [];
    expect(columns.map((c) => [c.name, c.jsonPath])).toEqual([
      ['Mode', '.spec.mode'],
      ['Node', '.spec.nodeName'],
      ['Cluster', '.spec.cluster'],
      ['Phase', '.status.phase'],
      ['Ready', '.status.conditions[?(@.type=="Ready")].status'],
      ['Reason', '.status.conditions[?(@.type=="Ready")].reason'],
      ['Since', '.status.conditions[?(@.type=="Ready")].lastTransitionTime'],
      ['Capacity GiB', '.spec.containerCapacity'],
      ['Drive GiB', '.spec.driveCapacity'],
      ['Drives', '.spec.numDrives'],
      ['Virtual Drives', '.status.allocations.virtualDriveCount'],
      ['Age', '.metadata.creationTimestamp'],
    ]);
  });

  it('show phase, Ready with its reason and the time since it changed, drive containers, the port range as first-last, and age for wekaclusters', () => {
    const columns = crdOf('WekaCluster').spec.versions[0]?.additionalPrinterColumns ?? [];
    expect(columns.map((c) => [c.name, c.jsonPath, c.priority ?? 0])).toEqual([
      ['Phase', '.status.phase', 0],
      ['Ready', '.status.conditions[?(@.type=="Ready")].status', 0],
      ['Reason', '.status.conditions[?(@.type=="Ready")].reason', 0],
      ['Since', '.status.conditions[?(@.type=="Ready")].lastTransitionTime', 0],
      ['Drive Containers', '.spec.dynamicTemplate.driveContainers', 0],
      ['Ports', '.status.ports.range', 0],
      ['GUID', '.status.clusterGUID', 1],
      ['Age', '.metadata.creationTimestamp', 0],
    ]);
  });

  it('point every printer column at a field that exists', () => {
    for (const kind of KINDS) {
      for (const column of crdOf(kind).spec.versions[0]?.additionalPrinterColumns ?? []) {
        if (column.jsonPath.startsWith('.metadata.')) continue;
        // A filter ([?(@.type=="Ready")]) picks items of the array it follows.
        const path = column.jsonPath.slice(1).replace(/\[\?\(@\.(\w+)==".*?"\)\]/g, '.[]');
        expect(() => at(kind, path), `${kind} ${column.name}`).not.toThrow();
      }
    }
  });
});

describe('CEL rules', () => {
  const placed: Array<[string, string, CelRule]> = [
    ...Object.values(CAPACITY_RULES).flatMap((rule): Array<[string, string, CelRule]> => {
      const field = rule.rule === 'self > 0' ? `.${rule.message.split(' ')[0]}` : '';
      return [
        ['WekaContainer', `.spec${field}`, rule],
        ['WekaCluster', `.spec.dynamicTemplate${field}`, rule],
      ];
    }),
    ['WekaContainer', '.spec.driveTypesRatio.tlc', DRIVE_TYPES_RATIO_RULES.tlcNotNegative],
    ['WekaContainer', '.spec.driveTypesRatio.qlc', DRIVE_TYPES_RATIO_RULES.qlcNotNegative],
    ['WekaContainer', '.spec.driveTypesRatio', DRIVE_TYPES_RATIO_RULES.notBothZero],
    ['WekaCluster', '.spec.dynamicTemplate.driveTypesRatio', DRIVE_TYPES_RATIO_RULES.notBothZero],
    ['WekaContainer', '.spec.mode', WEKA_CONTAINER_RULES.modeImmutable],
    ['WekaContainer', '.spec', WEKA_CONTAINER_RULES.nodeNameSetOnce],
    ['WekaContainer', '.spec', WEKA_CONTAINER_RULES.clusterSetOnce],
    ['WekaCluster', '.spec.ports', CLUSTER_PORTS_RULES.rangeShare],
    ['WekaCluster', '.spec.ports', CLUSTER_PORTS_RULES.rangeEnds],
    ['WekaContainer', '.spec', WEKA_CONTAINER_RULES.containerCapacityGrowOnly],
    ['WekaContainer', '.spec', WEKA_CONTAINER_RULES.driveCapacitySetOnce],
    ['WekaContainer', '.spec', WEKA_CONTAINER_RULES.numDrivesGrowOnly],
    ['WekaContainer', '.spec', WEKA_CONTAINER_RULES.driveCoresSetOnce],
    ['WekaContainer', '.spec', WEKA_CONTAINER_RULES.driveTypesRatioSetOnce],
    ['WekaContainer', '.status.allocations', WEKA_CONTAINER_RULES.virtualDriveCountMatches],
    ['WekaManualOperation', '.spec', WEKA_MANUAL_OPERATION_RULES.signDrivesNeedsNodeSelector],
    [
      'WekaManualOperation',
      '.spec.payload.signDrivesPayload',
      WEKA_MANUAL_OPERATION_RULES.devicePathsNeededForDevicePaths,
    ],
    [
      'WekaManualOperation',
      '.spec.payload.signDrivesPayload.devicePaths[]',
      WEKA_MANUAL_OPERATION_RULES.devicePathShape,
    ],
  ];

  it.each(placed)('%s %s carries its rule', (kind, path, rule) => {
    expect(allRules(kind)).toContainEqual({
      path,
      rule: expect.objectContaining({ rule: rule.rule, message: rule.message }),
    });
  });

  it('make set-once rules tolerate a field that was unset at creation', () => {
    const rule = WEKA_CONTAINER_RULES.driveCoresSetOnce.rule;
    expect(rule).toBe('!has(oldSelf.driveCores) || (has(self.driveCores) && self.driveCores == oldSelf.driveCores)');
  });

  it('let containerCapacity and numDrives only grow, from unset or from their value', () => {
    expect(WEKA_CONTAINER_RULES.containerCapacityGrowOnly.rule).toBe(
      '!has(oldSelf.containerCapacity) || (has(self.containerCapacity) && self.containerCapacity >= oldSelf.containerCapacity)',
    );
    expect(WEKA_CONTAINER_RULES.numDrivesGrowOnly.rule).toBe(
      '!has(oldSelf.numDrives) || (has(self.numDrives) && self.numDrives >= oldSelf.numDrives)',
    );
  });

  it('say why in every capacity rule: Weka must phase the data out of a drive first', () => {
    const capacity = [
      'driveCoresSetOnce',
      'numDrivesGrowOnly',
      'driveCapacitySetOnce',
      'containerCapacityGrowOnly',
      'driveTypesRatioSetOnce',
    ] as const;
    for (const name of capacity)
      expect(WEKA_CONTAINER_RULES[name].message).toMatch(/Weka must phase the data out of a drive first/);
    expect(WEKA_CONTAINER_RULES.containerCapacityGrowOnly.message).toMatch(/^containerCapacity can only grow/);
    expect(WEKA_CONTAINER_RULES.driveTypesRatioSetOnce.message).toMatch(/raise containerCapacity or numDrives/);
  });

  it.each(KINDS)('%s: every rule in the CRD has a manifest that must be rejected with its message', (kind) => {
    const covered = new Set(
      [...CREATE_VIOLATIONS, ...UPDATE_VIOLATIONS].filter((v) => v.kind === kind).map((v) => v.rule.message),
    );
    const uncovered = allRules(kind).filter(({ rule }) => !covered.has(rule.message));
    expect(uncovered).toEqual([]);
  });

  it('bound every list and string that a rule iterates or compares, so the CEL cost estimate passes', () => {
    expect(at('WekaManualOperation', 'spec.payload.signDrivesPayload.devicePaths').maxItems).toBeGreaterThan(0);
    expect(at('WekaManualOperation', 'spec.payload.signDrivesPayload.devicePaths.[]').maxLength).toBeGreaterThan(0);
    expect(at('WekaContainer', 'spec.nodeName').maxLength).toBeGreaterThan(0);
  });
});

describe('docs/api.md', () => {
  const doc = readFileSync(fileURLToPath(new URL('../../../docs/api.md', import.meta.url)), 'utf8');

  it.each(KINDS)('lists every %s rule with its message', (kind) => {
    const missing = allRules(kind).filter(({ rule }) => !doc.includes(rule.message));
    expect(missing).toEqual([]);
  });
});
