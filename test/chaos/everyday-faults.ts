// Faults of the everyday kind that come from people rather than from machines: a Node deleted and
// registered again under its name, stray or forged signals from anyone who may signal the
// operator's Temporal namespace, a namespace deleted with its drive containers in it, and
// lifecycle workflows terminated from the Temporal UI. Like every fault, each is over before its
// promise resolves.
import { CoreV1Api } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { SHARED_DRIVES_ANNOTATION } from '../../src/annotations/index.js';
import type { WekaContainer } from '../../src/api/index.js';
import { proxyName } from '../../src/api/names.js';
import {
  CLUSTER_PORTS_MUTEX_ID,
  containerWorkflowId,
  deleteRequestedSignal,
  mutexRequestSignal,
  mutexResponseSignal,
  mutexStateQuery,
  nodeMutexId,
  podLostSignal,
  type MutexRequest,
} from '../../src/protocol.js';
import { eventually, sleep } from '../support/async.js';
import {
  createContainerObject,
  ensureNamespace,
  listContainers,
  listWekaClusters,
  phaseSummary,
} from '../support/containers.js';
import { deleteNamespace } from './forced-faults.js';
import { SMALL_CONTAINER } from './pressure.js';
import type { Random } from '../support/random.js';
import type { ChaosWorld } from './world.js';

/**
 * Deletes a node's Node object and registers it again under its name, as a replaced VM or a
 * kubelet that registers anew does: its labels come back, and of its annotations only the
 * shared-drives list (which whoever provisions the node puts back); the operator's ledger and
 * everything else it wrote are gone. Its kwok takes the new object over.
 */
export async function reregisterNode(world: ChaosWorld, random: Random): Promise<string> {
  const core = world.cp.kubeConfig().makeApiClient(CoreV1Api);
  const name = world.nodes[random.int(0, world.nodes.length - 1)]!;
  const old = await core.readNode({ name });
  const shared = old.metadata?.annotations?.[SHARED_DRIVES_ANNOTATION];
  const proxy = { namespace: world.operatorNamespace, name: proxyName(name) };
  const proxyPod = await core.readNamespacedPod(proxy).catch(() => undefined);
  await core.deleteNode({ name });
  await eventually(`node ${name} to be deleted`, async () =>
    (await core.readNode({ name }).then(
      () => false,
      () => true,
    ))
      ? true
      : undefined,
  );
  await core.createNode({
    body: {
      metadata: {
        name,
        labels: old.metadata?.labels ?? {},
        annotations: {
          'kwok.x-k8s.io/node': 'fake',
          ...(shared === undefined ? {} : { [SHARED_DRIVES_ANNOTATION]: shared }),
        },
      },
    },
  });
  await eventually(`node ${name} to be Ready again`, async () => {
    const n = await core.readNode({ name });
    return n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? true : undefined;
  });
  // The garbage collector deletes the node's proxy with the old Node object, its owner: once it
  // is gone, and 2 s more, the operator (told by its pod watch) has taken Ready away from the
  // containers there, so the engine's settle waits for them, as after a deleted pod.
  const started = Date.now();
  while (proxyPod && Date.now() - started < 60_000) {
    const now = await core.readNamespacedPod(proxy).catch(() => undefined);
    if (now?.metadata?.uid !== proxyPod.metadata?.uid) break;
    await sleep(500);
  }
  await sleep(2_000);
  return `deleted node ${name} and registered it again (its shared-drives annotation put back, its ledger gone)`;
}

const STRANGER = 'chaos-stranger';

/**
 * Signals as a stranger with access to the operator's Temporal namespace could send them, each
 * aimed at something live: a release of a live container's uid under a made-up name, a release of
 * a live WekaCluster's ports, a forged answer to every allocation a node mutex has queued, a
 * deleteRequested to a live container, a podLost to a Ready one. None may free, take or tear down
 * anything.
 */
export async function sendStrayRequests(world: ChaosWorld, random: Random): Promise<string> {
  const connection = await Connection.connect({ address: world.cp.temporalAddress });
  const client = new Client({ connection, namespace: world.cp.temporalNamespace });
  const kc = world.cp.kubeConfig();
  const sent: string[] = [];
  /** A signal to a workflow that may have ended meanwhile: then nobody was there to hear it. */
  const signal = async (what: string, send: () => Promise<void>) => {
    if (
      await send().then(
        () => true,
        () => false,
      )
    )
      sent.push(what);
  };
  try {
    const containers = (await Promise.all(world.namespaces.map((ns) => listContainers(kc, ns)))).flat();
    const live = containers.filter((c) => !c.metadata.deletionTimestamp && c.spec.nodeName && c.metadata.uid);
    const pick = (from: WekaContainer[], n: number) => random.sample(from, Math.min(n, from.length));
    const request = (kind: MutexRequest['kind'], payload: MutexRequest['payload']): MutexRequest => ({
      requestId: `${STRANGER}-${random.int(1, 1_000_000_000)}`,
      kind,
      replyTo: STRANGER,
      payload,
    });
    for (const c of pick(live, 2)) {
      const node = c.spec.nodeName!;
      const payload = {
        namespace: c.metadata.namespace!,
        name: `made-up-${random.int(1, 9999)}`,
        node,
        uid: c.metadata.uid!,
      };
      await signal(`release of ${c.metadata.namespace}/${c.metadata.name}'s uid under another name`, () =>
        client.workflow.getHandle(nodeMutexId(node)).signal(mutexRequestSignal, request('release', payload)),
      );
    }
    const clusters = (await Promise.all(world.namespaces.map((ns) => listWekaClusters(kc, ns)))).flat();
    for (const w of random.sample(clusters, Math.min(1, clusters.length))) {
      const { namespace, name, uid } = w.metadata as { namespace: string; name: string; uid: string };
      await signal(`release-cluster-ports of WekaCluster ${namespace}/${name}`, () =>
        client.workflow
          .getHandle(CLUSTER_PORTS_MUTEX_ID)
          .signal(mutexRequestSignal, request('release-cluster-ports', { namespace, name, uid })),
      );
    }
    for (const node of world.nodes) {
      const state = await client.workflow
        .getHandle(nodeMutexId(node))
        .query(mutexStateQuery)
        .catch(() => undefined);
      for (const asked of [...(state?.running ?? []), ...(state?.queue ?? [])].filter((r) => r.kind === 'allocate')) {
        const forged = {
          virtualDrives: [
            {
              virtualUUID: crypto.randomUUID(),
              physicalUUID: crypto.randomUUID(),
              capacityGiB: 384,
              serial: 'FORGED',
              type: 'TLC',
            },
          ],
          wekaPort: 14000,
          agentPort: 14100,
        };
        await signal(`a forged allocation answer to ${asked.replyTo}`, () =>
          client.workflow
            .getHandle(asked.replyTo)
            .signal(mutexResponseSignal, { requestId: asked.requestId, kind: 'allocate', ok: true, result: forged }),
        );
      }
    }
    for (const c of pick(live, 1))
      await signal(`deleteRequested to live ${c.metadata.namespace}/${c.metadata.name}`, () =>
        client.workflow.getHandle(containerWorkflowId(c.metadata.uid!)).signal(deleteRequestedSignal),
      );
    for (const c of pick(
      live.filter((x) => x.status?.phase === 'Ready'),
      2,
    ))
      await signal(`podLost to Ready ${c.metadata.namespace}/${c.metadata.name}`, () =>
        client.workflow.getHandle(containerWorkflowId(c.metadata.uid!)).signal(podLostSignal),
      );
  } finally {
    await connection.close();
  }
  return `sent ${sent.length} stray signals: ${sent.join('; ')}`;
}

/**
 * `kubectl delete namespace` of a tenant's namespace with drive containers in it: a namespace of
 * its own gets one to three small containers on random nodes (with the run's nodes full, some
 * wait for capacity, some are allocated, signing or Ready when the deletion comes), and the fault
 * ends once the namespace is gone. Nothing can be created in a namespace being deleted, so every
 * teardown must end without making a pod or an Event there; what they held is checked with the
 * rest (ledgers, devices, the Weka cluster) at the next calm.
 */
export async function deleteNamespaceWithContainers(world: ChaosWorld, random: Random): Promise<string> {
  const kc = world.cp.kubeConfig();
  const namespace = `chaos-doomed-${random.int(1, 1_000_000_000)}`;
  await ensureNamespace(kc, namespace);
  const count = random.int(1, 3);
  for (let i = 0; i < count; i++) {
    const node = world.nodes[random.int(0, world.nodes.length - 1)]!;
    await createContainerObject(
      kc,
      { namespace, name: `doomed-${i}` },
      { ...SMALL_CONTAINER, nodeName: node },
      {
        clusterGUID: world.clusterGUIDs[random.int(0, world.clusterGUIDs.length - 1)]!,
        simulatorRoot: world.cp.simulatorRoot,
      },
    );
  }
  await sleep(random.int(5_000, 45_000));
  const states = phaseSummary(await listContainers(kc, namespace));
  const started = Date.now();
  await deleteNamespace(world, namespace);
  return `deleted namespace ${namespace} with ${count} drive containers (${states}); gone after ${Date.now() - started} ms`;
}

/**
 * `temporal workflow terminate` (or Terminate in the UI) of the lifecycle workflows of one to three
 * live drive containers, in whatever step they are, and half the time of a node's mutex or the
 * cluster ports' one. The watcher must start each lifecycle again, and the new run take over from
 * the object's status and the node's ledger without losing or giving anything twice; a mutex is
 * started again by the next request sent to it.
 */
export async function terminateWorkflows(world: ChaosWorld, random: Random): Promise<string> {
  const connection = await Connection.connect({ address: world.cp.temporalAddress });
  const client = new Client({ connection, namespace: world.cp.temporalNamespace });
  const kc = world.cp.kubeConfig();
  const terminated: string[] = [];
  try {
    const containers = (await Promise.all(world.namespaces.map((ns) => listContainers(kc, ns)))).flat();
    const live = containers.filter((c) => !c.metadata.deletionTimestamp && c.metadata.uid);
    for (const c of random.sample(live, Math.min(random.int(1, 3), live.length))) {
      const ok = await client.workflow
        .getHandle(containerWorkflowId(c.metadata.uid!))
        .terminate('chaos: terminated as a person does from the Temporal UI')
        .then(
          () => true,
          () => false,
        );
      if (ok) terminated.push(`${c.metadata.namespace}/${c.metadata.name} (${c.status?.phase ?? 'no phase'})`);
    }
    // Half the time a mutex too, with what it had queued: its requesters send again after a
    // minute, and the ledger on the Node (or the cluster ports' records) is its memory.
    if (random.next() < 0.5) {
      const mutex =
        random.next() < 0.75
          ? nodeMutexId(world.nodes[random.int(0, world.nodes.length - 1)]!)
          : CLUSTER_PORTS_MUTEX_ID;
      const ok = await client.workflow
        .getHandle(mutex)
        .terminate('chaos: terminated as a person does from the Temporal UI')
        .then(
          () => true,
          () => false,
        );
      if (ok) terminated.push(`the mutex ${mutex}`);
    }
  } finally {
    await connection.close();
  }
  return `terminated ${terminated.length} workflows: ${terminated.join(', ')}`;
}
