// The faults users meet, each a class the chaos engine draws from and counts. Every fault heals
// itself before its promise resolves (the engine checks the system after the storm it was part
// of), and every one stays on loopback: the servers are this machine's, the partitions are cuts of
// TCP proxies on 127.0.0.1.
import { CoreV1Api, PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { simulate } from '../../deploy/local/shared-drives.js';
import { sleep } from '../support/async.js';
import type { Random } from '../support/random.js';
import {
  deleteNamespaceWithContainers,
  reregisterNode,
  sendStrayRequests,
  terminateWorkflows,
} from './everyday-faults.js';
import { deleteDeviceSetClaim } from './device-set-faults.js';
import { cleanStaleDrives } from './stale-faults.js';
import { rotateProxy } from './proxy-faults.js';
import { blockDrive } from './block-faults.js';
import { recreateWekaClusterByName, removeFinalizerMidTeardown, resetWorkflows } from './forced-faults.js';
import type { ChaosWorld, ReplicaSlot } from './world.js';

export const FAULT_CLASSES = [
  'replica-killed',
  'rolling-replacement',
  'node-down',
  'pod-evicted',
  'pod-deleted',
  'node-drained',
  'apiserver-restart',
  'etcd-restart-compacted',
  'apiserver-cut',
  'temporal-cut',
  'slow-network',
  'temporal-sigkill',
  'weka-tool-failures',
  'node-reregistered',
  'stray-requests',
  'namespace-deleted',
  'workflows-terminated',
  'finalizer-removed',
  'cluster-recreated',
  'workflows-reset',
  'device-claim-deleted',
  'stale-cleanup',
  'proxy-rotated',
  'drive-blocked',
] as const;
export type FaultClass = (typeof FAULT_CLASSES)[number];

/** The short profile (npm test) keeps each fault brief; the long one lets them last. */
export type FaultPace = 'short' | 'long';

/** How long each kind of fault lasts, in ms, by pace. A cut always lasts over a minute, so that the node mutex's one-minute give-up runs. */
const DURATIONS: Record<
  FaultPace,
  Record<'processDown' | 'nodeDown' | 'cut' | 'slow' | 'toolFailures', [number, number]>
> = {
  short: {
    processDown: [500, 3_000],
    nodeDown: [15_000, 30_000],
    cut: [61_000, 65_000],
    slow: [10_000, 20_000],
    toolFailures: [10_000, 20_000],
  },
  long: {
    processDown: [500, 10_000],
    nodeDown: [15_000, 70_000],
    cut: [61_000, 80_000],
    slow: [20_000, 60_000],
    toolFailures: [15_000, 45_000],
  },
};

/** Injects one fault of the class, waits it out, heals it; returns what was done, for the log. */
export async function injectFault(
  fault: FaultClass,
  world: ChaosWorld,
  random: Random,
  pace: FaultPace,
): Promise<string> {
  const lasting = (what: keyof (typeof DURATIONS)['short']) => random.int(...DURATIONS[pace][what]);
  const replica = (): ReplicaSlot => world.replicas[random.int(0, world.replicas.length - 1)]!;
  const someReplicas = (): ReplicaSlot[] => (random.next() < 0.5 ? [replica()] : world.replicas);
  switch (fault) {
    case 'replica-killed': {
      const r = replica();
      const downMs = lasting('processDown');
      await r.kill();
      await sleep(downMs);
      await r.start();
      return `SIGKILLed replica ${r.name}, started again after ${downMs} ms`;
    }
    case 'rolling-replacement': {
      for (const r of world.replicas) await r.replace();
      return 'replaced both replicas one at a time (new one ready, then SIGTERM to the old one)';
    }
    case 'node-down': {
      const node = world.nodes[random.int(0, world.nodes.length - 1)]!;
      const downMs = lasting('nodeDown');
      await world.cp.stopNodeKubelet(node, { markNotReady: true });
      await sleep(downMs);
      await world.cp.startNodeKubelet(node);
      return `killed node ${node}'s kwok, its Node NotReady for ${downMs} ms, then back`;
    }
    case 'pod-evicted': {
      const evicted = await evictPods(world, random, random.int(1, 3));
      return `evicted ${evicted.length} pods (phase Failed, reason Evicted): ${evicted.join(', ')}`;
    }
    case 'pod-deleted': {
      // As a person does it (kubectl delete pod) or a drain (the eviction API), for pods of Ready
      // containers and proxies alike; the operator must make each again.
      const how = random.next() < 0.5 ? 'delete' : 'evict';
      const gone = await removePods(world, random, random.int(1, 3), how);
      return `${how === 'delete' ? 'deleted' : 'evicted through the eviction API'} ${gone.length} pods: ${gone.join(', ')}`;
    }
    case 'node-drained': {
      // kubectl drain NODE --force --ignore-daemonsets: cordon, then evict every pod of the
      // operator's on the node (a budget's 429 is tried again, as drain does), then uncordon.
      const node = world.nodes[random.int(0, world.nodes.length - 1)]!;
      const core = world.cp.kubeConfig().makeApiClient(CoreV1Api);
      const cordon = (unschedulable: boolean) =>
        core.patchNode(
          { name: node, body: { spec: { unschedulable } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
      await cordon(true);
      const drainedMs = lasting('nodeDown');
      const started = Date.now();
      let evicted = 0;
      while (Date.now() - started < drainedMs) {
        const left = (await operatorPods(world)).filter(
          (p) => p.spec?.nodeName === node && !p.metadata?.deletionTimestamp,
        );
        for (const pod of left) if ((await evict(core, pod)) === 201) evicted++;
        await sleep(2_000);
      }
      await cordon(false);
      return `drained node ${node} for ${drainedMs} ms (${evicted} evictions), then uncordoned it`;
    }
    case 'apiserver-restart': {
      const { downMs } = await world.cp.restartApiserver();
      return `restarted the apiserver (${downMs} ms down)`;
    }
    case 'etcd-restart-compacted': {
      const before = world.watchExpiries();
      // restartEtcd({ compact }) restarts the apiserver too, so its watch caches start over at the
      // compacted revision and a watch resuming from an older resourceVersion is told 410 Gone.
      const result = await world.cp.restartEtcd({ compact: true });
      return `compacted etcd at revision ${result.compactedRevision}, restarted etcd and the apiserver (${result.downMs} ms down); watches told 410 so far: ${before}`;
    }
    case 'apiserver-cut':
    case 'temporal-cut': {
      const which = someReplicas();
      const mode = random.next() < 0.5 ? 'reset' : 'blackhole';
      const cutMs = lasting('cut');
      const proxies = which.map((r) => (fault === 'apiserver-cut' ? r.apiProxy : r.temporalProxy));
      for (const p of proxies) p.cut(mode);
      await sleep(cutMs);
      for (const p of proxies) p.heal();
      const server = fault === 'apiserver-cut' ? 'the apiserver' : 'Temporal';
      return `cut (${mode}) ${server} from replica ${which.map((r) => r.name).join(' and ')} for ${cutMs} ms`;
    }
    case 'slow-network': {
      const latencyMs = random.int(50, 400);
      const forMs = lasting('slow');
      const proxies = world.replicas.flatMap((r) => [r.apiProxy, r.temporalProxy]);
      for (const p of proxies) p.setLatencyMs(latencyMs);
      await sleep(forMs);
      for (const p of proxies) p.setLatencyMs(0);
      return `slowed the apiserver and Temporal by ${latencyMs} ms per chunk for ${forMs} ms`;
    }
    case 'temporal-sigkill': {
      const downMs = lasting('processDown');
      await world.cp.killTemporal();
      await sleep(downMs);
      await world.cp.startTemporal();
      return `SIGKILLed Temporal, started it again after ${downMs} ms`;
    }
    case 'weka-tool-failures': {
      const node = world.nodes[random.int(0, world.nodes.length - 1)]!;
      const forMs = lasting('toolFailures');
      const seed = random.int(1, 1_000_000);
      await simulate(
        world.cp.simulatorRoot,
        node,
        'faults',
        '--fail-rate',
        '0.15',
        '--fail-after-effect-rate',
        '0.1',
        '--seed',
        String(seed),
      );
      await sleep(forMs);
      await simulate(world.cp.simulatorRoot, node, 'faults', '--clear');
      return `failed 15 % of node ${node}'s Weka commands (10 % after their effect) for ${forMs} ms`;
    }
    case 'node-reregistered':
      return reregisterNode(world, random);
    case 'stray-requests':
      return sendStrayRequests(world, random);
    case 'namespace-deleted':
      return deleteNamespaceWithContainers(world, random);
    case 'workflows-terminated':
      return terminateWorkflows(world, random);
    case 'finalizer-removed':
      return removeFinalizerMidTeardown(world, random);
    case 'cluster-recreated':
      return recreateWekaClusterByName(world, random);
    case 'workflows-reset':
      return resetWorkflows(world, random);
    case 'device-claim-deleted':
      return deleteDeviceSetClaim(world, random);
    case 'stale-cleanup':
      return cleanStaleDrives(world, random);
    case 'proxy-rotated':
      return rotateProxy(world, random);
    case 'drive-blocked':
      return blockDrive(world, random);
  }
}

/** Every pod of the chaos namespaces and the operator's (drive containers' and ssdproxies'). */
async function operatorPods(world: ChaosWorld): Promise<V1Pod[]> {
  const core = world.cp.kubeConfig().makeApiClient(CoreV1Api);
  const lists = await Promise.all(
    [...world.namespaces, world.operatorNamespace].map(
      async (namespace) => (await core.listNamespacedPod({ namespace })).items,
    ),
  );
  return lists.flat();
}

const running = (p: V1Pod) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp;

/** The eviction API's answer for the pod: 201, or 429 while a disruption budget holds it. */
async function evict(core: CoreV1Api, pod: V1Pod): Promise<number> {
  const { name, namespace } = pod.metadata as { name: string; namespace: string };
  return core
    .createNamespacedPodEviction({
      name,
      namespace,
      body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace } },
    })
    .then(
      () => 201,
      (err: { code?: number }) => err.code ?? 0,
    );
}

/**
 * Deletes or evicts running pods, waits until each is gone (20 s at most), then 2 s more: the
 * operator, told by its pod watch, has taken Ready away from their containers by then, so the
 * engine's settle waits for them. A container it is never told about stays Ready with no pod,
 * which the steady-state check reports.
 */
async function removePods(
  world: ChaosWorld,
  random: Random,
  count: number,
  how: 'delete' | 'evict',
): Promise<string[]> {
  const core = world.cp.kubeConfig().makeApiClient(CoreV1Api);
  const candidates = (await operatorPods(world)).filter(running);
  const chosen = random.sample(candidates, Math.min(count, candidates.length));
  const refused = new Set<V1Pod>();
  for (const pod of chosen) {
    const { name, namespace } = pod.metadata as { name: string; namespace: string };
    if (how === 'delete') await core.deleteNamespacedPod({ name, namespace }).catch(() => undefined);
    // A budget's 429: a cluster's member while another is away, a proxy while drive pods run by it.
    else if ((await evict(core, pod)) === 429) refused.add(pod);
  }
  const uids = new Set(chosen.filter((p) => !refused.has(p)).map((p) => p.metadata?.uid));
  const started = Date.now();
  while (Date.now() - started < 20_000) {
    const now = await operatorPods(world);
    const stillOld = now.some((p) => uids.has(p.metadata?.uid) && running(p));
    if (!stillOld) break;
    await sleep(500);
  }
  await sleep(2_000);
  return chosen.map(
    (p) => `${p.metadata!.namespace}/${p.metadata!.name}${refused.has(p) ? ' (429: held by a budget)' : ''}`,
  );
}

/**
 * Puts running pods of the chaos namespaces (drive containers' and ssdproxies') in phase Failed, as
 * a kubelet's eviction does, then waits until the operator has replaced each (20 s at most), and
 * 2 s more, as removePods does: a container is Ready again only once its new pod runs, and one
 * whose pod it never replaces stays Ready with no pod, which the steady-state check reports.
 */
async function evictPods(world: ChaosWorld, random: Random, count: number): Promise<string[]> {
  const core = world.cp.kubeConfig().makeApiClient(CoreV1Api);
  const pods = (await operatorPods(world)).filter(running);
  const chosen = random.sample(pods, Math.min(count, pods.length));
  for (const pod of chosen) {
    await core
      .patchNamespacedPodStatus(
        {
          namespace: pod.metadata!.namespace!,
          name: pod.metadata!.name!,
          body: { status: { phase: 'Failed', reason: 'Evicted', message: 'The node was low on resource: chaos.' } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      )
      .catch(() => undefined);
  }
  const uids = new Set(chosen.map((p) => p.metadata?.uid));
  const started = Date.now();
  while (Date.now() - started < 20_000) {
    if (!(await operatorPods(world)).some((p) => uids.has(p.metadata?.uid))) break;
    await sleep(500);
  }
  await sleep(2_000);
  return chosen.map((p) => `${p.metadata!.namespace}/${p.metadata!.name}`);
}
