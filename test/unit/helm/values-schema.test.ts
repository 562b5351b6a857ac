// values.schema.json: helm checks every value against it before rendering, so a mistyped key or a
// value of the wrong kind fails `helm install` with a message naming it, instead of being ignored.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  CHART_DIR,
  HELM_BUILD_TIMEOUT_MS,
  helmBinary,
  kubeVersion,
  renderChart,
  runHelm,
} from '../../support/helm-chart.js';

interface SchemaNode {
  type?: string | string[];
  properties?: Record<string, SchemaNode>;
  additionalProperties?: boolean | SchemaNode;
  items?: SchemaNode;
}

const schema = JSON.parse(readFileSync(`${CHART_DIR}/values.schema.json`, 'utf8')) as SchemaNode;
const values = parse(readFileSync(`${CHART_DIR}/values.yaml`, 'utf8')) as Record<string, unknown>;

/**
 * Every path of values.yaml that the schema does not describe. Below a node the schema leaves
 * open (a Kubernetes object such as resources), nothing more is checked.
 */
function undescribed(value: unknown, node: SchemaNode | undefined, path: string): string[] {
  if (!node) return [path];
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [];
  if (!node.properties) return [];
  return Object.entries(value).flatMap(([key, child]) =>
    undescribed(child, node.properties?.[key], path ? `${path}.${key}` : key),
  );
}

beforeAll(() => helmBinary(), HELM_BUILD_TIMEOUT_MS);

describe("the chart's values schema", () => {
  it('describes every value in values.yaml', () => {
    expect(undescribed(values, schema, '')).toEqual([]);
  });

  it("refuses unknown top-level keys, and unknown keys in the chart's own groups", () => {
    expect(schema.additionalProperties).toBe(false);
    const open = Object.entries(schema.properties ?? {})
      .filter(([, node]) => node.properties && node.additionalProperties !== false)
      .map(([key]) => key);
    expect(open).toEqual([]);
  });

  it('accepts the default values', async () => {
    expect((await renderChart()).map((m) => m.kind)).toContain('Deployment');
  });

  it('refuses `--set replicas=many`, naming the value', async () => {
    const args = ['template', 'weka', CHART_DIR, '--kube-version', kubeVersion(), '--set', 'replicas=many'];
    await expect(runHelm(args)).rejects.toThrow(/at '\/replicas': got string, want integer/);
  });

  it.each([
    ['a mistyped top-level key', { replica: 3 }, /additional properties 'replica' not allowed/],
    [
      'a mistyped nested key',
      { temporal: { tls: { enable: true } } },
      /at '\/temporal\/tls': additional properties 'enable'/,
    ],
    [
      'a log level the operator does not know',
      { logLevel: 'verbose' },
      /at '\/logLevel': value must be one of 'fatal'/,
    ],
    ['negative replicas', { replicas: -1 }, /at '\/replicas': minimum: got -1, want 0/],
    ['a port above 65535', { http: { port: 70000 } }, /at '\/http\/port': maximum: got 70,000, want 65,535/],
    [
      'an unknown pull policy',
      { image: { pullPolicy: 'Sometimes' } },
      /at '\/image\/pullPolicy': value must be one of/,
    ],
    [
      'a drive types ratio of 0:0',
      { settings: { driveTypesRatio: { tlc: 0, qlc: 0 } } },
      /at '\/settings\/driveTypesRatio'/,
    ],
    [
      'a scrape interval Prometheus cannot read',
      { metrics: { serviceMonitor: { interval: '30 seconds' } } },
      /at '\/metrics\/serviceMonitor\/interval'/,
    ],
    [
      'a PodDisruptionBudget that allows no eviction',
      { podDisruptionBudget: { maxUnavailable: 0 } },
      /at '\/podDisruptionBudget\/maxUnavailable'/,
    ],
    [
      'an unknown admission action',
      { admissionPolicies: { validationActions: ['Block'] } },
      /at '\/admissionPolicies\/validationActions\/0'/,
    ],
    [
      'a spread constraint with an unknown whenUnsatisfiable',
      { topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'x', whenUnsatisfiable: 'Maybe' }] },
      /at '\/topologySpreadConstraints\/0\/whenUnsatisfiable'/,
    ],
  ])('refuses %s', async (_name, bad, message) => {
    await expect(renderChart({ values: bad })).rejects.toThrow(message);
  });
});
