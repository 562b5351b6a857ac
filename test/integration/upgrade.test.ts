// The upgrade from the previous release to this code, and the way back, with workflows in flight.
// The previous release (deploy/releases.json) is built from its commit as its image builds it and
// runs as the operator, with its chart's CRDs and policies installed by helm. Drive containers are
// brought to each in-flight state: Ready, signing (its `virtual add` slowed on the node), tearing
// down (its `container remove` slowed), waiting for capacity. Then `helm upgrade` to this chart
// (the CRDs changed in place) and the operator replaced as a rolling update replaces its pods: the
// new one starts, both run side by side, the old one stops. Every lifecycle completes on the new
// code, nothing is allocated twice, nothing Ready is torn down. Then `helm rollback` and the
// previous release again, the same way, with new workflows in flight; and everything deleted
// leaves nothing behind.
//
// On a control plane of its own: the chart's CRDs, roles and admission policies are cluster-wide
// (see helm-install.test.ts for why that cannot be the shared one's).
import { readFileSync } from 'node:fs';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeConfig, V1CustomResourceDefinition } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatedDevice } from '../../deploy/local/fake-nodes.js';
import { ControlPlane } from '../../deploy/local/control-plane.js';
import { createSimulatedCluster, signSharedDrives, simulate } from '../../deploy/local/shared-drives.js';
import { buildCrdFiles } from '../../src/api/index.js';
import type { WekaContainer } from '../../src/api/index.js';
import { eventually } from '../support/async.js';
import {
  createContainerObject,
  deleteContainers,
  ensureNamespace,
  isReady,
  listContainers,
  TEST_IMAGE,
} from '../support/containers.js';
import { operatorBundlePath, workflowBundlePath } from '../support/harness.js';
import { HELM_BUILD_TIMEOUT_MS, helmBinary, runHelm } from '../support/helm-chart.js';
import { kubectl } from '../support/kubectl.js';
import { checkAllDeleted, checkSteadyState, type InvariantScope, type ObservedState } from '../support/invariants.js';
import { TEST_ALLOWED_IMAGES, untilWorkerRuns } from '../support/operator.js';
import { spawnOperator, type OperatorProcess } from '../support/operator-process.js';
import { buildRelease, type ReleaseBuild } from '../support/release-build.js';
import { previousRelease } from '../support/releases.js';

const CURRENT = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
const PREVIOUS = previousRelease(CURRENT);
const RELEASE = 'weka-drives-operator';
const OPERATOR_NS = 'weka-drives-system';
const TENANT = 'tenant-upgrade';
const DEVICE: SimulatedDevice = { path: '/dev/nvme0n1', capacityGiB: 2000, type: 'TLC' };
const NODES = ['upgrade-a', 'upgrade-b'] as const;
/** No operator pods (the operator runs as processes here), and the images the test pods run. */
const CHART_VALUES = ['--set', 'replicas=0', '--set-json', `allowedImages=${JSON.stringify(TEST_ALLOWED_IMAGES)}`];
/** Slow enough to upgrade the operator in the middle of it; cleared to let it finish. */
const SLOW_MS = '600000';

let plane: ControlPlane;
let kc: KubeConfig;
let previous: ReleaseBuild;
let scratch: string;
let guid: string;
const operators: OperatorProcess[] = [];
const scope: InvariantScope = {
  nodes: NODES,
  devices: [DEVICE.path],
  clusterGUIDs: [],
  namespaces: [TENANT],
  operatorNamespace: OPERATOR_NS,
};

const helm = (...args: string[]) => runHelm(args, { kubeconfigPath: plane.kubeconfigPath });
const sim = (node: string, ...args: string[]) => simulate(plane.simulatorRoot, node, ...args);
const world = () => ({ kubeConfig: kc, simulatorRoot: plane.simulatorRoot });

beforeAll(
  async () => {
    expect(PREVIOUS, `no release older than ${CURRENT} in deploy/releases.json`).toBeDefined();
    [previous] = await Promise.all([buildRelease(PREVIOUS!), helmBinary()]);
    plane = await ControlPlane.start({ installCrds: false, log: (m) => console.log(`[upgrade] ${m}`) });
    kc = plane.kubeConfig();
    scratch = await mkdtemp(join(tmpdir(), 'weka-upgrade-'));
    for (const node of NODES) {
      await plane.addNode({ name: node, devices: [DEVICE] });
      await signSharedDrives({ kubeConfig: kc, simulatorRoot: plane.simulatorRoot, node, devices: [DEVICE] });
    }
    guid = await createSimulatedCluster(plane.simulatorRoot, NODES[0], 'upgrade');
    scope.clusterGUIDs = [guid];
    await ensureNamespace(kc, TENANT);
  },
  20 * 60_000 + HELM_BUILD_TIMEOUT_MS,
);

afterAll(async () => {
  for (const o of operators) await o.kill();
  await plane?.stop();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

/** A copy of the chart without its kubeVersion requirement (the local apiserver says v0.0.0-master). */
async function installable(chart: string, name: string): Promise<string> {
  const to = join(scratch, name);
  await cp(chart, to, { recursive: true });
  const chartYaml = join(to, 'Chart.yaml');
  await writeFile(chartYaml, (await readFile(chartYaml, 'utf8')).replace(/^kubeVersion: .*\n/m, ''));
  return to;
}

/** An operator process of the given build, running once its worker polls. */
async function startOperator(which: 'previous' | 'current'): Promise<OperatorProcess> {
  const p = spawnOperator(plane, {
    logName: `operator-${which}-${operators.length}`,
    script: which === 'previous' ? previous.operator : operatorBundlePath(),
    env: {
      LOG_LEVEL: 'info',
      WEKA_HTTP_PORT: '0',
      WEKA_TASK_QUEUE: 'weka-drives',
      WEKA_OPERATOR_NAMESPACE: OPERATOR_NS,
      WEKA_ALLOWED_IMAGES: TEST_ALLOWED_IMAGES.join(','),
      // The previous release loads the workflow bundle its build made, as its image does.
      ...(which === 'current' ? { WEKA_WORKFLOW_BUNDLE: workflowBundlePath() } : {}),
    },
  });
  operators.push(p);
  await untilWorkerRuns(p, `the ${which} operator`);
  return p;
}

/** The rolling update of the operator's Deployment: the new pod runs beside the old, then the old one stops. */
async function roll(from: OperatorProcess, to: 'previous' | 'current'): Promise<OperatorProcess> {
  const next = await startOperator(to);
  await new Promise((resolve) => setTimeout(resolve, 5_000));
  expect(await from.stop()).toBe(0);
  return next;
}

async function create(name: string, node: string, driveCapacity: number): Promise<string> {
  const spec = { image: TEST_IMAGE, nodeName: node, driveCores: 1, numDrives: 1, driveCapacity };
  const made = await createContainerObject(kc, { namespace: TENANT, name }, spec, { clusterGUID: guid });
  return made.metadata.uid!;
}

const containers = () => listContainers(kc, TENANT);
const byName = async () => new Map((await containers()).map((c) => [c.metadata.name!, c]));
const allocatedCondition = (c: WekaContainer | undefined) =>
  c?.status?.conditions?.find((x) => x.type === 'Allocated')?.reason;

async function waitFor(what: string, check: (all: Map<string, WekaContainer>) => boolean, ms = 180_000) {
  await eventually(what, async () => (check(await byName()) ? true : undefined), ms);
}

/**
 * A container signing on node b and one tearing down on node a, each held in the middle of its Weka
 * command (slowed in the simulator) until the faults are cleared.
 */
async function signAndRemoveInFlight(signing: string, leaving: string): Promise<void> {
  const [a, b] = NODES;
  await sim(b, 'faults', '--latency-ms', SLOW_MS, '--latency-for', 'weka-sign-drive virtual add');
  await sim(a, 'faults', '--latency-ms', SLOW_MS, '--latency-for', 'weka cluster container remove');
  await create(signing, b, 400);
  await deleteContainers(kc, [{ namespace: TENANT, name: leaving }]);
  const waiting = async (node: string) => (await sim(node, 'faults', '--waiting')).trim() !== '';
  await eventually('a sign and a remove in flight', async () =>
    (await waiting(a)) && (await waiting(b)) ? true : undefined,
  );
}

/** Lets the slowed commands finish: `leaving` goes, the others are Ready, and the invariants hold. */
async function completeInFlight(code: string, leaving: string, ready: readonly string[]): Promise<ObservedState> {
  for (const node of NODES) await sim(node, 'faults', '--clear');
  await waitFor(
    `every lifecycle to complete on ${code}`,
    (all) => !all.has(leaving) && ready.every((n) => isReady(all.get(n)!)),
  );
  const { violations, state } = await checkSteadyState(scope, world());
  expect(violations).toEqual([]);
  return state;
}

/**
 * Each CRD of this version's names, once Established: its uid and its versions as served, as JSON
 * (kubectl's: client-node's model objects would rename x-kubernetes-* keys).
 */
async function crdVersions(): Promise<Map<string, { uid: string; schema: string }>> {
  const names = buildCrdFiles().map((f) => f.crd.metadata.name);
  const crds = await eventually('the CRDs to be Established', async () => {
    const got = await kubectl(['get', 'crd', ...names, '-o', 'json'], plane.kubeconfigPath);
    if (got.code !== 0) return undefined;
    const read = (JSON.parse(got.stdout) as { items: V1CustomResourceDefinition[] }).items;
    const established = (c: V1CustomResourceDefinition) =>
      c.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True');
    return read.length === names.length && read.every(established) ? read : undefined;
  });
  return new Map(
    crds.map((c) => [c.metadata!.name!, { uid: c.metadata!.uid!, schema: JSON.stringify(c.spec.versions) }]),
  );
}

describe(`the upgrade from the previous release (${PREVIOUS?.version ?? 'none'}) to ${CURRENT}, and back`, () => {
  it(
    'completes every lifecycle in flight, allocates nothing twice and tears nothing Ready down',
    { timeout: 1_200_000 },
    async () => {
      const [a, b] = NODES;
      await helm(
        'install',
        RELEASE,
        await installable(previous.chart, 'previous'),
        '--namespace',
        OPERATOR_NS,
        '--create-namespace',
        ...CHART_VALUES,
      );
      const crdsBefore = await crdVersions();
      let operator = await startOperator('previous');

      // Under the previous release: two Ready, then one signing, one tearing down, one waiting for capacity.
      await create('steady-a', a, 600);
      await create('steady-b', b, 600);
      await create('leaving', a, 800);
      await waitFor('three containers Ready', (all) =>
        ['steady-a', 'steady-b', 'leaving'].every((n) => isReady(all.get(n)!)),
      );
      const untouched = (await byName()).get('steady-b')!.status?.allocations;
      await signAndRemoveInFlight('signing', 'leaving');
      await create('waiting', a, 1000); // 2000 GiB, 1400 taken until `leaving` is gone
      await waitFor(
        '`waiting` to wait for capacity',
        (all) => allocatedCondition(all.get('waiting')) === 'InsufficientDriveCapacity',
      );

      // The upgrade: the chart (its CRDs changed in place), then the operator's pods.
      await helm(
        'upgrade',
        RELEASE,
        await installable(join(process.cwd(), 'deploy/helm/weka-drives-operator'), 'current'),
        '--namespace',
        OPERATOR_NS,
        ...CHART_VALUES,
      );
      const crdsAfter = await crdVersions();
      const expected = new Map(buildCrdFiles().map((f) => [f.crd.metadata.name, JSON.stringify(f.crd.spec.versions)]));
      for (const [name, crd] of crdsAfter) {
        expect(crd.uid, `${name} upgraded in place`).toBe(crdsBefore.get(name)!.uid);
        expect(JSON.parse(crd.schema), `${name} as this version defines it`).toMatchObject(
          JSON.parse(expected.get(name)!),
        );
      }
      operator = await roll(operator, 'current');
      await completeInFlight('the new code', 'leaving', ['steady-a', 'steady-b', 'signing', 'waiting']);

      // The way back, with workflows the new code started in flight.
      await signAndRemoveInFlight('signing-2', 'steady-a');
      await helm('rollback', RELEASE, '1', '--namespace', OPERATOR_NS);
      const crdsBack = await crdVersions();
      for (const [name, crd] of crdsBack) {
        expect(crd.uid, `${name} rolled back in place`).toBe(crdsBefore.get(name)!.uid);
        expect(crd.schema, `${name} as the previous release defines it`).toBe(crdsBefore.get(name)!.schema);
      }
      await roll(operator, 'previous');
      const rolledBack = await completeInFlight('the previous code', 'steady-a', [
        'steady-b',
        'signing',
        'waiting',
        'signing-2',
      ]);

      expect((await byName()).get('steady-b')!.status?.allocations, 'steady-b kept its virtual drives').toEqual(
        untouched,
      );
      // Neither version failed a workflow task: no history the other wrote was beyond it.
      for (const o of operators) expect(o.output()).not.toMatch(/nondetermin/i);

      await deleteContainers(
        kc,
        (await containers()).map((c) => ({ namespace: TENANT, name: c.metadata.name! })),
      );
      await eventually(
        'every container gone',
        async () => ((await containers()).length === 0 ? true : undefined),
        180_000,
      );
      const deleted = await checkAllDeleted(scope, world(), rolledBack);
      expect(deleted.violations).toEqual([]);
    },
  );
});
