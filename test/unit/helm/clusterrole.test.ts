// The chart's ClusterRole is exactly the set of permissions the operator's code needs: adding
// one must be a deliberate change here, in the chart's README table, and in the code that uses it.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  CHART_DIR,
  HELM_BUILD_TIMEOUT_MS,
  helmBinary,
  onlyOne,
  operatorClusterRole,
  renderChart,
  type Manifest,
} from '../../support/helm-chart.js';

interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

/** "group/resource" (core group: just "resource") → verbs, sorted. */
const EXPECTED: Record<string, string[]> = {
  'weka.weka.io/wekacontainers': ['create', 'delete', 'get', 'list', 'patch', 'watch'],
  'weka.weka.io/wekaclusters': ['get', 'list', 'patch', 'watch'],
  'weka.weka.io/wekamanualoperations': ['get', 'list', 'patch', 'watch'],
  'weka.weka.io/wekacontainers/status': ['patch'],
  'weka.weka.io/wekaclusters/status': ['patch'],
  'weka.weka.io/wekamanualoperations/status': ['patch'],
  pods: ['create', 'delete', 'get', 'list', 'watch'],
  'pods/exec': ['create', 'get'],
  nodes: ['get', 'list', 'patch', 'watch'],
  'nodes/status': ['patch'],
  events: ['create'],
  resourcequotas: ['list'],
  'storage.k8s.io/storageclasses': ['get'],
  'policy/poddisruptionbudgets': ['create', 'delete', 'get', 'patch'],
};

/** What the chart's Role grants, in the operator's namespace only. */
const EXPECTED_IN_NAMESPACE: Record<string, string[]> = {
  persistentvolumeclaims: ['create', 'delete', 'get', 'list', 'patch'],
};

/** Every (group, resource) a rule grants, with its verbs merged across rules. */
function grants(rules: PolicyRule[]): Record<string, string[]> {
  const out: Record<string, Set<string>> = {};
  for (const rule of rules) {
    for (const group of rule.apiGroups ?? []) {
      for (const resource of rule.resources ?? []) {
        const key = group === '' ? resource : `${group}/${resource}`;
        for (const verb of rule.verbs) (out[key] ??= new Set()).add(verb);
      }
    }
  }
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, [...v].sort()]));
}

let manifests: Manifest[];
beforeAll(async () => {
  await helmBinary();
  manifests = await renderChart({ release: 'weka', namespace: 'weka-system' });
}, HELM_BUILD_TIMEOUT_MS);

const rulesOf = (m: Manifest) => (m as unknown as { rules: PolicyRule[] }).rules;

describe("the chart's ClusterRole", () => {
  it('grants exactly the permissions the operator uses', () => {
    expect(grants(rulesOf(operatorClusterRole(manifests)))).toEqual(EXPECTED);
  });

  it('has no wildcard, no resourceNames and no non-resource URLs', () => {
    for (const rule of rulesOf(operatorClusterRole(manifests))) {
      expect([...(rule.apiGroups ?? []), ...(rule.resources ?? []), ...rule.verbs]).not.toContain('*');
      expect(rule.resourceNames).toBeUndefined();
      expect(rule.nonResourceURLs).toBeUndefined();
    }
  });

  it("is bound to the chart's ServiceAccount, which the Deployment runs as", () => {
    const role = operatorClusterRole(manifests);
    const binding = onlyOne(manifests, 'ClusterRoleBinding') as unknown as {
      roleRef: { kind: string; name: string };
      subjects: Array<{ kind: string; name: string; namespace: string }>;
    };
    const account = onlyOne(manifests, 'ServiceAccount');
    const deployment = onlyOne(manifests, 'Deployment') as unknown as {
      spec: { template: { spec: { serviceAccountName: string } } };
    };
    expect(binding.roleRef).toEqual({
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: role.metadata.name,
    });
    expect(binding.subjects).toEqual([
      { kind: 'ServiceAccount', name: account.metadata.name, namespace: 'weka-system' },
    ]);
    expect(account.metadata.namespace).toBe('weka-system');
    expect(deployment.spec.template.spec.serviceAccountName).toBe(account.metadata.name);
  });

  it("grants managing claims only in the operator's namespace, through a Role", () => {
    const role = onlyOne(manifests, 'Role');
    const binding = onlyOne(manifests, 'RoleBinding') as unknown as {
      metadata: { namespace: string };
      roleRef: { kind: string; name: string };
      subjects: Array<{ kind: string; name: string; namespace: string }>;
    };
    expect(grants(rulesOf(role))).toEqual(EXPECTED_IN_NAMESPACE);
    expect(role.metadata.namespace).toBe('weka-system');
    expect(binding.metadata.namespace).toBe('weka-system');
    expect(binding.roleRef).toMatchObject({ kind: 'Role', name: role.metadata.name });
    expect(binding.subjects).toEqual([
      { kind: 'ServiceAccount', name: onlyOne(manifests, 'ServiceAccount').metadata.name, namespace: 'weka-system' },
    ]);
  });

  it('is left out with rbac.create=false, and the roles for people stay', async () => {
    const rendered = await renderChart({ values: { rbac: { create: false } } });
    const kinds = rendered.map((m) => m.kind);
    expect(kinds).not.toContain('ClusterRoleBinding');
    expect(kinds).not.toContain('Role');
    expect(kinds).toContain('Deployment');
    expect(rendered.filter((m) => m.kind === 'ClusterRole').map((m) => m.metadata.name)).toEqual([
      'weka-weka-drives-operator-view',
      'weka-weka-drives-operator-edit',
      'weka-weka-drives-operator-storage-admin',
    ]);
  });
});

/** The kinds the operator serves (src/api), as their plural resources. */
const OPERATOR_RESOURCES = ['wekaclusters', 'wekacontainers', 'wekamanualoperations'];
const AGGREGATE = 'rbac.authorization.k8s.io/aggregate-to-';

describe("the chart's ClusterRoles for people", () => {
  const named = (suffix: string) => {
    const role = manifests.find(
      (m) => m.kind === 'ClusterRole' && m.metadata.name === `weka-weka-drives-operator-${suffix}`,
    );
    if (!role) throw new Error(`no ClusterRole weka-weka-drives-operator-${suffix}`);
    return role;
  };
  const aggregatedInto = (role: Manifest) =>
    Object.entries(role.metadata.labels ?? {})
      .filter(([key, value]) => key.startsWith(AGGREGATE) && value === 'true')
      .map(([key]) => key.slice(AGGREGATE.length))
      .sort();

  it('let the built-in view role get, list and watch every kind the operator serves', () => {
    const view = named('view');
    expect(aggregatedInto(view)).toEqual(['view']);
    expect(grants(rulesOf(view))).toEqual(
      Object.fromEntries(OPERATOR_RESOURCES.map((r) => [`weka.weka.io/${r}`, ['get', 'list', 'watch']])),
    );
  });

  it('let the built-in edit and admin roles create, update, patch and delete containers and clusters, but not their status', () => {
    const edit = named('edit');
    expect(aggregatedInto(edit)).toEqual(['admin', 'edit']);
    expect(grants(rulesOf(edit))).toEqual(
      Object.fromEntries(
        ['wekaclusters', 'wekacontainers'].map((r) => [`weka.weka.io/${r}`, ['create', 'delete', 'patch', 'update']]),
      ),
    );
  });

  it('keep node-wide, destructive operations (WekaManualOperation: sign-drives erases devices) for storage administrators, aggregated into nothing', () => {
    const admin = named('storage-admin');
    expect(aggregatedInto(admin)).toEqual([]);
    expect(grants(rulesOf(admin))).toEqual({
      'weka.weka.io/wekamanualoperations': ['create', 'delete', 'patch', 'update'],
    });
  });

  it('cover every CRD the chart installs', () => {
    const crds = manifests
      .filter((m) => m.kind === 'CustomResourceDefinition')
      .map((m) => (m as unknown as { spec: { group: string; names: { plural: string } } }).spec);
    expect(crds.map((c) => `${c.group}/${c.names.plural}`).sort()).toEqual(
      Object.keys(grants(rulesOf(named('view')))).sort(),
    );
  });

  it('are left out with rbac.aggregatedRoles=false', async () => {
    const rendered = await renderChart({ values: { rbac: { aggregatedRoles: false } } });
    expect(rendered.filter((m) => m.kind === 'ClusterRole').map((m) => m.metadata.name)).toEqual([
      'weka-weka-drives-operator',
    ]);
  });
});

/** Rows of the table in a document's "## RBAC" section: | `group` | `resource` | `verb`, `verb` | why | */
function rbacTable(path: string): Record<string, string[]> {
  const section =
    readFileSync(path, 'utf8')
      .split(/^## /m)
      .find((s) => s.startsWith('RBAC\n')) ?? '';
  const out: Record<string, string[]> = {};
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const [, group, resource, verbs] = cells;
    if (cells.length < 6 || !resource?.startsWith('`') || !verbs?.startsWith('`')) continue;
    const g = group!.replaceAll('`', '').replaceAll('"', '');
    const r = resource.replaceAll('`', '');
    out[g === '' ? r : `${g}/${r}`] = verbs
      .split(',')
      .map((v) => v.replaceAll('`', '').trim())
      .sort();
  }
  return out;
}

describe('the RBAC tables', () => {
  it.each([
    ["the chart's README", `${CHART_DIR}/README.md`],
    ['docs/production.md', fileURLToPath(new URL('../../../docs/production.md', import.meta.url))],
  ])('in %s list every rule of the ClusterRole with its verbs', (_name, path) => {
    expect(rbacTable(path)).toEqual(EXPECTED);
  });
});
