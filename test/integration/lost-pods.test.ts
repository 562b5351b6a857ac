// A Ready drive container's pod, or its node's ssdproxy pod, that goes away while the container is
// Ready (`kubectl delete pod`, an eviction through the eviction API as `kubectl drain` makes it, a
// kubelet eviction that leaves it Failed) comes back within 60 s on the same ports, and the
// container checks its Weka membership and drives in it before it is Ready again. The watcher and
// the worker run in this process, on the real apiserver and Temporal; kwok removes a pod once it is
// deleted, as a kubelet would, and never brings a Failed one back.
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { proxyName, type ObjectRef } from '../../src/api/names.js';
import { driveDeactivateCall, driveRemoveCall } from '../../src/weka/index.js';
import { POD_PRIORITY_CLASS, POD_PRIORITY_VALUE } from '../../src/manifests/pod-resources.js';
import { eventually } from '../support/async.js';
import { createContainerObject, WEKA_CONTAINERS } from '../support/containers.js';
import { eventsOf } from '../support/events.js';
import { readPod } from '../support/pods.js';
import { kubeConfig, uniqueName, uniqueNamespace } from '../support/harness.js';
import {
  readContainer,
  sharedDrivesNode,
  startWatchedTestOperator,
  waitForPhase,
  waitGone,
  type TestOperator,
} from '../support/operator.js';
import { changeCounts, createWekaCluster, sim, simulatorLog } from '../support/simulator.js';

const DEVICES = [
  { path: '/dev/nvme0n1', capacityGiB: 3840, type: 'TLC' as const },
  { path: '/dev/nvme1n1', capacityGiB: 3840, type: 'TLC' as const },
];
const SPEC = { driveCores: 1, numDrives: 2, driveCapacity: 500 };
/** What the issue promises: the pod is back, and the container Ready on it, within a minute. */
const HEALED_WITHIN_MS = 60_000;

let op: TestOperator;
let core: CoreV1Api;
beforeAll(async () => {
  op = await startWatchedTestOperator();
  core = kubeConfig().makeApiClient(CoreV1Api);
});
afterAll(async () => {
  await op?.stop();
});

/** Waits for a running pod under the name other than `notUid`, not being deleted. */
async function runningPodOtherThan(namespace: string, name: string, notUid: string, timeoutMs: number) {
  return eventually(
    `a new running pod ${namespace}/${name}`,
    async () => {
      const pod = await readPod(namespace, name);
      const fresh = pod && pod.metadata?.uid !== notUid && !pod.metadata?.deletionTimestamp;
      return fresh && pod.status?.phase === 'Running' ? pod : undefined;
    },
    timeoutMs,
  );
}

const envOf = (pod: V1Pod) => Object.fromEntries((pod.spec?.containers[0]?.env ?? []).map((e) => [e.name, e.value]));

/** A drive container as a user creates it; the watcher takes it from there. */
async function readyContainer(prefix: string) {
  const node = await sharedDrivesNode(DEVICES, prefix);
  const guid = await createWekaCluster(node, uniqueName(prefix));
  const ref = { namespace: await uniqueNamespace(prefix), name: 'drive' };
  await createContainerObject(kubeConfig(), ref, { nodeName: node, ...SPEC }, { clusterGUID: guid });
  const ready = await waitForPhase(ref, 'Ready', 90_000);
  const pod = (await readPod(ref.namespace, ref.name))!;
  expect(pod.status?.phase).toBe('Running');
  return { node, ref, ready, pod };
}

/** Once Ready again: the same virtual drives, added once each (the re-check found them in place). */
async function readyAgainWithSameDrives(
  ref: ObjectRef,
  node: string,
  before: NonNullable<Awaited<ReturnType<typeof readContainer>>>,
) {
  const after = await eventually(
    `${ref.name} Ready again`,
    async () => {
      const c = await readContainer(ref);
      const ready = c?.status?.conditions?.find((x) => x.type === 'Ready');
      return c?.status?.phase === 'Ready' && ready?.status === 'True' ? c : undefined;
    },
    HEALED_WITHIN_MS,
  );
  expect(after.status?.allocations?.virtualDrives).toEqual(before.status?.allocations?.virtualDrives);
  expect([...(after.status?.addedVirtualDrives ?? [])].sort()).toEqual(
    [...(before.status?.addedVirtualDrives ?? [])].sort(),
  );
  const signed = changeCounts(await simulatorLog(node), 'virtual-add', 'virtualUUID');
  for (const uuid of before.status?.addedVirtualDrives ?? []) expect(signed.get(uuid)).toBe(1);
  return after;
}

/** The container said its pod was lost (Warning) and that it has it again (Normal). */
async function expectLostAndRecoveredEvents(ref: ObjectRef): Promise<void> {
  const events = await eventually(`${ref.name}: PodLost and PodRecovered Events`, async () => {
    const all = await eventsOf(ref);
    const lost = all.find((e) => e.reason === 'PodLost' && e.type === 'Warning');
    const back = all.find((e) => e.reason === 'PodRecovered' && e.type === 'Normal');
    return lost && back ? { lost, back } : undefined;
  });
  expect(events.lost.message).toMatch(/pod/);
}

async function deleteContainer(ref: ObjectRef): Promise<void> {
  await kubeConfig()
    .makeApiClient(CustomObjectsApi)
    .deleteNamespacedCustomObject({ ...WEKA_CONTAINERS, ...ref });
  await waitGone(ref, 60_000);
}

describe('a Ready container whose pod goes away', () => {
  const losses: Array<[string, (namespace: string, name: string) => Promise<unknown>]> = [
    ['is deleted (kubectl delete pod)', (namespace, name) => core.deleteNamespacedPod({ namespace, name })],
    [
      'is evicted through the eviction API (kubectl drain)',
      (namespace, name) =>
        core.createNamespacedPodEviction({
          namespace,
          name,
          body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace } },
        }),
    ],
    [
      'ends Failed (a kubelet eviction)',
      (namespace, name) =>
        core.patchNamespacedPodStatus(
          { namespace, name, body: { status: { phase: 'Failed', reason: 'Evicted', message: 'low on memory' } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        ),
    ],
  ];

  for (const [how, lose] of losses) {
    it(`gets it back on the same ports with the same virtual drives when it ${how}`, async () => {
      const { node, ref, ready, pod } = await readyContainer('lost-pod');
      await lose(ref.namespace, ref.name);
      const again = await runningPodOtherThan(ref.namespace, ref.name, pod.metadata!.uid!, HEALED_WITHIN_MS);
      expect(envOf(again)).toEqual(envOf(pod));
      await readyAgainWithSameDrives(ref, node, ready);
      await expectLostAndRecoveredEvents(ref);
      await deleteContainer(ref);
    });
  }

  it('adds again, once the pod is back, a drive the Weka cluster lost meanwhile', async () => {
    const { node, ref, ready, pod } = await readyContainer('lost-pod-drive');
    const [gone] = ready.status?.addedDrives ?? [];
    expect(gone?.virtualUUID).toBeDefined();
    await sim(node, '--', ...driveDeactivateCall(gone!.uuid).argv);
    await sim(node, '--', ...driveRemoveCall(gone!.uuid).argv);
    await core.deleteNamespacedPod({ namespace: ref.namespace, name: ref.name });
    await runningPodOtherThan(ref.namespace, ref.name, pod.metadata!.uid!, HEALED_WITHIN_MS);
    const after = await eventually(
      `${ref.name} Ready with its drive added again`,
      async () => {
        const c = await readContainer(ref);
        const adds = changeCounts(await simulatorLog(node), 'drive-add', 'virtualUUID').get(gone!.virtualUUID!);
        return c?.status?.phase === 'Ready' && adds === 2 ? c : undefined;
      },
      HEALED_WITHIN_MS,
    );
    expect(after.status?.addedVirtualDrives).toContain(gone!.virtualUUID);
    await deleteContainer(ref);
  });

  it("gets its node's ssdproxy pod back when that is deleted, and is Ready on it", async () => {
    const { node, ref, ready } = await readyContainer('lost-proxy');
    const proxy = (await readPod(op.operatorNamespace, proxyName(node)))!;
    await core.deleteNamespacedPod({ namespace: op.operatorNamespace, name: proxyName(node) });
    await runningPodOtherThan(op.operatorNamespace, proxyName(node), proxy.metadata!.uid!, HEALED_WITHIN_MS);
    await readyAgainWithSameDrives(ref, node, ready);
    await expectLostAndRecoveredEvents(ref);
    await deleteContainer(ref);
  });
});

describe("a Ready container's pods", () => {
  it('are never BestEffort, the first the kubelet evicts, and run with the priority class the chart makes', async () => {
    const { node, ref, pod } = await readyContainer('pod-qos');
    const proxy = (await readPod(op.operatorNamespace, proxyName(node)))!;
    // The drive container's pod: every request equals its limit, so it is Guaranteed.
    expect(pod.status?.qosClass).toBe('Guaranteed');
    expect(pod.spec?.containers[0]?.resources?.requests).toMatchObject({
      cpu: '3',
      memory: '12400Mi',
      'hugepages-2Mi': '1800Mi',
    });
    // The ssdproxy asks for little and may use more, as the reference's does.
    expect(proxy.status?.qosClass).toBe('Burstable');
    for (const p of [pod, proxy]) {
      expect(p.spec?.priorityClassName).toBe(POD_PRIORITY_CLASS);
      expect(p.spec?.priority).toBe(POD_PRIORITY_VALUE);
    }
    await deleteContainer(ref);
  });
});
