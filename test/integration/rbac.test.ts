// The operator runs with nothing but the Helm chart's ClusterRole, under the chart's admission
// policies: the chart's service account (a client certificate whose CN is the account's username,
// outside system:masters, bound only to the role rendered by `helm template`) runs the worker and
// the CR watcher, signs a node's drives and drives a container through its whole lifecycle, while
// the chart's ValidatingAdmissionPolicies narrow its exec and node writes (and check every
// image); and it cannot do what the role or the policies do not allow. The test's own setup
// (nodes, the custom resources a user creates and deletes) uses the admin. The image policy's
// binding is narrowed to this file's namespaces, so that the other test files sharing the
// control plane keep their own images.
import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  RbacAuthorizationV1Api,
  setHeaderOptions,
  type V1PolicyRule,
} from '@kubernetes/client-node';
import type { WorkflowHandle } from '@temporalio/client';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeExecTransport } from '../../activities/exec/kube-exec.js';
import { decodeSharedDrivesAnnotation, SHARED_DRIVES_ANNOTATION } from '../../src/annotations/index.js';
import { FINALIZER, proxyName, WEKA_POD_CONTAINER, type ObjectRef } from '../../src/api/names.js';
import { startWatcher, type RunningWatcher } from '../../deploy/operator/watcher/watcher.js';
import type { SimulatedDevice } from '../../deploy/local/fake-nodes.js';
import {
  admissionPolicies,
  createManifests,
  HELM_BUILD_TIMEOUT_MS,
  onlyOne,
  operatorClusterRole,
  renderChart,
  serviceAccountUsername,
  type Manifest,
} from '../support/helm-chart.js';
import { eventually } from '../support/async.js';
import { httpStatus } from '../../activities/kube/errors.js';
import { createContainerObject, TEST_IMAGE, WEKA_API } from '../support/containers.js';
import { addNode, kubeConfig, uniqueName, uniqueNamespace } from '../support/harness.js';
import { readNode, readOperation, waitFinished } from '../support/manual-operation.js';
import {
  podExists,
  readContainer,
  sharedDrivesNode,
  startTestOperator,
  waitForPhase,
  waitGone,
  type TestOperator,
} from '../support/operator.js';
import { execAdmission, grantInNamespace, restrictedUser, type RestrictedUser } from '../support/restricted-user.js';
import { createWekaCluster } from '../support/simulator.js';
import { clusterWorkflowId, containerWorkflowId, operationWorkflowId } from '../../src/protocol.js';
import { createLocalBlockVolumes } from '../../deploy/local/local-volumes.js';
import { CLUSTER_UID_LABEL } from '../../src/manifests/device-set-pods.js';
import { readCluster } from '../support/clusters.js';

const DEVICES: SimulatedDevice[] = [
  { path: '/dev/nvme0n1', capacityGiB: 7680, type: 'TLC' },
  { path: '/dev/nvme1n1', capacityGiB: 7680, type: 'TLC' },
  { path: '/dev/nvme2n1', capacityGiB: 15360, type: 'QLC' },
];

let chartRules: V1PolicyRule[];
let operatorUser: RestrictedUser;
let op: TestOperator;
let watcher: RunningWatcher | undefined;
let removePolicies: (() => Promise<void>) | undefined;
const extraUsers: RestrictedUser[] = [];

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
/** The label on this file's namespaces that the image policy's binding is narrowed to. */
const IMAGE_POLICY_LABEL = 'weka-drives-test/image-policy';
const RELEASE = 'rbac-test';

/** Brings a namespace under the chart's image policy. */
async function underImagePolicy(namespace: string): Promise<string> {
  await kubeConfig()
    .makeApiClient(CoreV1Api)
    .patchNamespace({ name: namespace, body: { metadata: { labels: { [IMAGE_POLICY_LABEL]: RELEASE } } } }, mergePatch);
  return namespace;
}

/** The chart's policies and bindings, the image policy's binding narrowed to this file's namespaces. */
function policiesOf(manifests: Manifest[]): Manifest[] {
  return admissionPolicies(manifests).map((m) =>
    m.kind === 'ValidatingAdmissionPolicyBinding' && m.metadata.name.endsWith('-images')
      ? {
          ...m,
          spec: {
            ...(m.spec as object),
            matchResources: { namespaceSelector: { matchLabels: { [IMAGE_POLICY_LABEL]: RELEASE } } },
          },
        }
      : m,
  );
}

beforeAll(async () => {
  // A short account name: its username is a certificate's CN here, at most 64 characters.
  const manifests = await renderChart({
    release: RELEASE,
    namespace: 'weka-drives-system',
    values: { serviceAccount: { name: 'rbac-test-op' } },
  });
  chartRules = (operatorClusterRole(manifests) as unknown as { rules: V1PolicyRule[] }).rules;
  operatorUser = await restrictedUser(serviceAccountUsername(manifests), uniqueName('weka-drives-rbac'), chartRules);
  removePolicies = await createManifests(kubeConfig(), policiesOf(manifests));
  op = await startTestOperator({
    kubeConfig: operatorUser.kubeConfig,
    exec: KubeExecTransport.fromKubeConfig(operatorUser.kubeConfig),
  });
  await underImagePolicy(op.operatorNamespace);
  const roleRules = (onlyOne(manifests, 'Role') as unknown as { rules: V1PolicyRule[] }).rules;
  await grantInNamespace(operatorUser.user, op.operatorNamespace, 'weka-drives-operator', roleRules);
  // The policies act once the apiserver's informer has them: wait until each refuses something,
  // by requests that change nothing (an exec without the protocol upgrade, dry-run writes).
  const node = uniqueName('rbac-probe');
  await addNode({ name: node });
  await eventually('the exec policy to act', async () => {
    const probe = { namespace: op.operatorNamespace, pod: 'none', container: WEKA_POD_CONTAINER };
    return (await execAdmission(operatorUser.kubeConfig, probe, ['sh'])).admitted ? undefined : true;
  });
  await eventually('the node policy to act', async () => {
    const code = await operatorUser.kubeConfig
      .makeApiClient(CoreV1Api)
      .patchNode({ name: node, dryRun: 'All', body: { metadata: { labels: { probe: 'x' } } } }, mergePatch)
      .then(
        () => 200,
        (err: unknown) => httpStatus(err),
      );
    return code === 403 ? true : undefined;
  });
  await eventually('the image policy to act', async () => {
    const code = await custom()
      .createNamespacedCustomObject({
        ...group('wekacontainers'),
        namespace: op.operatorNamespace,
        dryRun: 'All',
        body: {
          apiVersion: 'weka.weka.io/v1alpha1',
          kind: 'WekaContainer',
          metadata: { name: 'probe' },
          spec: { mode: 'drive', image: 'evil.example/x:1', nodeName: node },
        },
      })
      .then(
        () => 200,
        (err: unknown) => httpStatus(err),
      );
    return code === 403 ? true : undefined;
  });
  // Every kind, so that the role's list and watch on all three are exercised: the watcher is
  // ready only once its first list of each kind succeeded.
  watcher = startWatcher({
    kubeConfig: operatorUser.kubeConfig,
    temporal: op.client,
    taskQueue: op.deps.taskQueue,
    logger: pino({ level: 'warn' }),
    kinds: ['WekaContainer', 'WekaManualOperation', 'WekaCluster'],
  });
  await watcher.ready;
}, HELM_BUILD_TIMEOUT_MS);

afterAll(async () => {
  await watcher?.stop();
  await op?.stop();
  await removePolicies?.();
  for (const u of [operatorUser, ...extraUsers]) await u?.remove();
});

/** A wait that, when it times out, says what the workflow's activities are failing with (a 403 shows here). */
async function explained<T>(handle: WorkflowHandle, wait: Promise<T>): Promise<T> {
  try {
    return await wait;
  } catch (err) {
    const pending = await handle.describe().then(
      (d) =>
        (d.raw.pendingActivities ?? [])
          .map((a) => `${a.activityType?.name ?? '?'}: ${a.lastFailure?.message ?? 'no failure yet'}`)
          .join('\n  ') || '(none)',
      (e: unknown) => `(no workflow ${handle.workflowId}: ${String(e)}; did the watcher start it?)`,
    );
    throw new Error(`${(err as Error).message}\npending activities:\n  ${pending}`);
  }
}

const custom = () => kubeConfig().makeApiClient(CustomObjectsApi);
const group = (plural: string) => ({ ...WEKA_API, plural });

/** Creates a custom resource the way a user does: no finalizer, no workflow; the watcher does the rest. */
async function createAsUser(plural: string, ref: ObjectRef, kind: string, spec: object): Promise<string> {
  const created = (await custom().createNamespacedCustomObject({
    ...group(plural),
    namespace: ref.namespace,
    body: { apiVersion: 'weka.weka.io/v1alpha1', kind, metadata: { name: ref.name }, spec },
  })) as { metadata: { uid: string } };
  return created.metadata.uid;
}

describe("the operator with only the chart's ClusterRole, under the chart's admission policies", () => {
  it('signs the drives of a selected node and publishes them on the node', async () => {
    const selector = { 'weka.io/drive-sharing': uniqueName('rbac-pool') };
    const node = uniqueName('rbac-sign');
    await addNode({ name: node, labels: selector, devices: DEVICES });
    const ref = { namespace: await underImagePolicy(await uniqueNamespace('rbac-sign')), name: 'sign' };
    const uid = await createAsUser('wekamanualoperations', ref, 'WekaManualOperation', {
      action: 'sign-drives',
      payload: {
        signDrivesPayload: {
          type: 'device-paths',
          nodeSelector: selector,
          devicePaths: DEVICES.map((d) => d.path),
          shared: true,
        },
      },
    });
    const handle = op.client.workflow.getHandle(operationWorkflowId(uid));

    const done = await explained(handle, waitFinished(ref));
    expect(done.status?.phase).toBe('Succeeded');
    // The watcher's own writes: the finalizer and the workflow id.
    expect(done.metadata.finalizers).toEqual([FINALIZER]);
    expect(done.status?.workflowID).toBe(operationWorkflowId(uid));
    const published = decodeSharedDrivesAnnotation(
      (await readNode(node)).metadata?.annotations?.[SHARED_DRIVES_ANNOTATION] ?? '',
    );
    expect(published.ok && published.drives.map((d) => d.devicePath).sort()).toEqual(DEVICES.map((d) => d.path));
    expect((await readNode(node)).status?.capacity?.['weka.io/shared-drives-capacity']).toBeDefined();

    await custom().deleteNamespacedCustomObject({ ...group('wekamanualoperations'), ...ref });
    await explained(handle, handle.result());
    expect(await readOperation(ref)).toBeNull();
  });

  it("claims a cluster's device set in its own namespace, signs and shares it, and releases it on deletion", async () => {
    const pool = uniqueName('rbac-pool');
    const node = uniqueName('rbac-set');
    const tlc = DEVICES.filter((d) => d.type === 'TLC');
    await addNode({ name: node, labels: { 'weka.weka.io/pool': pool }, devices: tlc });
    const storageClass = uniqueName('rbac-local');
    await createLocalBlockVolumes(
      kubeConfig(),
      storageClass,
      tlc.map((d) => ({ node, path: d.path, capacityGiB: d.capacityGiB })),
    );
    const ref = { namespace: await underImagePolicy(await uniqueNamespace('rbac-set')), name: 'sets' };
    const uid = await createAsUser('wekaclusters', ref, 'WekaCluster', {
      image: TEST_IMAGE,
      nodeSelector: { 'weka.weka.io/pool': pool },
      dynamicTemplate: {
        driveContainers: 1,
        driveCores: 1,
        containerCapacity: 1000,
        driveTypesRatio: { tlc: 1, qlc: 0 },
      },
      storageClassDeviceSets: [
        {
          name: 'local',
          count: tlc.length,
          volumeClaimTemplates: [
            {
              spec: {
                storageClassName: storageClass,
                volumeMode: 'Block',
                resources: { requests: { storage: '1000Gi' } },
              },
            },
          ],
        },
      ],
    });
    const handle = op.client.workflow.getHandle(clusterWorkflowId(uid));
    const claims = async () =>
      (
        await kubeConfig()
          .makeApiClient(CoreV1Api)
          .listNamespacedPersistentVolumeClaim({
            namespace: op.operatorNamespace,
            labelSelector: `${CLUSTER_UID_LABEL}=${uid}`,
          })
      ).items;
    await explained(
      handle,
      eventually(
        'the cluster Ready on its device set',
        async () => {
          const cluster = await readCluster(ref.namespace, ref.name);
          return cluster?.status?.phase === 'Ready' ? cluster : undefined;
        },
        180_000,
      ),
    );
    expect((await claims()).map((c) => c.status?.phase)).toEqual(tlc.map(() => 'Bound'));
    const published = decodeSharedDrivesAnnotation(
      (await readNode(node)).metadata?.annotations?.[SHARED_DRIVES_ANNOTATION] ?? '',
    );
    expect(published.ok && published.drives.map((d) => d.devicePath).sort()).toEqual(tlc.map((d) => d.path));

    await custom().deleteNamespacedCustomObject({ ...group('wekaclusters'), ...ref });
    await explained(handle, handle.result());
    // Deleted by the teardown; each goes once its device pod is gone (the claim protection).
    await eventually('the claims gone', async () => ((await claims()).length === 0 ? true : undefined));
  });

  it('brings a drive container to Ready and tears it down on deletion', async () => {
    const node = await sharedDrivesNode(DEVICES, 'rbac-node');
    const guid = await createWekaCluster(node, 'rbac');
    const ref = { namespace: await underImagePolicy(await uniqueNamespace('rbac-drive')), name: 'drive-0' };
    // A standalone container as a user creates it, with its cluster's GUID as the cluster's admin records it.
    const created = await createContainerObject(
      kubeConfig(),
      ref,
      { nodeName: node, driveCores: 2, containerCapacity: 6000, driveTypesRatio: { tlc: 1, qlc: 1 } },
      { clusterGUID: guid },
    );
    const uid = created.metadata.uid!;
    const handle = op.client.workflow.getHandle(containerWorkflowId(uid));

    const ready = await explained(handle, waitForPhase(ref, 'Ready', 120_000));
    expect(ready.metadata.finalizers).toEqual([FINALIZER]);
    expect(ready.status?.workflowID).toBe(containerWorkflowId(uid));
    expect(ready.status?.addedVirtualDrives?.length).toBe(ready.status?.allocations?.virtualDrives?.length);
    expect(await podExists(op.operatorNamespace, proxyName(node))).toBe(true);

    // Exec over a websocket needs both verbs on pods/exec: get (the upgrade is a GET) and, since
    // Kubernetes 1.35, create. With either alone the apiserver refuses it.
    const target = { namespace: ref.namespace, pod: ref.name, container: WEKA_POD_CONTAINER };
    for (const verbs of [['get'], ['create']]) {
      const user = await restrictedUser(`weka-drives-exec-${verbs[0]}`, uniqueName(`weka-drives-exec-${verbs[0]}`), [
        { apiGroups: [''], resources: ['pods/exec'], verbs },
      ]);
      extraUsers.push(user);
      const exec = KubeExecTransport.fromKubeConfig(user.kubeConfig, { maxAttempts: 1 });
      await expect(exec.run(target, ['true']), `pods/exec with only ${verbs[0]}`).rejects.toThrow(/403/);
    }
    const asOperator = KubeExecTransport.fromKubeConfig(operatorUser.kubeConfig, { maxAttempts: 1 });
    expect((await asOperator.run(target, ['weka', 'cluster', 'container', '--json'])).exitCode).toBe(0);
    // What the exec policy refuses it, though RBAC would not: a shell, another container.
    await expect(asOperator.run(target, ['sh', '-c', 'true'])).rejects.toThrow(/403/);
    await expect(asOperator.run({ ...target, container: 'other' }, ['weka', 'cluster', 'container'])).rejects.toThrow(
      /403/,
    );

    await custom().deleteNamespacedCustomObject({ ...group('wekacontainers'), ...ref });
    await explained(handle, waitGone(ref, 120_000));
    await handle.result();
    expect(await podExists(ref.namespace, ref.name)).toBe(false);
    expect(await podExists(op.operatorNamespace, proxyName(node))).toBe(false);
    expect(await readContainer({ namespace: op.operatorNamespace, name: proxyName(node) })).toBeNull();
  });

  it('cannot delete nodes, read Secrets, grant itself more, or label, taint or annotate a node', async () => {
    const core = operatorUser.kubeConfig.makeApiClient(CoreV1Api);
    const node = (await core.listNode()).items[0]?.metadata?.name;
    expect(node).toBeDefined();
    const forbidden = async (what: string, call: () => Promise<unknown>) => {
      await expect(
        call().then(
          () => 'allowed',
          (err: { code?: number }) => err.code,
        ),
        what,
      ).resolves.toBe(403);
    };
    await forbidden('delete a node', () => core.deleteNode({ name: node! }));
    await forbidden('list Secrets', () => core.listNamespacedSecret({ namespace: op.operatorNamespace }));
    await forbidden('read a Secret', () =>
      core.readNamespacedSecret({ namespace: op.operatorNamespace, name: 'anything' }),
    );
    const elsewhere = await uniqueNamespace('rbac-other');
    await forbidden('list claims in another namespace', () =>
      core.listNamespacedPersistentVolumeClaim({ namespace: elsewhere }),
    );
    await forbidden('delete a claim in another namespace', () =>
      core.deleteNamespacedPersistentVolumeClaim({ namespace: elsewhere, name: 'data' }),
    );
    // Its own namespace is where its device sets' claims are: there it may list them. Its pods it
    // watches everywhere, by label, to make a lost one again.
    await core.listPodForAllNamespaces({ labelSelector: 'app.kubernetes.io/managed-by=weka-drives-operator' });
    await core.listNamespacedPersistentVolumeClaim({ namespace: op.operatorNamespace });
    await forbidden('create a namespace', () =>
      core.createNamespace({ body: { metadata: { name: uniqueName('rbac-ns') } } }),
    );
    await forbidden('create a ClusterRoleBinding', () =>
      operatorUser.kubeConfig.makeApiClient(RbacAuthorizationV1Api).createClusterRoleBinding({
        body: {
          metadata: { name: uniqueName('escalate') },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
          subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: operatorUser.user }],
        },
      }),
    );
    // What RBAC grants but the node policy refuses: a label, a taint, another annotation.
    await forbidden('label a node', () =>
      core.patchNode({ name: node!, body: { metadata: { labels: { 'example.com/x': 'y' } } } }, mergePatch),
    );
    await forbidden('taint a node', () =>
      core.patchNode(
        { name: node!, body: { spec: { taints: [{ key: 'example.com/x', effect: 'NoSchedule' }] } } },
        mergePatch,
      ),
    );
    await forbidden('annotate a node', () =>
      core.patchNode({ name: node!, body: { metadata: { annotations: { 'example.com/x': 'y' } } } }, mergePatch),
    );
    // The admin still sees the node: the refusal was authorization, not a missing object.
    expect((await readNode(node!)).metadata?.name).toBe(node);
  });
});
