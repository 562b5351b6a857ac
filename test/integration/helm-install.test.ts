// The chart installed with the real helm: `helm install` creates the CRDs (from templates/crds/)
// and roles for people that the built-in ones aggregate; `helm upgrade` with a changed
// CRD changes it in the apiserver (Helm never upgrades a chart's crds/ directory, which is why the
// CRDs are templates); `helm uninstall` leaves the CRDs (helm.sh/resource-policy: keep); and CRDs
// that another release (or an earlier chart's crds/) left behind are taken over once annotated as
// docs/production.md says.
//
// On a control plane of its own, without the project's CRDs: on the shared one, the CRDs already
// exist (installed by the global setup, without Helm's ownership labels, so helm would refuse
// them) and other test files depend on them staying exactly as they are; and the chart's
// cluster-wide objects (the image admission policy, the aggregated roles) would change what every
// other test file may do. The operator's pods need not run (there are no nodes); the objects are
// the point.
//
// helm installs a copy of the chart without its kubeVersion requirement: the locally built
// kube-apiserver reports its version as v0.0.0-master (it is built without the release's version
// stamp), which the requirement (>= 1.31, checked in test/unit/helm/deployment.test.ts) refuses.
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ApiextensionsV1Api,
  AppsV1Api,
  PatchStrategy,
  RbacAuthorizationV1Api,
  setHeaderOptions,
  type V1ClusterRole,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ControlPlane } from '../../deploy/local/control-plane.js';
import { buildCrdFiles } from '../../src/api/index.js';
import { eventually } from '../support/async.js';
import { CHART_DIR, HELM_BUILD_TIMEOUT_MS, helmBinary, runHelm } from '../support/helm-chart.js';

// A name holding the chart's, so that the objects are named after the release alone.
const RELEASE = 'weka-drives-operator';
const NAMESPACE = 'weka-drives-system';
const CRD_NAMES = buildCrdFiles().map((f) => f.crd.metadata.name);
const CLUSTERS_CRD = 'wekaclusters.weka.weka.io';
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

let controlPlane: ControlPlane;
let extensions: ApiextensionsV1Api;
let scratch: string;
/** The chart as installed: a copy without its kubeVersion requirement. */
let chart: string;

const helm = (...args: string[]) => runHelm(args, { kubeconfigPath: controlPlane.kubeconfigPath });
const readCrd = (name: string) => extensions.readCustomResourceDefinition({ name });
const printerColumns = (crd: V1CustomResourceDefinition) =>
  (crd.spec.versions[0]?.additionalPrinterColumns ?? []).map((c) => c.name);

beforeAll(async () => {
  await helmBinary();
  controlPlane = await ControlPlane.start({ installCrds: false, log: (m) => console.log(`[helm] ${m}`) });
  extensions = controlPlane.kubeConfig().makeApiClient(ApiextensionsV1Api);
  scratch = await mkdtemp(join(tmpdir(), 'weka-chart-'));
  chart = await copyChart(CHART_DIR, 'chart');
}, HELM_BUILD_TIMEOUT_MS);

/** A copy of `from` under the scratch directory, without the kubeVersion requirement. */
async function copyChart(from: string, name: string): Promise<string> {
  const to = join(scratch, name);
  await cp(from, to, { recursive: true });
  const chartYaml = join(to, 'Chart.yaml');
  const manifest = await readFile(chartYaml, 'utf8');
  await writeFile(chartYaml, manifest.replace(/^kubeVersion: .*\n/m, ''));
  return to;
}

afterAll(async () => {
  await controlPlane?.stop();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe('the chart installed with helm', () => {
  it('creates the CRDs, annotated to be kept, and the operator', async () => {
    await helm('install', RELEASE, chart, '--namespace', NAMESPACE, '--create-namespace');
    for (const name of CRD_NAMES) {
      const crd = await eventually(`CRD ${name} to be Established`, async () => {
        const c = await readCrd(name);
        return c.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True') ? c : undefined;
      });
      expect(crd.metadata?.annotations).toMatchObject({
        'helm.sh/resource-policy': 'keep',
        'meta.helm.sh/release-name': RELEASE,
        'meta.helm.sh/release-namespace': NAMESPACE,
      });
    }
    const apps = controlPlane.kubeConfig().makeApiClient(AppsV1Api);
    const deployment = await apps.readNamespacedDeployment({ name: RELEASE, namespace: NAMESPACE });
    expect(deployment.spec?.replicas).toBe(2);
  });

  // The local controller manager runs no clusterrole-aggregation controller (deploy/local/kube-controllers.ts),
  // so this reads the selectors that controller would follow, from the apiserver's own built-in roles.
  it("is selected by the built-in view, edit and admin roles' aggregation rules", async () => {
    const rbac = controlPlane.kubeConfig().makeApiClient(RbacAuthorizationV1Api);
    const role = (name: string) => rbac.readClusterRole({ name });
    /** Whether `aggregator`'s aggregation rule selects `target` by its labels. */
    const selects = (aggregator: V1ClusterRole, target: V1ClusterRole) =>
      (aggregator.aggregationRule?.clusterRoleSelectors ?? []).some(
        (selector) =>
          selector.matchLabels !== undefined &&
          Object.entries(selector.matchLabels).every(([k, v]) => target.metadata?.labels?.[k] === v),
      );
    const [view, edit, admin] = await Promise.all(['view', 'edit', 'admin'].map(role));
    const [forViewers, forEditors] = await Promise.all([role(`${RELEASE}-view`), role(`${RELEASE}-edit`)]);
    expect(forViewers.rules?.[0]?.verbs).toEqual(['get', 'list', 'watch']);
    expect([selects(view!, forViewers), selects(view!, forEditors)]).toEqual([true, false]);
    expect([selects(edit!, forEditors), selects(admin!, forEditors)]).toEqual([true, true]);
    // Editors and admins read through the built-in view role, which is aggregated into edit, and edit into admin.
    expect([selects(edit!, view!), selects(admin!, edit!)]).toEqual([true, true]);
  });

  it('updates a CRD on helm upgrade', async () => {
    const changed = await copyChart(chart, 'changed');
    const fileName = buildCrdFiles().find((f) => f.crd.metadata.name === CLUSTERS_CRD)!.fileName;
    const file = join(changed, 'templates', 'crds', fileName);
    const template = await readFile(file, 'utf8');
    const columns = '    - additionalPrinterColumns:\n';
    expect(template).toContain(columns);
    const added = `${columns}        - description: Added by the upgrade.\n          jsonPath: .spec.image\n          name: Upgraded\n          type: string\n`;
    await writeFile(file, template.replace(columns, added));
    expect(printerColumns(await readCrd(CLUSTERS_CRD))).not.toContain('Upgraded');

    await helm('upgrade', RELEASE, changed, '--namespace', NAMESPACE);
    expect(printerColumns(await readCrd(CLUSTERS_CRD))).toEqual(expect.arrayContaining(['Upgraded', 'Phase']));
  });

  it('leaves the CRDs in place on helm uninstall, and removes the rest', async () => {
    await helm('uninstall', RELEASE, '--namespace', NAMESPACE, '--wait');
    const apps = controlPlane.kubeConfig().makeApiClient(AppsV1Api);
    await expect(apps.readNamespacedDeployment({ name: RELEASE, namespace: NAMESPACE })).rejects.toMatchObject({
      code: 404,
    });
    for (const name of CRD_NAMES) expect((await readCrd(name)).metadata?.deletionTimestamp).toBeUndefined();
  });

  it('refuses CRDs another release owns, and takes them over once annotated for this release', async () => {
    const other = 'weka-drives-operator-blue';
    await expect(helm('install', other, chart, '--namespace', NAMESPACE)).rejects.toThrow(
      /exists and cannot be imported into the current release: invalid ownership metadata/,
    );
    // As docs/production.md says for CRDs a release did not create.
    for (const name of CRD_NAMES) {
      await extensions.patchCustomResourceDefinition(
        {
          name,
          body: {
            metadata: {
              labels: { 'app.kubernetes.io/managed-by': 'Helm' },
              annotations: { 'meta.helm.sh/release-name': other, 'meta.helm.sh/release-namespace': NAMESPACE },
            },
          },
        },
        mergePatch,
      );
    }
    await helm('install', other, chart, '--namespace', NAMESPACE);
    const crd = await readCrd(CLUSTERS_CRD);
    expect(crd.metadata?.labels?.['app.kubernetes.io/instance']).toBe(other);
    // The chart's CRD again, without the column the upgrade above added.
    expect(printerColumns(crd)).not.toContain('Upgraded');
  });
});
