// The chart's ValidatingAdmissionPolicies on the real apiserver. Rendered by `helm template`,
// created as they are (the image policy's binding narrowed to this file's namespaces, so that the
// other test files sharing the control plane keep their own images), they narrow what the
// operator's service account (a client certificate whose CN is its username, bound to the chart's
// ClusterRole) may do with the two broad powers RBAC gives it, pods/exec and node patch; and every
// WekaContainer and WekaCluster must name an allowed image. The operator checks the same list before
// it creates a pod, which the last test shows with the policy out of the way.
import {
  AdmissionregistrationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type V1Node,
  type V1PolicyRule,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeExecTransport, wrappedArgv } from '../../activities/exec/kube-exec.js';
import { apiMessage, httpStatus } from '../../activities/kube/errors.js';
import { encodeSharedDrivesAnnotation, SHARED_DRIVES_ANNOTATION } from '../../src/annotations/index.js';
import { sharedCapacityResources } from '../../src/node/node-drives.js';
import type { Condition } from '../../src/api/index.js';
import {
  FIELD_MANAGER,
  FINALIZER,
  SHARED_DRIVES_CAPACITY_QLC,
  SHARED_DRIVES_CAPACITY_TLC,
  WEKA_POD_CONTAINER,
  type ObjectRef,
} from '../../src/api/names.js';
import {
  containerWorkflowId,
  deleteRequestedSignal,
  specChangedSignal,
  WORKFLOW,
  type LifecycleWorkflow,
} from '../../src/protocol.js';
import { completeCall, readDriveCall } from '../../src/weka/index.js';
import { operatorCommands } from '../support/weka-commands.js';
import { eventually } from '../support/async.js';
import { createContainerObject, rejection, WEKA_API, WEKA_CONTAINERS } from '../support/containers.js';
import { addNode, kubeConfig, uniqueName, uniqueNamespace } from '../support/harness.js';
import {
  admissionPolicies,
  admissionPolicy,
  createManifests,
  HELM_BUILD_TIMEOUT_MS,
  onlyOne,
  operatorClusterRole,
  renderChart,
  serviceAccountUsername,
  type Manifest,
} from '../support/helm-chart.js';
import {
  podExists,
  readContainer,
  sharedDrivesNode,
  startTestOperator,
  waitForPhase,
  waitGone,
  type TestOperator,
} from '../support/operator.js';
import { execAdmission, restrictedUser, type RestrictedUser } from '../support/restricted-user.js';
import { createWekaCluster } from '../support/simulator.js';

const WEKA_IMAGE = 'quay.io/weka.io/weka-in-container';
const DIGEST = `sha256:${'0123456789abcdef'.repeat(4)}`;
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const jsonPatch = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);
/** The label on this file's namespaces that the image policy's binding is narrowed to. */
const IMAGE_POLICY_LABEL = 'weka-drives-test/image-policy';

const release = uniqueName('vap');
let manifests: Manifest[];
let username: string;
let operator: RestrictedUser;
let removePolicies: (() => Promise<void>) | undefined;
let node: string;
let namespace: string;
let target: { namespace: string; pod: string; container: string };

const core = () => kubeConfig().makeApiClient(CoreV1Api);
const custom = () => kubeConfig().makeApiClient(CustomObjectsApi);
const policyName = (suffix: string) => admissionPolicy(manifests, suffix).policy.metadata.name;

/** A WekaContainer or WekaCluster body in `ns` with this image. */
function object(kind: 'WekaContainer' | 'WekaCluster', name: string, image: string, spec: object = {}) {
  return {
    apiVersion: 'weka.weka.io/v1alpha1',
    kind,
    metadata: { name },
    spec: kind === 'WekaContainer' ? { mode: 'drive', image, nodeName: 'nowhere', ...spec } : { image, ...spec },
  };
}

function createObject(ns: string, body: ReturnType<typeof object>, dryRun?: 'All') {
  const plural = body.kind === 'WekaContainer' ? 'wekacontainers' : 'wekaclusters';
  return custom().createNamespacedCustomObject({
    ...WEKA_API,
    plural,
    namespace: ns,
    body,
    ...(dryRun ? { dryRun } : {}),
  });
}

beforeAll(async () => {
  manifests = await renderChart({
    release,
    namespace: 'weka-drives-system',
    // A short account name: the username is a certificate's CN here, at most 64 characters.
    values: { allowedImages: [WEKA_IMAGE, 'registry.example.com/weka/'], serviceAccount: { name: `${release}-op` } },
  });
  username = serviceAccountUsername(manifests);
  const rules = (operatorClusterRole(manifests) as unknown as { rules: V1PolicyRule[] }).rules;
  operator = await restrictedUser(username, uniqueName('weka-drives-vap'), rules);

  namespace = await uniqueNamespace('vap');
  await core().patchNamespace(
    { name: namespace, body: { metadata: { labels: { [IMAGE_POLICY_LABEL]: release } } } },
    mergePatch,
  );
  const policies = admissionPolicies(manifests).map((m) => {
    if (m.kind !== 'ValidatingAdmissionPolicyBinding' || !m.metadata.name.endsWith('-images')) return m;
    const spec = m.spec as object;
    return {
      ...m,
      spec: { ...spec, matchResources: { namespaceSelector: { matchLabels: { [IMAGE_POLICY_LABEL]: release } } } },
    };
  });
  removePolicies = await createManifests(kubeConfig(), policies);

  node = uniqueName('vap-node');
  await addNode({ name: node, devices: [{ path: '/dev/nvme0n1', capacityGiB: 3840, type: 'TLC' }] });
  await core().createNamespacedPod({
    namespace,
    body: {
      metadata: { name: 'drive' },
      spec: {
        nodeName: node,
        containers: [
          { name: WEKA_POD_CONTAINER, image: `${WEKA_IMAGE}:test` },
          { name: 'sidecar', image: `${WEKA_IMAGE}:test` },
        ],
      },
    },
  });
  target = { namespace, pod: 'drive', container: WEKA_POD_CONTAINER };
  await eventually('the pod to run', async () =>
    (await core().readNamespacedPod({ namespace, name: 'drive' })).status?.phase === 'Running' ? true : undefined,
  );

  // A policy acts once the apiserver's policy informer has it: wait until each refuses something,
  // by requests that change nothing (an exec without the protocol upgrade, dry-run writes).
  await eventually('the exec policy to act', async () =>
    (await execAdmission(operator.kubeConfig, target, ['sh'])).admitted ? undefined : true,
  );
  await eventually('the node policy to act', async () => {
    const code = await operator.kubeConfig
      .makeApiClient(CoreV1Api)
      .patchNode({ name: node, dryRun: 'All', body: { metadata: { labels: { probe: 'x' } } } }, mergePatch)
      .then(
        () => 200,
        (err: unknown) => httpStatus(err),
      );
    return code === 403 ? true : undefined;
  });
  await eventually('the image policy to act', async () => {
    const code = await createObject(namespace, object('WekaContainer', 'probe', 'evil.example/x:1'), 'All').then(
      () => 200,
      (err: unknown) => httpStatus(err),
    );
    return code === 403 ? true : undefined;
  });
}, HELM_BUILD_TIMEOUT_MS);

afterAll(async () => {
  await removePolicies?.();
  await operator?.remove();
});

describe('the local apiserver', () => {
  it('serves ValidatingAdmissionPolicy and its binding in admissionregistration.k8s.io/v1', async () => {
    const list = await kubeConfig().makeApiClient(AdmissionregistrationV1Api).getAPIResources();
    expect(list.resources.map((r) => r.name)).toEqual(
      expect.arrayContaining(['validatingadmissionpolicies', 'validatingadmissionpolicybindings']),
    );
  });
});

describe("the exec policy, for the operator's service account", () => {
  const device = '/dev/nvme0n1';
  const guid = '4f1c2d3e-0000-4000-8000-0000000000aa';
  const uuid = '4f1c2d3e-0000-4000-8000-00000000000a';
  /** Every command line the operator runs (src/weka), one of each kind. */
  const commands = operatorCommands({ device, uuid, guid, containerId: 3, sizeGiB: 100 });

  it('admits every command the operator runs, in the weka container, and they run', async () => {
    for (const argv of commands) {
      const answer = await execAdmission(operator.kubeConfig, target, wrappedArgv(argv));
      expect(answer, argv.join(' ')).toMatchObject({ admitted: true });
    }
    // And through the operator's own transport (a websocket, as the operator execs).
    const exec = KubeExecTransport.fromKubeConfig(operator.kubeConfig, { maxAttempts: 1 });
    const call = readDriveCall(device);
    expect(completeCall(call, await exec.run(target, call.argv))).toMatchObject({ devicePath: device });
  });

  it.each<[string, readonly string[], { container?: string; stdin?: boolean; tty?: boolean }, RegExp]>([
    ['a shell', ['sh', '-c', 'id'], {}, /may exec only nsenter --mount \.\.\., weka cluster \.\.\., .*not "sh -c id"/],
    ['a Weka CLI without the wrapper', ['weka', 'cluster', 'list'], {}, /not "weka cluster list"/],
    [
      'another script in the wrapper’s place',
      ['sh', '-c', 'id; "$@"', 'weka-drives-exec', 'weka', 'cluster', 'list'],
      {},
      /not "sh -c id; "\$@" weka-drives-exec weka cluster list"/,
    ],
    ['the wrapper around a shell', wrappedArgv(['sh', '-c', 'id']), {}, /weka-drives-exec sh -c id"$/],
    [
      'nsenter running anything but the host lsblk',
      wrappedArgv(['nsenter', '--mount', '--pid', '--target', '1', '--', 'sh', '-c', 'id']),
      {},
      /may run nsenter only as "nsenter --mount --pid --target 1 -- lsblk --json .*", not ".* weka-drives-exec nsenter --mount --pid --target 1 -- sh -c id"/,
    ],
    ['another executable', wrappedArgv(['true']), {}, /weka-drives-exec true"$/],
    ['weka outside "cluster" and "local"', wrappedArgv(['weka', 'status']), {}, /weka-drives-exec weka status"$/],
    [
      'the CLI by another path',
      wrappedArgv(['/usr/bin/weka', 'cluster', 'list']),
      {},
      /weka-drives-exec \/usr\/bin\/weka cluster list"$/,
    ],
    ['the CLI alone', wrappedArgv(['weka']), {}, /weka-drives-exec weka"$/],
    [
      'another container',
      wrappedArgv(['weka', 'cluster', 'list']),
      { container: 'sidecar' },
      /only in container "weka", not "sidecar"/,
    ],
    ['with stdin', wrappedArgv(['weka', 'cluster', 'list']), { stdin: true }, /without stdin and without a terminal/],
    [
      'with a terminal',
      wrappedArgv(['weka', 'cluster', 'list']),
      { tty: true },
      /without stdin and without a terminal/,
    ],
  ])('refuses %s with the policy’s message', async (_what, argv, o, message) => {
    const answer = await execAdmission(
      operator.kubeConfig,
      { ...target, container: o.container ?? target.container },
      argv,
      o,
    );
    expect(answer.admitted).toBe(false);
    expect(answer.code).toBe(403);
    expect(answer.message).toContain(`ValidatingAdmissionPolicy '${policyName('exec')}'`);
    expect(answer.message).toMatch(message);
  });

  it('refuses it over a websocket too (the way the operator execs), and runs nothing', async () => {
    const exec = KubeExecTransport.fromKubeConfig(operator.kubeConfig, { maxAttempts: 1 });
    await expect(exec.run(target, ['sh', '-c', 'touch /tmp/admitted'])).rejects.toThrow(/403/);
  });

  it('is, for the operator, a refusal it does not retry (ExecForbidden): the exec is not tried again', async () => {
    let attempts = 0;
    const exec = KubeExecTransport.fromKubeConfig(operator.kubeConfig, {
      sleep: async () => void attempts++,
    });
    const refused = await exec.run(target, ['sh', '-c', 'touch /tmp/admitted']).catch((err: unknown) => err);
    expect(refused).toMatchObject({ name: 'ExecForbidden', commandMayHaveRun: false });
    expect((refused as Error).message).toMatch(/forbids this exec/);
    expect(attempts).toBe(0);
  });

  it('leaves every other user alone', async () => {
    expect((await execAdmission(kubeConfig(), target, ['sh', '-c', 'id'])).admitted).toBe(true);
    expect((await execAdmission(kubeConfig(), { ...target, container: 'sidecar' }, ['true'])).admitted).toBe(true);
  });
});

describe("the node policy, for the operator's service account", () => {
  const asOperator = () => operator.kubeConfig.makeApiClient(CoreV1Api);
  const readNode = async (): Promise<V1Node> => core().readNode({ name: node });

  /** The refusal of a request as the operator: 403 and the node policy's message. */
  async function refused(request: Promise<unknown>, message: RegExp): Promise<void> {
    const err = await request.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err, 'the request was admitted').toBeDefined();
    expect(httpStatus(err)).toBe(403);
    expect(apiMessage(err)).toContain(`ValidatingAdmissionPolicy '${policyName('node-writes')}'`);
    expect(apiMessage(err)).toMatch(message);
  }

  it("admits the operator's own writes, made the way publishNodeDrives makes them", async () => {
    // activities/sign-drives.ts: a merge patch of the annotation, conditional on the version read,
    // then a merge patch of the node's status with the capacity resources; the whole operator runs
    // under these policies in rbac.test.ts.
    const before = await readNode();
    const annotation = encodeSharedDrivesAnnotation([
      {
        physicalUUID: '11111111-0000-4000-8000-000000000001',
        serial: 'S1',
        capacityGiB: 3840,
        type: 'TLC',
        devicePath: '/dev/nvme0n1',
      },
    ]);
    const patched = await asOperator().patchNode(
      {
        name: node,
        fieldManager: FIELD_MANAGER.nodeSigner,
        body: {
          metadata: {
            resourceVersion: before.metadata?.resourceVersion,
            annotations: { [SHARED_DRIVES_ANNOTATION]: annotation },
          },
        },
      },
      mergePatch,
    );
    const resources = sharedCapacityResources({ tlc: 3840, qlc: 7680 });
    await asOperator().patchNodeStatus(
      {
        name: node,
        fieldManager: FIELD_MANAGER.nodeSigner,
        body: {
          metadata: { resourceVersion: patched.metadata?.resourceVersion },
          status: { capacity: resources, allocatable: resources },
        },
      },
      mergePatch,
    );
    const after = await readNode();
    expect(after.metadata?.annotations?.[SHARED_DRIVES_ANNOTATION]).toBe(annotation);
    expect(after.status?.capacity?.[SHARED_DRIVES_CAPACITY_TLC]).toBe('3840');
    expect(after.status?.allocatable?.[SHARED_DRIVES_CAPACITY_QLC]).toBe('7680');
    // Nothing else changed.
    expect(after.metadata?.labels).toEqual(before.metadata?.labels);
    expect(after.spec).toEqual(before.spec);
    expect(after.status?.capacity?.cpu).toBe(before.status?.capacity?.cpu);
  });

  it('refuses another annotation, added, changed or removed', async () => {
    await core().patchNode(
      { name: node, body: { metadata: { annotations: { 'example.com/owner': 'ops' } } } },
      mergePatch,
    );
    const annotate = (annotations: Record<string, string | null>) =>
      asOperator().patchNode({ name: node, body: { metadata: { annotations } } }, mergePatch);
    await refused(
      annotate({ 'weka.io/other': 'x' }),
      /only the node annotations weka\.io\/shared-drives, weka\.weka\.io\/allocations, weka\.io\/weka-drives, weka\.weka\.io\/withheld-drives, not weka\.io\/other/,
    );
    await refused(annotate({ 'example.com/owner': 'weka' }), /not example\.com\/owner/);
    await refused(annotate({ 'example.com/owner': null }), /not example\.com\/owner/);
    // Alongside its own annotation, too.
    await refused(annotate({ [SHARED_DRIVES_ANNOTATION]: '[]', 'weka.io/other': 'x' }), /not weka\.io\/other/);
    expect((await readNode()).metadata?.annotations?.['example.com/owner']).toBe('ops');
  });

  it('refuses a label, a taint, a cordon and another change of the spec', async () => {
    await refused(
      asOperator().patchNode(
        { name: node, body: { metadata: { labels: { 'weka.io/drive-sharing': 'x' } } } },
        mergePatch,
      ),
      /may not change a node's labels/,
    );
    await refused(
      asOperator().patchNode(
        { name: node, body: { spec: { taints: [{ key: 'weka.io/evil', effect: 'NoSchedule' }] } } },
        mergePatch,
      ),
      /may not change a node's taints/,
    );
    await refused(
      asOperator().patchNode({ name: node, body: { spec: { unschedulable: true } } }, mergePatch),
      /may not change a node's spec/,
    );
    await refused(
      asOperator().patchNode({ name: node, body: { metadata: { finalizers: ['example.com/hold'] } } }, mergePatch),
      /may not change a node's finalizers or owner references/,
    );
    const n = await readNode();
    expect((n.spec?.taints ?? []).map((t) => t.key)).not.toContain('weka.io/evil');
    expect(n.spec?.unschedulable).toBeFalsy();
  });

  it('refuses any other status change: another resource, a condition, the addresses', async () => {
    const status = (body: object, patch = mergePatch) => asOperator().patchNodeStatus({ name: node, body }, patch);
    await refused(
      status({ status: { capacity: { cpu: '1000' } } }),
      /only the node resources weka\.io\/shared-drives-capacity, weka\.io\/shared-drives-capacity-qlc, weka\.io\/drives, not capacity cpu/,
    );
    await refused(status({ status: { allocatable: { 'example.com/gpu': '8' } } }), /not allocatable example\.com\/gpu/);
    await refused(status({ status: { capacity: { memory: null } } }), /not capacity memory/);
    await refused(status([{ op: 'remove', path: '/status/conditions' }], jsonPatch), /not status\.conditions/);
    await refused(
      status({ status: { addresses: [{ type: 'InternalIP', address: '10.9.9.9' }] } }),
      /not status\.addresses/,
    );
    // Its own resources alone pass, removal included.
    await status({
      status: { capacity: { [SHARED_DRIVES_CAPACITY_QLC]: null }, allocatable: { [SHARED_DRIVES_CAPACITY_QLC]: null } },
    });
    expect((await readNode()).status?.capacity?.[SHARED_DRIVES_CAPACITY_QLC]).toBeUndefined();
  });

  it('leaves every other user alone', async () => {
    await core().patchNode({ name: node, body: { metadata: { labels: { 'example.com/admin': 'yes' } } } }, mergePatch);
    expect((await readNode()).metadata?.labels?.['example.com/admin']).toBe('yes');
  });
});

describe('the image policy, for everyone', () => {
  it.each([
    `${WEKA_IMAGE}:4.4.10.183`,
    `${WEKA_IMAGE}@${DIGEST}`,
    `${WEKA_IMAGE}:4.4.10@${DIGEST}`,
    'registry.example.com/weka/mirror/weka-in-container:4.4',
  ])('admits %s', async (image) => {
    await createObject(namespace, object('WekaContainer', uniqueName('ok'), image), 'All');
    await createObject(namespace, object('WekaCluster', uniqueName('ok'), image), 'All');
  });

  it.each([
    `${WEKA_IMAGE}-evil:1`,
    `${WEKA_IMAGE}/evil:1`,
    'docker.io/library/busybox:latest',
    'registry.example.com/weka-evil/x:1',
  ])('refuses %s on a WekaContainer and a WekaCluster, naming the image and the list', async (image) => {
    for (const kind of ['WekaContainer', 'WekaCluster'] as const) {
      const { code, message } = await rejection(createObject(namespace, object(kind, uniqueName('no'), image)));
      expect(code).toBe(403);
      expect(message).toContain(`ValidatingAdmissionPolicy '${policyName('images')}'`);
      expect(message).toContain(`spec.image "${image}" is not allowed`);
      expect(message).toContain(
        `${WEKA_IMAGE} (any tag or digest), registry.example.com/weka/ (any repository under it)`,
      );
      expect(message).toContain('allowedImages');
    }
  });

  it('admits the chart’s own proxyImage, as the ssdproxy WekaContainer the operator creates', async () => {
    const deployment = onlyOne(manifests, 'Deployment') as unknown as {
      spec: { template: { spec: { containers: Array<{ env: Array<{ name: string; value?: string }> }> } } };
    };
    const proxyImage = deployment.spec.template.spec.containers[0]!.env.find(
      (e) => e.name === 'WEKA_PROXY_IMAGE',
    )!.value!;
    await createObject(
      namespace,
      object('WekaContainer', uniqueName('proxy'), proxyImage, { mode: 'ssdproxy' }),
      'All',
    );
  });

  it('refuses a change to a disallowed image, and lets an object whose image did not change be updated and deleted', async () => {
    const ok = uniqueName('ok');
    await createObject(namespace, object('WekaContainer', ok, `${WEKA_IMAGE}:1`));
    const patchImage = (name: string, image: string) =>
      custom().patchNamespacedCustomObject(
        { ...WEKA_CONTAINERS, namespace, name, body: { spec: { image } } },
        mergePatch,
      );
    const { code, message } = await rejection(patchImage(ok, 'evil.example/weka:1'));
    expect(code).toBe(403);
    expect(message).toContain('spec.image "evil.example/weka:1" is not allowed');

    // An object from before the policy (created where it did not apply, then brought under it).
    const older = await uniqueNamespace('vap-older');
    await createObject(older, object('WekaContainer', 'old', 'evil.example/weka:1', {}));
    await custom().patchNamespacedCustomObject(
      { ...WEKA_CONTAINERS, namespace: older, name: 'old', body: { metadata: { finalizers: [FINALIZER] } } },
      mergePatch,
    );
    await core().patchNamespace(
      { name: older, body: { metadata: { labels: { [IMAGE_POLICY_LABEL]: release } } } },
      mergePatch,
    );
    await eventually('the policy to apply in the relabelled namespace', async () => {
      const code = await createObject(older, object('WekaContainer', 'probe', 'evil.example/x:1'), 'All').then(
        () => 200,
        (err: unknown) => httpStatus(err),
      );
      return code === 403 ? true : undefined;
    });
    // Its finalizer can still be removed (the operator's last teardown step), and it can be deleted.
    await custom().patchNamespacedCustomObject(
      { ...WEKA_CONTAINERS, namespace: older, name: 'old', body: { metadata: { finalizers: null } } },
      mergePatch,
    );
    await custom().deleteNamespacedCustomObject({ ...WEKA_CONTAINERS, namespace: older, name: 'old' });
    await custom().deleteNamespacedCustomObject({ ...WEKA_CONTAINERS, namespace, name: ok });
  });
});

describe('the operator, with the image policy out of the way', () => {
  let op: TestOperator | undefined;
  afterAll(async () => {
    await op?.stop();
  });

  it('never creates a pod for a disallowed image: Ready=False (StepFailed) and a Warning Event, until the image is fixed', async () => {
    op = await startTestOperator({ allowedImages: [WEKA_IMAGE] });
    const devices = [
      { path: '/dev/nvme0n1', capacityGiB: 7680, type: 'TLC' as const },
      { path: '/dev/nvme1n1', capacityGiB: 15360, type: 'QLC' as const },
    ];
    const driveNode = await sharedDrivesNode(devices, 'vap-drive');
    const guid = await createWekaCluster(driveNode, 'vap');
    // A namespace without the label: the admission policy does not apply, the operator's own check does.
    const ref: ObjectRef = { namespace: await uniqueNamespace('vap-operator'), name: 'drive-0' };
    const image = `${WEKA_IMAGE}-evil:1`;
    const created = await createContainerObject(
      kubeConfig(),
      ref,
      { image, nodeName: driveNode, driveCores: 1, containerCapacity: 2000, driveTypesRatio: { tlc: 1, qlc: 1 } },
      { finalizers: [FINALIZER], clusterGUID: guid },
    );
    const uid = created.metadata.uid!;
    const handle = await op.client.workflow.start<LifecycleWorkflow>(WORKFLOW.driveContainer, {
      taskQueue: op.deps.taskQueue,
      workflowId: containerWorkflowId(uid),
      args: [{ namespace: ref.namespace, name: ref.name, uid }],
    });

    const condition = await eventually(
      'Ready=False with reason StepFailed',
      async () => {
        const c = (await readContainer(ref))?.status?.conditions?.find((x: Condition) => x.type === 'Ready');
        return c?.status === 'False' && c.reason === 'StepFailed' ? c : undefined;
      },
      60_000,
    );
    expect(condition.message).toContain(`image "${image}" is not allowed`);
    expect(condition.message).toContain(`${WEKA_IMAGE} (any tag or digest)`);
    expect(condition.message).toContain('allowedImages');
    const event = await eventually('a Warning Event StepFailed', async () => {
      const events = await core().listNamespacedEvent({ namespace: ref.namespace });
      return events.items.find(
        (e) => e.involvedObject.name === ref.name && e.type === 'Warning' && e.reason === 'StepFailed',
      );
    });
    expect(event.message).toContain(image);
    expect(await podExists(ref.namespace, ref.name)).toBe(false);
    // Refused at its first attempt and not retried: a non-retryable ImageNotAllowed failure.
    const events = (await handle.fetchHistory()).events ?? [];
    const failed = events.filter(
      (e) => e.activityTaskFailedEventAttributes?.failure?.applicationFailureInfo?.type === 'ImageNotAllowed',
    );
    expect(failed).toHaveLength(1);
    const attrs = failed[0]!.activityTaskFailedEventAttributes!;
    expect(attrs.failure?.applicationFailureInfo?.nonRetryable).toBe(true);
    const started = events.find((e) => e.eventId?.toString() === attrs.startedEventId?.toString());
    expect(started?.activityTaskStartedEventAttributes?.attempt).toBe(1);

    // Fixed by the user: the next attempt gets its pod and the container becomes Ready.
    await custom().patchNamespacedCustomObject(
      { ...WEKA_CONTAINERS, ...ref, body: { spec: { image: `${WEKA_IMAGE}:4.4.10` } } },
      mergePatch,
    );
    await handle.signal(specChangedSignal);
    await waitForPhase(ref, 'Ready', 120_000);
    expect(await podExists(ref.namespace, ref.name)).toBe(true);

    await custom().deleteNamespacedCustomObject({ ...WEKA_CONTAINERS, ...ref });
    await handle.signal(deleteRequestedSignal);
    await waitGone(ref, 120_000);
  });
});
