// The chart's admission policies say exactly what the operator's code does: the container and the
// commands it execs (src/weka), the Node annotation and resources it writes, the service account
// it runs as; the image policy uses the operator's own image rule (src/manifests/image-policy.ts).
// How the apiserver applies them is tried in test/integration/admission-policies.test.ts.
import { beforeAll, describe, expect, it } from 'vitest';
import {
  EXCLUSIVE_DRIVES_ANNOTATION,
  WITHHELD_DRIVES_ANNOTATION,
  EXCLUSIVE_DRIVES_RESOURCE,
  SHARED_DRIVES_ANNOTATION,
} from '../../../src/annotations/index.js';
import { listBlockDevicesCall } from '../../../src/weka/index.js';
import { wrappedArgv } from '../../../activities/exec/kube-exec.js';
import { ALLOCATIONS_ANNOTATION } from '../../../src/node/allocation-ledger.js';
import { AFTER_PREFIX, AFTER_REPOSITORY } from '../../../src/manifests/image-policy.js';
import { SHARED_DRIVES_CAPACITY_QLC, SHARED_DRIVES_CAPACITY_TLC, WEKA_POD_CONTAINER } from '../../../src/api/names.js';
import { parseOperatorConfig } from '../../../src/operator/config.js';
import { operatorCommands } from '../../support/weka-commands.js';
import {
  admissionPolicies,
  admissionPolicy,
  HELM_BUILD_TIMEOUT_MS,
  helmBinary,
  onlyOne,
  renderChart,
  serviceAccountUsername,
  type Manifest,
} from '../../support/helm-chart.js';

interface Policy {
  spec: {
    failurePolicy: string;
    matchConstraints: { resourceRules: Array<{ apiGroups: string[]; operations: string[]; resources: string[] }> };
    matchConditions?: Array<{ name: string; expression: string }>;
    variables: Array<{ name: string; expression: string }>;
    validations: Array<{ expression: string; message?: string; messageExpression?: string }>;
  };
}
interface Binding {
  spec: { policyName: string; validationActions: string[]; matchResources?: unknown };
}

const policyOf = (manifests: Manifest[], suffix: string) =>
  admissionPolicy(manifests, suffix).policy as unknown as Policy & Manifest;
const bindingOf = (manifests: Manifest[], suffix: string) =>
  admissionPolicy(manifests, suffix).binding as unknown as Binding & Manifest;

/** A variable's expression read as the JSON literal the chart renders it as. */
function literal(policy: Policy, name: string): unknown {
  const v = policy.spec.variables.find((x) => x.name === name);
  if (!v) throw new Error(`no variable ${name}`);
  return JSON.parse(v.expression);
}

function envOf(manifests: Manifest[]): Record<string, string> {
  const d = onlyOne(manifests, 'Deployment') as unknown as {
    spec: { template: { spec: { containers: Array<{ env: Array<{ name: string; value?: string }> }> } } };
  };
  return Object.fromEntries(d.spec.template.spec.containers[0]!.env.map((e) => [e.name, e.value ?? '']));
}

const UUID = '4f1c2d3e-0000-4000-8000-00000000000a';
/** One call of each kind the operator makes (src/weka), as argv. */
const OPERATOR_ARGV = operatorCommands({
  device: '/dev/nvme0n1',
  uuid: UUID,
  guid: UUID,
  containerId: 1,
  sizeGiB: 1,
});

let manifests: Manifest[];
beforeAll(async () => {
  await helmBinary();
  manifests = await renderChart({ release: 'weka', namespace: 'weka-system' });
}, HELM_BUILD_TIMEOUT_MS);

describe("the chart's admission policies", () => {
  it('are three policies, each with a binding that denies, on by default', () => {
    const policies = admissionPolicies(manifests);
    expect(policies.map((m) => `${m.kind} ${m.metadata.name}`).sort()).toEqual(
      ['exec', 'images', 'node-writes']
        .flatMap((s) => [
          `ValidatingAdmissionPolicy weka-weka-drives-operator-${s}`,
          `ValidatingAdmissionPolicyBinding weka-weka-drives-operator-${s}`,
        ])
        .sort(),
    );
    for (const suffix of ['exec', 'images', 'node-writes']) {
      const policy = policyOf(manifests, suffix);
      expect(policy.apiVersion).toBe('admissionregistration.k8s.io/v1');
      expect(policy.spec.failurePolicy).toBe('Fail');
      expect(bindingOf(manifests, suffix).spec).toEqual({
        policyName: policy.metadata.name,
        validationActions: ['Deny'],
      });
    }
  });

  it('are left out with admissionPolicies.enabled=false, and the operator still gets the image list', async () => {
    const off = await renderChart({ values: { admissionPolicies: { enabled: false } } });
    expect(admissionPolicies(off)).toEqual([]);
    expect(envOf(off).WEKA_ALLOWED_IMAGES).toBe('quay.io/weka.io/weka-in-container');
  });

  it('take the validation actions from the values, to try them out with Warn and Audit first', async () => {
    const warn = await renderChart({ values: { admissionPolicies: { validationActions: ['Warn', 'Audit'] } } });
    expect(bindingOf(warn, 'exec').spec.validationActions).toEqual(['Warn', 'Audit']);
  });

  it("match only the operator's service account for exec and node writes, and everyone for images", async () => {
    const renamed = await renderChart({
      release: 'blue',
      namespace: 'weka-drives-system',
      values: { serviceAccount: { name: 'weka-op' } },
    });
    expect(serviceAccountUsername(renamed)).toBe('system:serviceaccount:weka-drives-system:weka-op');
    for (const suffix of ['exec', 'node-writes']) {
      expect(policyOf(renamed, suffix).spec.matchConditions).toEqual([
        {
          name: 'operator-service-account',
          expression: 'request.userInfo.username == "system:serviceaccount:weka-drives-system:weka-op"',
        },
      ]);
    }
    expect(policyOf(renamed, 'images').spec.matchConditions).toBeUndefined();
    for (const suffix of ['exec', 'images', 'node-writes'])
      expect(bindingOf(renamed, suffix).spec.matchResources).toBeUndefined();
  });
});

describe('the exec policy', () => {
  it('applies to CONNECT on pods/exec', () => {
    expect(policyOf(manifests, 'exec').spec.matchConstraints.resourceRules).toEqual([
      { apiGroups: [''], apiVersions: ['v1'], operations: ['CONNECT'], resources: ['pods/exec'] },
    ]);
  });

  it('allows the container the operator execs in', () => {
    expect(literal(policyOf(manifests, 'exec'), 'container')).toBe(WEKA_POD_CONTAINER);
  });

  it('allows every command the operator runs, and no executable or first argument it does not', () => {
    const commands = literal(policyOf(manifests, 'exec'), 'commands') as Record<string, string[]>;
    for (const argv of OPERATOR_ARGV) expect(commands[argv[0]!] ?? [], argv.join(' ')).toContain(argv[1]);
    const used = new Set(OPERATOR_ARGV.map((argv) => `${argv[0]} ${argv[1]}`));
    const allowed = Object.entries(commands).flatMap(([exe, args]) => args.map((a) => `${exe} ${a}`));
    expect(allowed.filter((c) => !used.has(c))).toEqual([]);
  });

  it('expects every command under the exact wrapper the operator runs it in', () => {
    expect(literal(policyOf(manifests, 'exec'), 'wrapper')).toEqual(wrappedArgv([]));
  });

  it('lets nsenter run exactly the host lsblk the operator runs, and nothing else', () => {
    const policy = policyOf(manifests, 'exec');
    expect(literal(policy, 'hostBlockDevices')).toEqual(listBlockDevicesCall().argv);
    expect(policy.spec.validations.map((v) => v.expression)).toContain(
      "!variables.wrapped || variables.command[4] != 'nsenter' || variables.command == variables.wrapper + variables.hostBlockDevices",
    );
  });
});

describe('the node policy', () => {
  it('applies to updates of nodes and their status', () => {
    expect(policyOf(manifests, 'node-writes').spec.matchConstraints.resourceRules).toEqual([
      { apiGroups: [''], apiVersions: ['v1'], operations: ['UPDATE'], resources: ['nodes', 'nodes/status'] },
    ]);
  });

  it('lets the operator change only its own annotation and extended resources', () => {
    const policy = policyOf(manifests, 'node-writes');
    expect(literal(policy, 'ownedAnnotations')).toEqual([
      SHARED_DRIVES_ANNOTATION,
      ALLOCATIONS_ANNOTATION,
      EXCLUSIVE_DRIVES_ANNOTATION,
      WITHHELD_DRIVES_ANNOTATION,
    ]);
    expect(literal(policy, 'ownedResources')).toEqual([
      SHARED_DRIVES_CAPACITY_TLC,
      SHARED_DRIVES_CAPACITY_QLC,
      EXCLUSIVE_DRIVES_RESOURCE,
    ]);
    const rules = policy.spec.validations.map((v) => v.expression).join('\n');
    for (const part of [
      'labels',
      'finalizers',
      'ownerReferences',
      'taints',
      'spec',
      'changedStatus',
      'changedResources',
    ])
      expect(rules).toContain(part);
  });
});

describe('the image policy', () => {
  it('applies to WekaContainer and WekaCluster create and update', () => {
    expect(policyOf(manifests, 'images').spec.matchConstraints.resourceRules).toEqual([
      {
        apiGroups: ['weka.weka.io'],
        apiVersions: ['*'],
        operations: ['CREATE', 'UPDATE'],
        resources: ['wekacontainers', 'wekaclusters'],
      },
    ]);
  });

  it("uses the operator's own rule: the same regular expressions as src/manifests/image-policy.ts", () => {
    const rule = policyOf(manifests, 'images').spec.validations[0]!.expression;
    expect(rule).toContain(JSON.stringify(AFTER_PREFIX));
    expect(rule).toContain(JSON.stringify(AFTER_REPOSITORY));
  });

  it('allows the Weka repository by default, the same list the operator gets', () => {
    expect(literal(policyOf(manifests, 'images'), 'allowedImages')).toEqual(['quay.io/weka.io/weka-in-container']);
    const config = parseOperatorConfig(envOf(manifests));
    expect(config.ok && config.config.allowedImages).toEqual(['quay.io/weka.io/weka-in-container']);
  });

  it('takes allowedImages from the values, for the policy and the operator alike', async () => {
    const allowed = ['registry.example.com/weka/', 'quay.io/weka.io/weka-in-container'];
    const custom = await renderChart({ values: { allowedImages: allowed } });
    expect(literal(policyOf(custom, 'images'), 'allowedImages')).toEqual(allowed);
    const config = parseOperatorConfig(envOf(custom));
    expect(config.ok && config.config.allowedImages).toEqual(allowed);
  });

  it('refuses to render a proxyImage outside allowedImages, an entry with a tag, or an empty list', async () => {
    await expect(renderChart({ values: { proxyImage: 'quay.io/weka.io/weka-in-container-evil:1' } })).rejects.toThrow(
      /proxyImage "quay.io\/weka.io\/weka-in-container-evil:1" is not allowed by allowedImages/,
    );
    await expect(renderChart({ values: { allowedImages: ['quay.io/weka.io/weka-in-container:4.4'] } })).rejects.toThrow(
      /is not a repository without tag or digest/,
    );
    await expect(renderChart({ values: { allowedImages: [] } })).rejects.toThrow(/must list at least one/);
    // The proxy image passes a prefix entry too.
    await renderChart({
      values: {
        allowedImages: ['registry.example.com/'],
        proxyImage: 'registry.example.com/weka/weka-in-container:4.4',
      },
    });
  });
});
