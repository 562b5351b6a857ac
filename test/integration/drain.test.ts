// `kubectl drain` of a drive-sharing node, as the eviction API serves it: a WekaCluster's
// PodDisruptionBudget lets evictions take one of its members at a time, a member whose pod was
// evicted from a cordoned node waits for the node to be uncordoned (no pod is made on a node being
// drained), and then gets its pod back and is Ready again. The watcher and the worker run in this
// process; the control plane runs Kubernetes' disruption controller, which keeps the budget's status.
import { CoreV1Api, CustomObjectsApi, PolicyV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WekaContainer } from '../../src/api/index.js';
import { disruptionBudgetName } from '../../src/manifests/disruption-budget.js';
import { proxyName } from '../../src/api/names.js';
import { proxyGuardName } from '../../src/operator/proxy-drain-guard.js';
import { clusterWorkflowId } from '../../src/protocol.js';
import { eventually, sleep } from '../support/async.js';
import { POOL_LABEL, readCluster, SMALL_MEMBER, WEKA_CLUSTERS } from '../support/clusters.js';
import { createContainerObject, createWekaClusterObject, WEKA_CONTAINERS } from '../support/containers.js';
import { evictPod } from '../support/pods.js';
import { listContainers } from '../support/containers.js';
import { kubeConfig, uniqueName, uniqueNamespace } from '../support/harness.js';
import {
  podExists,
  readContainer,
  sharedDrivesNode,
  startWatchedTestOperator,
  waitGone,
  type TestOperator,
} from '../support/operator.js';
import { createWekaCluster as createSimulatedWekaCluster } from '../support/simulator.js';

const DEVICES = [
  { path: '/dev/nvme0n1', capacityGiB: 7680, type: 'TLC' as const },
  { path: '/dev/nvme1n1', capacityGiB: 30720, type: 'QLC' as const },
];
/** A standalone drive container (no WekaCluster, so no budget of its own). */
const STANDALONE = { driveCores: 1, numDrives: 2, driveCapacity: 1000 };
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

let op: TestOperator;
let core: CoreV1Api;
let policy: PolicyV1Api;
beforeAll(async () => {
  op = await startWatchedTestOperator();
  core = kubeConfig().makeApiClient(CoreV1Api);
  policy = kubeConfig().makeApiClient(PolicyV1Api);
});
afterAll(async () => {
  await op?.stop();
});

const cordon = (node: string, unschedulable: boolean) =>
  core.patchNode({ name: node, body: { spec: { unschedulable } } }, mergePatch);

const readyCondition = (c: WekaContainer | null) => c?.status?.conditions?.find((x) => x.type === 'Ready');

async function readyAgain(namespace: string, name: string, timeoutMs = 60_000): Promise<void> {
  await eventually(
    `${name} Ready again with a running pod`,
    async () => {
      const c = await readContainer({ namespace, name });
      const pod = await core.readNamespacedPod({ namespace, name }).catch(() => null);
      return c?.status?.phase === 'Ready' && readyCondition(c)?.status === 'True' && pod?.status?.phase === 'Running'
        ? true
        : undefined;
    },
    timeoutMs,
  );
}

describe('draining a node that runs WekaCluster members', () => {
  it(
    'takes one member at a time, keeps the drained node empty, and heals each once its node is uncordoned',
    { timeout: 300_000 },
    async () => {
      const pool = uniqueName('drain');
      const nodes = await Promise.all([0, 1].map(() => sharedDrivesNode(DEVICES, 'drain', { [POOL_LABEL]: pool })));
      const ns = await uniqueNamespace('drain');
      const ref = { namespace: ns, name: 'stores' };
      // Started by the watcher, as a user's cluster is.
      const uid = await createWekaClusterObject(
        kubeConfig(),
        ref,
        { [POOL_LABEL]: pool },
        { driveContainers: 2, ...SMALL_MEMBER },
      );
      const handle = op.client.workflow.getHandle(clusterWorkflowId(uid));
      await eventually(
        'the cluster Ready',
        async () => (await readCluster(ns, ref.name))?.status?.phase === 'Ready' || undefined,
        240_000,
      );

      // Its budget: every member but one, owned by the cluster, selecting this cluster's members only.
      const name = disruptionBudgetName(ref.name);
      const budget = await eventually('the budget to count both members', async () => {
        const b = await policy.readNamespacedPodDisruptionBudget({ namespace: ns, name });
        return b.status?.currentHealthy === 2 && b.status.disruptionsAllowed === 1 ? b : undefined;
      });
      expect(budget.spec?.minAvailable).toBe(1);
      expect(budget.metadata?.ownerReferences?.map((o) => o.uid)).toEqual([uid]);

      const members = await listContainers(kubeConfig(), ns, { fieldSelector: `spec.cluster=${ref.name}` });
      const [first, second] = nodes.map((node) => members.find((m) => m.spec.nodeName === node)!);
      // kubectl drain: cordon, then evict every pod on the node.
      await cordon(nodes[0]!, true);
      expect(await evictPod(ns, first!.metadata.name!)).toBe(201);
      // The other member's pod is held by the budget while the first is away.
      expect(await evictPod(ns, second!.metadata.name!)).toBe(429);

      // The evicted member says so, and no pod is made on the cordoned node.
      await eventually(`${first!.metadata.name} not Ready: PodLost`, async () => {
        const c = await readContainer({ namespace: ns, name: first!.metadata.name! });
        return readyCondition(c)?.reason === 'PodLost' && readyCondition(c)?.status === 'False' ? true : undefined;
      });
      await eventually(`${first!.metadata.name}: PodScheduled=False while its node is cordoned`, async () => {
        const c = await readContainer({ namespace: ns, name: first!.metadata.name! });
        const scheduled = c?.status?.conditions?.find((x) => x.type === 'PodScheduled');
        return scheduled?.status === 'False' && /cordoned/.test(scheduled.message ?? '') ? true : undefined;
      });
      await sleep(3_000);
      expect(await podExists(ns, first!.metadata.name!)).toBe(false);
      await eventually('the cluster not Ready while a member is away', async () => {
        const c = await readCluster(ns, ref.name);
        const ready = c?.status?.conditions?.find((x) => x.type === 'Ready');
        return c?.status?.phase !== 'Ready' && ready?.status === 'False' ? true : undefined;
      });

      // Uncordoned: the member gets its pod back and is Ready; then the other may go.
      await cordon(nodes[0]!, false);
      await readyAgain(ns, first!.metadata.name!);
      await eventually(
        `the budget to let ${second!.metadata.name} go`,
        async () => ((await evictPod(ns, second!.metadata.name!)) === 201 ? true : undefined),
        60_000,
      );
      await readyAgain(ns, second!.metadata.name!);

      await kubeConfig()
        .makeApiClient(CustomObjectsApi)
        .deleteNamespacedCustomObject({ ...WEKA_CLUSTERS, namespace: ns, name: ref.name });
      await handle.result();
      // Owned by the cluster: Kubernetes' garbage collector takes the budget with it.
      await eventually('the budget gone with its cluster', async () =>
        (await policy.readNamespacedPodDisruptionBudget({ namespace: ns, name }).catch(() => null)) === null
          ? true
          : undefined,
      );
    },
  );
});

describe("draining a node's ssdproxy", () => {
  it(
    'takes it only after the drive containers on its node, and brings both back on uncordon',
    { timeout: 240_000 },
    async () => {
      const node = await sharedDrivesNode(DEVICES, 'drain-proxy');
      const guid = await createSimulatedWekaCluster(node, uniqueName('drain-proxy'));
      const ref = { namespace: await uniqueNamespace('drain-proxy'), name: 'drive' };
      await createContainerObject(kubeConfig(), ref, { nodeName: node, ...STANDALONE }, { clusterGUID: guid });
      await readyAgain(ref.namespace, ref.name, 120_000);
      const before = await readContainer(ref);
      const proxy = proxyName(node);

      // kubectl drain: cordon, then evict every pod on the node; the proxy's eviction is refused
      // while the drive container's pod is there (the eviction API's 429, which drain retries).
      await cordon(node, true);
      await eventually('the proxy held against evictions', async () =>
        (await evictPod(op.operatorNamespace, proxy, { dryRun: true })) === 429 ? true : undefined,
      );
      expect(await podExists(op.operatorNamespace, proxy)).toBe(true);
      expect(await evictPod(ref.namespace, ref.name)).toBe(201);
      await eventually(
        'the proxy let go once no drive pod is on the node',
        async () => ((await evictPod(op.operatorNamespace, proxy)) === 201 ? true : undefined),
        30_000,
        { intervalMs: 1_000 },
      );
      await eventually('the proxy pod gone', async () =>
        (await podExists(op.operatorNamespace, proxy)) ? undefined : true,
      );

      await cordon(node, false);
      await readyAgain(ref.namespace, ref.name);
      const after = await readContainer(ref);
      expect(after?.status?.allocations?.virtualDrives).toEqual(before?.status?.allocations?.virtualDrives);
      // Held again now that the drive container runs on the node.
      // Probed without evicting: a probe that evicts while the guard is not there yet takes the
      // proxy pod away again, and again, under a loaded machine.
      await eventually('the proxy held again', async () =>
        (await evictPod(op.operatorNamespace, proxy, { dryRun: true })) === 429 ? true : undefined,
      );

      await kubeConfig()
        .makeApiClient(CustomObjectsApi)
        .deleteNamespacedCustomObject({ ...WEKA_CONTAINERS, ...ref });
      await waitGone(ref, 60_000);
      // The proxy goes with the node's last container, and its guard with it.
      await eventually('the guard gone', async () =>
        (await policy
          .readNamespacedPodDisruptionBudget({ namespace: op.operatorNamespace, name: proxyGuardName(node) })
          .catch(() => null)) === null
          ? true
          : undefined,
      );
    },
  );
});
