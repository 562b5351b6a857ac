// One impossible WekaContainer must never wedge its node for every tenant. Three ways it is kept out:
// - the CRD refuses at admission what no node and no setting could ever give (more virtual drives
//   than a status can list, more per drive core than any setting allows, more GiB than a node holds);
// - what only the allocator can see (the per-core setting, the drive types a ratio makes active, a
//   driveCores inherited from a cluster) is refused by its pure validation, as the container's
//   Allocated=False condition and a Warning Event, before anything is written;
// - a deterministic refusal of one container's allocation write by the apiserver (here: an admission
//   policy of the cluster's admins, answering 422) is that container's refusal, and the rest of the
//   batch is allocated; the mutex activity is not retried.
// Meanwhile another tenant's container on the same node, in another namespace, reaches Ready.
import { AdmissionregistrationV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { defaultPayloadConverter } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_GROUP_VERSION, CAPACITY_RULES, type Condition } from '../../src/api/index.js';
import type { ObjectRef } from '../../src/api/names.js';
import { nodeMutexId, type MutexRequest } from '../../src/protocol.js';
import { eventually } from '../support/async.js';
import { warningEvent } from '../support/events.js';
import { createContainerObject, rejection, TEST_IMAGE, WEKA_CONTAINERS } from '../support/containers.js';
import { kubeConfig, removeNodesAdded, uniqueName, uniqueNamespace } from '../support/harness.js';
import {
  createDriveContainer,
  deleteDriveContainer,
  readContainer,
  bareSharedDrivesNode,
  sharedDrivesNode,
  startTestOperator,
  waitForPhase,
  waitGone,
  type ContainerSpecInput,
  type TestOperator,
} from '../support/operator.js';
import { createWekaCluster } from '../support/simulator.js';
import { CREATE_VIOLATIONS } from '../unit/api/rule-violations.js';
import { replyCollector, startMutexWithQueue } from './fixtures/reply-collector-client.js';

let op: TestOperator;
beforeAll(async () => {
  op = await startTestOperator();
});
afterAll(async () => {
  await op?.stop();
  // Their allocations stay on purpose: their ports must not fill the next files' windows.
  await removeNodesAdded();
});

// ---- what the user sees -------------------------------------------------------------------

/** Waits for the container's condition of this type to be False with this reason. */
async function refusal(ref: ObjectRef, type: string, reason: string, timeoutMs = 120_000): Promise<Condition> {
  return eventually(
    `${ref.namespace}/${ref.name}: condition ${type}=False reason ${reason}`,
    async () => {
      const c = (await readContainer(ref))?.status?.conditions?.find((x) => x.type === type);
      return c?.status === 'False' && c.reason === reason ? c : undefined;
    },
    timeoutMs,
    { progress: async () => JSON.stringify((await readContainer(ref))?.status?.conditions ?? []) },
  );
}

const virtualDrives = async (ref: ObjectRef) => (await readContainer(ref))?.status?.allocations?.virtualDrives ?? [];

// ---- (a) refused at admission -------------------------------------------------------------

describe('an impossible request the CRD can tell', () => {
  const create = async (kind: 'WekaContainer' | 'WekaCluster', ns: string, fields: Record<string, unknown>) => {
    const custom = kubeConfig().makeApiClient(CustomObjectsApi);
    const name = uniqueName('impossible');
    if (kind === 'WekaContainer')
      return createContainerObject(kubeConfig(), { namespace: ns, name }, { nodeName: 'weka-node-1', ...fields });
    return custom.createNamespacedCustomObject({
      ...WEKA_CONTAINERS,
      plural: 'wekaclusters',
      namespace: ns,
      body: {
        apiVersion: API_GROUP_VERSION,
        kind,
        metadata: { name },
        spec: {
          image: TEST_IMAGE,
          nodeSelector: { 'weka.io/drive-sharing': 'true' },
          dynamicTemplate: { driveContainers: 3, ...fields },
        },
      },
    });
  };

  it.each([
    {
      what: 'numDrives 300 x driveCapacity 1 (the issue: 300 virtual drives, the status lists at most 256)',
      kind: 'WekaContainer' as const,
      fields: { driveCores: 2, numDrives: 300, driveCapacity: 1 },
      message: /numDrives must be at most 256: a drive container holds at most 256 virtual drives/,
    },
    {
      what: "the same in a WekaCluster's dynamicTemplate",
      kind: 'WekaCluster' as const,
      fields: { driveCores: 2, numDrives: 300, driveCapacity: 1 },
      message: /numDrives must be at most 256/,
    },
    {
      what: 'more virtual drives per drive core than any setting allows (100 on 1 core)',
      kind: 'WekaContainer' as const,
      fields: { driveCores: 1, numDrives: 100, driveCapacity: 400 },
      message: /numDrives must be at most 64 x driveCores/,
    },
    {
      what: 'a virtual drive larger than any NVMe drive (2 PiB)',
      kind: 'WekaContainer' as const,
      fields: { driveCores: 1, numDrives: 1, driveCapacity: 2 * 1024 * 1024 },
      message: /driveCapacity must be at most 1048576 GiB/,
    },
    {
      what: 'more capacity than any node holds (32 PiB)',
      kind: 'WekaContainer' as const,
      fields: { driveCores: 1, containerCapacity: 32 * 1024 * 1024, driveTypesRatio: { tlc: 1, qlc: 0 } },
      message: /containerCapacity must be at most 16777216 GiB/,
    },
    {
      what: 'numDrives x driveCapacity more than any node holds (256 x 1 PiB)',
      kind: 'WekaContainer' as const,
      fields: { driveCores: 32, numDrives: 256, driveCapacity: 1024 * 1024 },
      message: /numDrives x driveCapacity must be at most 16777216 GiB/,
    },
  ])('refuses $what', async ({ kind, fields, message }) => {
    const ns = await uniqueNamespace('impossible-crd');
    const refused = await rejection(create(kind, ns, fields));
    expect(refused.code).toBe(422);
    expect(refused.message).toMatch(message);
  });

  // The manifests test/integration/crds.test.ts sends for these rules, here too.
  const BOUNDS = [
    CAPACITY_RULES.driveCoresAtMost,
    CAPACITY_RULES.numDrivesAtMost,
    CAPACITY_RULES.numDrivesPerDriveCore,
    CAPACITY_RULES.driveCapacityAtMost,
    CAPACITY_RULES.containerCapacityAtMost,
    CAPACITY_RULES.fixedSizeCapacityAtMost,
  ].map((rule): string => rule.message);
  it.each(CREATE_VIOLATIONS.filter((v) => BOUNDS.includes(v.rule.message)).map((v) => [v.kind, v.what, v] as const))(
    'rule-violations.ts %s: %s is refused with its message',
    async (kind, _what, violation) => {
      const ns = await uniqueNamespace('impossible-crd');
      const plural = kind === 'WekaCluster' ? 'wekaclusters' : 'wekacontainers';
      const refused = await rejection(
        kubeConfig()
          .makeApiClient(CustomObjectsApi)
          .createNamespacedCustomObject({ ...WEKA_CONTAINERS, plural, namespace: ns, body: violation.manifest }),
      );
      expect(refused.code).toBe(422);
      expect(refused.message).toContain(violation.rule.message);
    },
  );
});

// ---- (a) refused by the allocator, (b) the other tenant goes on ---------------------------

describe('an impossible request only the allocator can tell', () => {
  it(
    "is refused with a condition and a Warning Event, and another tenant's container on the node reaches Ready",
    { timeout: 420_000 },
    async () => {
      // One TLC and one QLC drive of 50000 GiB each: room for 129 virtual drives of 384 GiB on each.
      const node = await sharedDrivesNode(
        [
          { path: '/dev/nvme0n1', capacityGiB: 50_000, type: 'TLC' },
          { path: '/dev/nvme1n1', capacityGiB: 50_000, type: 'QLC' },
        ],
        'impossible',
      );
      const guid = await createWekaCluster(node, uniqueName('cluster'));
      const [tenantA, tenantB] = [await uniqueNamespace('tenant-a'), await uniqueNamespace('tenant-b')];
      const make = async (namespace: string, name: string, spec: Omit<ContainerSpecInput, 'nodeName'>) => {
        const ref = { namespace, name };
        const { uid } = await createDriveContainer(op, ref, { nodeName: node, ...spec }, guid);
        return { ref, uid };
      };

      // 129 drive cores at tlc 1 : qlc 1, each type needing a drive per core: 258 virtual drives,
      // which the CRD cannot know (the count is the allocator's choice, from the ratio and the
      // operator's settings) and the status cannot list (at most 256). It asks first.
      const tooMany = await make(tenantA, 'too-many-drives', {
        driveCores: 129,
        containerCapacity: 2 * 129 * 384,
        driveTypesRatio: { tlc: 1, qlc: 1 },
      });
      await waitForPhase(tooMany.ref, 'Refused', 120_000);
      // 40 virtual drives on 1 drive core: within what the CRD allows (64 per core for any setting),
      // over the operator's setting (8 per core).
      const perCore = await make(tenantA, 'forty-on-one-core', { driveCores: 1, numDrives: 40, driveCapacity: 400 });
      // Another tenant, another namespace, the same node: the second container.
      const neighbour = await make(tenantB, 'neighbour', { driveCores: 1, numDrives: 1, driveCapacity: 500 });

      const ready = await eventually(
        `${tenantB}/neighbour to reach phase Ready`,
        async () => {
          const c = await readContainer(neighbour.ref);
          return c?.status?.phase === 'Ready' ? c : undefined;
        },
        240_000,
        { progress: async () => `node mutex: ${await pendingDecisions(nodeMutexId(node))}` },
      );
      expect(ready.status?.conditions?.find((c) => c.type === 'Allocated')?.status).toBe('True');
      expect(ready.status?.allocations?.virtualDrives?.map((d) => d.capacityGiB)).toEqual([500]);

      const tooManyCondition = await refusal(tooMany.ref, 'Allocated', 'InvalidDriveSharingConfig');
      expect(tooManyCondition.message).toMatch(
        /driveCores 129 .*258 virtual drives.*at most 256.*lower driveCores or use one drive type/,
      );
      expect(await warningEvent(tooMany.ref, 'InvalidDriveSharingConfig')).toBe(tooManyCondition.message);

      const perCoreCondition = await refusal(perCore.ref, 'Allocated', 'InvalidDriveSharingConfig');
      expect(perCoreCondition.message).toMatch(
        /numDrives 40 asks for 40 virtual drives; at most 8 per drive core \(driveCores 1\) = 8, and never more than 256/,
      );
      expect(await warningEvent(perCore.ref, 'InvalidDriveSharingConfig')).toBe(perCoreCondition.message);

      // Nothing was given to the refused ones, and they wait for a spec change, not for capacity.
      expect(await virtualDrives(tooMany.ref)).toEqual([]);
      expect(await virtualDrives(perCore.ref)).toEqual([]);
      expect((await readContainer(tooMany.ref))?.status?.phase).toBe('Refused');

      for (const c of [tooMany, perCore, neighbour]) await deleteDriveContainer(op, c.ref, c.uid);
      await waitGone([tooMany.ref, perCore.ref, neighbour.ref], 180_000);
    },
  );
});

// ---- (c) a deterministic 4xx on one write of a batch --------------------------------------

const REFUSE_LABEL = 'weka-test/refuse-allocations';
const POLICY_MESSAGE = 'allocations of this container are refused by the cluster admins (test policy)';

/**
 * A ValidatingAdmissionPolicy, as a cluster's admins might deploy, that refuses (422 Invalid) any
 * status of a WekaContainer labelled `REFUSE_LABEL=<value>` that holds allocations. Returns once the
 * apiserver enforces it, and a function that removes it.
 */
async function refuseAllocationsPolicy(value: string): Promise<() => Promise<void>> {
  const admission = kubeConfig().makeApiClient(AdmissionregistrationV1Api);
  const name = uniqueName('refuse-allocations');
  await admission.createValidatingAdmissionPolicy({
    body: {
      metadata: { name },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          resourceRules: [
            {
              apiGroups: ['weka.weka.io'],
              apiVersions: ['v1alpha1'],
              operations: ['UPDATE'],
              resources: ['wekacontainers/status'],
            },
          ],
        },
        validations: [
          {
            expression: '!has(object.status) || !has(object.status.allocations)',
            message: POLICY_MESSAGE,
            reason: 'Invalid',
          },
        ],
      },
    },
  });
  await admission.createValidatingAdmissionPolicyBinding({
    body: {
      metadata: { name },
      spec: {
        policyName: name,
        validationActions: ['Deny'],
        matchResources: { objectSelector: { matchLabels: { [REFUSE_LABEL]: value } } },
      },
    },
  });
  // The apiserver picks the policy up asynchronously: probe with an object of our own.
  const ns = await uniqueNamespace('policy-probe');
  const probe = { namespace: ns, name: 'probe' };
  await createLabelledContainer(
    probe,
    { nodeName: 'no-such-node', driveCores: 1, numDrives: 1, driveCapacity: 1 },
    {
      [REFUSE_LABEL]: value,
    },
  );
  const custom = kubeConfig().makeApiClient(CustomObjectsApi);
  await eventually(
    'the admission policy to be enforced',
    async () => {
      try {
        await custom.patchNamespacedCustomObjectStatus(
          {
            ...WEKA_CONTAINERS,
            ...probe,
            body: {
              apiVersion: API_GROUP_VERSION,
              kind: 'WekaContainer',
              metadata: { name: probe.name },
              status: { allocations: { virtualDrives: [], virtualDriveCount: 0 } },
            },
            fieldManager: 'test-policy-probe',
            force: true,
          },
          setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
        );
        return undefined;
      } catch (err) {
        if ((err as { code?: number }).code === 422) return true;
        throw err;
      }
    },
    60_000,
    { intervalMs: 250 },
  );
  await custom.deleteNamespacedCustomObject({ ...WEKA_CONTAINERS, ...probe });
  return async () => {
    await admission.deleteValidatingAdmissionPolicyBinding({ name });
    await admission.deleteValidatingAdmissionPolicy({ name });
  };
}

async function createLabelledContainer(ref: ObjectRef, spec: object, labels: Record<string, string>): Promise<void> {
  await kubeConfig()
    .makeApiClient(CustomObjectsApi)
    .createNamespacedCustomObject({
      ...WEKA_CONTAINERS,
      namespace: ref.namespace,
      body: {
        apiVersion: API_GROUP_VERSION,
        kind: 'WekaContainer',
        metadata: { name: ref.name, labels },
        spec: { mode: 'drive', image: TEST_IMAGE, ...spec },
      },
    });
}

/** Every attempt of every activity the workflow ran: its type and its attempt number. */
async function activityAttempts(workflowId: string): Promise<{ type: string; attempt: number; items: number }[]> {
  const events = (await op.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const scheduled = new Map<string, { type: string; items: number }>();
  const out: { type: string; attempt: number; items: number }[] = [];
  for (const e of events) {
    const s = e.activityTaskScheduledEventAttributes;
    if (s) {
      const input = defaultPayloadConverter.fromPayload<{ containers?: unknown[]; answers?: unknown[] }>(
        s.input!.payloads![0]!,
      );
      scheduled.set(String(e.eventId), {
        type: s.activityType?.name ?? '',
        items: input.containers?.length ?? input.answers?.length ?? 1,
      });
    }
    const started = e.activityTaskStartedEventAttributes;
    if (started) out.push({ ...scheduled.get(String(started.scheduledEventId))!, attempt: started.attempt ?? 0 });
  }
  return out;
}

/** The mutex's activities that are still being tried: how often, and why the last attempt failed. */
async function pendingDecisions(workflowId: string): Promise<string> {
  const { raw } = await op.client.workflow.getHandle(workflowId).describe();
  const pending = raw.pendingActivities ?? [];
  if (pending.length === 0) return 'no activity pending';
  return pending
    .map((a) => `${a.activityType?.name} attempt ${a.attempt}: ${a.lastFailure?.message ?? 'no failure yet'}`)
    .join('; ');
}

describe('a deterministic apiserver refusal of one allocation write in a batch', () => {
  it(
    'is that container’s refusal (waitForCapacity false), and the others in the batch are allocated',
    { timeout: 180_000 },
    async () => {
      const label = uniqueName('refuse');
      const removePolicy = await refuseAllocationsPolicy(label);
      try {
        const node = await bareSharedDrivesNode('refused-write-node');
        const [tenantA, tenantB] = [await uniqueNamespace('batch-a'), await uniqueNamespace('batch-b')];
        const spec = { nodeName: node, driveCores: 1, containerCapacity: 700, driveTypesRatio: { tlc: 1, qlc: 0 } };
        const first = { namespace: tenantA, name: 'first' };
        const refused = { namespace: tenantB, name: 'refused' };
        const last = { namespace: tenantA, name: 'last' };
        await createContainerObject(kubeConfig(), first, spec);
        await createLabelledContainer(refused, spec, { [REFUSE_LABEL]: label });
        await createContainerObject(kubeConfig(), last, spec);

        const collector = await replyCollector(op);
        const mutexId = nodeMutexId(node);
        const ask = (ref: ObjectRef): MutexRequest => ({
          requestId: `${ref.namespace}-${ref.name}`,
          kind: 'allocate',
          replyTo: collector.workflowId,
          payload: { ...ref, node },
        });
        // All three are queued when the mutex takes its first decision: one batch.
        await startMutexWithQueue(op, node, [first, refused, last].map(ask));
        const answers = await collector.answered(3, 60_000, async () => pendingDecisions(mutexId));
        const byId = new Map(answers.map((a) => [a.requestId, a]));
        expect(byId.get(ask(first).requestId)?.ok).toBe(true);
        expect(byId.get(ask(last).requestId)?.ok).toBe(true);
        const answer = byId.get(ask(refused).requestId);
        expect(answer).toMatchObject({ ok: false, waitForCapacity: false, error: { type: 'AllocationWriteRefused' } });
        expect(answer?.error?.message).toContain(`${tenantB}/refused`);
        expect(answer?.error?.message).toContain('422');
        expect(answer?.error?.message).toContain(POLICY_MESSAGE);

        // What the answers say is what the statuses hold; the refused container holds nothing.
        expect(await virtualDrives(refused)).toEqual([]);
        for (const ref of [first, last]) {
          const held = await virtualDrives(ref);
          expect(held.reduce((s, d) => s + d.capacityGiB, 0)).toBe(700);
          expect(held).toEqual((byId.get(ask(ref).requestId)?.result as { virtualDrives: unknown[] }).virtualDrives);
        }
        // One attempt of one decision: the refusal was an answer, not a failure to retry.
        expect((await activityAttempts(mutexId)).filter((a) => a.type === 'allocateForContainers')).toEqual([
          { type: 'allocateForContainers', attempt: 1, items: 3 },
        ]);
        await collector.stop();
        await op.client.workflow.getHandle(mutexId).terminate('test done');
      } finally {
        await removePolicy();
      }
    },
  );
});
