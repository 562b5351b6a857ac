// Faults of people who force things: a finalizer removed by hand while its container is torn
// down, a WekaCluster forced out and created again under its name, and workflows Reset from the
// Temporal UI. Each works in a namespace of its own (or on what is live) and is over, and what it
// forced torn down, before its promise resolves, so the calm that follows checks what is left.
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import type { WekaCluster } from '../../src/api/index.js';
import { clusterWorkflowId, containerWorkflowId } from '../../src/protocol.js';
import { eventually, mapLimit, sleep } from '../support/async.js';
import {
  createContainerObject,
  createWekaClusterObject,
  deleteObject,
  ensureNamespace,
  listContainers,
  listWekaClusters,
  phaseSummary,
  readObject,
  WEKA_CLUSTERS,
  WEKA_CONTAINERS,
} from '../support/containers.js';
import type { Random } from '../support/random.js';
import { resetToFirstTask } from '../support/temporal-reset.js';
import { SMALL_CONTAINER } from './pressure.js';
import { CHAOS_NODE_LABEL, type ChaosWorld } from './world.js';

type Kind = typeof WEKA_CONTAINERS | typeof WEKA_CLUSTERS;
type Ref = { namespace: string; name: string };

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
/** A fault's own API calls outlast the tail of the fault before it (an apiserver still starting). */
export const retried = <T>(what: string, call: () => Promise<T>): Promise<T> =>
  eventually(what, async () => ({ v: await call() }), 120_000, { intervalMs: 1_000 }).then((r) => r.v);

async function removeFinalizers(world: ChaosWorld, kind: Kind, ref: Ref): Promise<void> {
  const custom = world.cp.kubeConfig().makeApiClient(CustomObjectsApi);
  await retried(`removing the finalizers of ${ref.namespace}/${ref.name}`, () =>
    custom
      .patchNamespacedCustomObject({ ...kind, ...ref, body: { metadata: { finalizers: null } } }, mergePatch)
      .catch((err: { code?: number }) => {
        if (err.code !== 404) throw err;
      }),
  );
}

export async function waitObjectGone(world: ChaosWorld, kind: Kind, ref: Ref, timeoutMs = 480_000): Promise<void> {
  await eventually(
    `${ref.namespace}/${ref.name} to be gone`,
    async () => ((await readObject(world.cp.kubeConfig(), kind, ref)) === null ? true : undefined),
    timeoutMs,
    { intervalMs: 1_000 },
  );
}

/** Deletes the namespace and waits until it is gone (8 minutes at most). */
export async function deleteNamespace(world: ChaosWorld, namespace: string): Promise<void> {
  const core = world.cp.kubeConfig().makeApiClient(CoreV1Api);
  await retried(`deleting namespace ${namespace}`, () =>
    core.deleteNamespace({ name: namespace }).catch((err: { code?: number }) => {
      if (err.code !== 404) throw err;
    }),
  );
  await eventually(
    `namespace ${namespace} to be gone`,
    async () =>
      (await core.readNamespace({ name: namespace }).then(
        () => false,
        (err: { code?: number }) => err.code === 404,
      ))
        ? true
        : undefined,
    480_000,
    { intervalMs: 2_000 },
  );
}

async function withTemporal<T>(world: ChaosWorld, use: (client: Client) => Promise<T>): Promise<T> {
  const connection = await Connection.connect({ address: world.cp.temporalAddress });
  try {
    return await use(new Client({ connection, namespace: world.cp.temporalNamespace }));
  } finally {
    await connection.close();
  }
}

/** Waits until the workflow's latest run is not running (or it never started: the object went first). */
async function workflowEnded(client: Client, workflowId: string, of: string): Promise<void> {
  await eventually(
    `the workflow of ${of} to end`,
    async () => {
      const d = await client.workflow
        .getHandle(workflowId)
        .describe()
        .catch((err: { name?: string }) => {
          if (err.name === 'WorkflowNotFoundError') return undefined;
          throw err;
        });
      return d === undefined || d.status.name !== 'RUNNING' ? true : undefined;
    },
    480_000,
    { intervalMs: 2_000 },
  );
}

/**
 * A person removes the finalizer of one to two drive containers a moment after deleting them,
 * whatever step their teardown is in; half the time a container of the same name is created at
 * once and deleted again later. The objects are gone at once; their workflows must still free
 * what they held (or record it on the node) and never touch the successor. The fault ends when
 * those workflows have ended and the namespace is gone.
 */
export async function removeFinalizerMidTeardown(world: ChaosWorld, random: Random): Promise<string> {
  const kc = world.cp.kubeConfig();
  const namespace = `chaos-unfinalized-${random.int(1, 1_000_000_000)}`;
  await retried(`creating namespace ${namespace}`, () => ensureNamespace(kc, namespace));
  const refs = Array.from({ length: random.int(1, 2) }, (_, i) => ({ namespace, name: `forced-${i}` }));
  const spec = () => ({ ...SMALL_CONTAINER, nodeName: world.nodes[random.int(0, world.nodes.length - 1)]! });
  const guid = () => world.clusterGUIDs[random.int(0, world.clusterGUIDs.length - 1)]!;
  for (const ref of refs)
    await retried(`creating ${ref.name}`, () =>
      createContainerObject(kc, ref, spec(), { clusterGUID: guid(), simulatorRoot: world.cp.simulatorRoot }).catch(
        (err: { code?: number }) => {
          if (err.code !== 409) throw err;
        },
      ),
    );
  await sleep(random.int(5_000, 45_000));
  const before = phaseSummary(await retried('listing the containers', () => listContainers(kc, namespace)));
  const uids: string[] = [];
  for (const ref of refs) {
    const uid = (
      await retried(`reading ${ref.name}`, () => readObject<{ metadata: { uid?: string } }>(kc, WEKA_CONTAINERS, ref))
    )?.metadata.uid;
    if (uid) uids.push(uid);
    await retried(`deleting ${ref.name}`, () => deleteObject(kc, WEKA_CONTAINERS, ref));
    await sleep(random.int(0, 5_000));
    await removeFinalizers(world, WEKA_CONTAINERS, ref);
    await waitObjectGone(world, WEKA_CONTAINERS, ref, 60_000);
  }
  const successors = refs.filter(() => random.next() < 0.5);
  for (const ref of successors)
    await retried(`creating the successor ${ref.name}`, () =>
      createContainerObject(kc, ref, spec(), { clusterGUID: guid(), simulatorRoot: world.cp.simulatorRoot }).catch(
        (err: { code?: number }) => {
          if (err.code !== 409) throw err;
        },
      ),
    );
  const started = Date.now();
  await withTemporal(world, (client) =>
    mapLimit(uids, 2, (uid) => workflowEnded(client, containerWorkflowId(uid), `forced-out container ${uid}`)),
  );
  const ended = Date.now() - started;
  if (successors.length > 0) await sleep(random.int(0, 15_000));
  await deleteNamespace(world, namespace);
  return `removed the finalizers of ${refs.length} containers being deleted (${before}), ${successors.length} created again by name; their workflows ended after ${ended} ms`;
}

/**
 * A WekaCluster of one to every chaos node forced out (its finalizer removed, then deleted) and
 * created again under its name at once, as a person clearing a stuck deletion does. The old
 * cluster's teardown must take only what is its own: for 20 to 40 s, no member of the new cluster
 * may be deleted by it. Then the new cluster is deleted as usual and its namespace with it.
 */
export async function recreateWekaClusterByName(world: ChaosWorld, random: Random): Promise<string> {
  const kc = world.cp.kubeConfig();
  const namespace = `chaos-recreated-${random.int(1, 1_000_000_000)}`;
  const ref = { namespace, name: 'stores' };
  const template = { driveContainers: random.int(1, world.nodes.length), ...SMALL_CONTAINER };
  const create = () =>
    retried(`creating WekaCluster ${namespace}/stores`, () =>
      createWekaClusterObject(kc, ref, { [CHAOS_NODE_LABEL]: 'true' }, template),
    );
  await retried(`creating namespace ${namespace}`, () => ensureNamespace(kc, namespace));
  const old = await create();
  await sleep(random.int(10_000, 40_000));
  const phase = (await retried('reading the cluster', () => readObject<WekaCluster>(kc, WEKA_CLUSTERS, ref)))?.status
    ?.phase;
  await removeFinalizers(world, WEKA_CLUSTERS, ref);
  await retried('deleting the cluster', () => deleteObject(kc, WEKA_CLUSTERS, ref));
  await waitObjectGone(world, WEKA_CLUSTERS, ref, 60_000);
  const fresh = await create();
  const watchMs = random.int(20_000, 40_000);
  const deadline = Date.now() + watchMs;
  while (Date.now() < deadline) {
    const members = await retried('listing the members', () => listContainers(kc, namespace));
    const hit = members.find(
      (m) => m.metadata.deletionTimestamp && m.metadata.ownerReferences?.some((o) => o.uid === fresh),
    );
    if (hit) throw new Error(`member ${hit.metadata.name} of the new cluster (uid ${fresh}) was deleted`);
    await sleep(2_000);
  }
  const now = await retried('reading the new cluster', () => readObject<WekaCluster>(kc, WEKA_CLUSTERS, ref));
  if (now?.metadata.uid !== fresh || now.metadata.deletionTimestamp)
    throw new Error(`the new cluster ${fresh} was deleted (now: ${now?.metadata.uid ?? 'none'})`);
  await retried('deleting the new cluster', () => deleteObject(kc, WEKA_CLUSTERS, ref));
  await waitObjectGone(world, WEKA_CLUSTERS, ref);
  await withTemporal(world, (client) => workflowEnded(client, clusterWorkflowId(old), `the old cluster ${old}`));
  await deleteNamespace(world, namespace);
  return `forced out WekaCluster ${namespace}/stores (${template.driveContainers} members, ${phase ?? 'no phase'}) and created it again; its new members stayed ${watchMs} ms, then both were torn down`;
}

/**
 * Reset (to the first workflow task, as the UI's Reset does) of the lifecycle workflows of one to
 * two live drive containers, of a WekaCluster, and of one that ended with its container's
 * deletion (whose name may have a new object now). Each new run must carry on from the object's
 * status and the ledger, and one of an object that is gone must touch nothing of a successor.
 */
export async function resetWorkflows(world: ChaosWorld, random: Random): Promise<string> {
  const kc = world.cp.kubeConfig();
  const containers = (await Promise.all(world.namespaces.map((ns) => listContainers(kc, ns)))).flat();
  const clusters = (await Promise.all(world.namespaces.map((ns) => listWekaClusters(kc, ns)))).flat();
  const live = containers.filter((c) => !c.metadata.deletionTimestamp && c.metadata.uid);
  const ids = [
    ...random.sample(live, Math.min(random.int(1, 2), live.length)).map((c) => containerWorkflowId(c.metadata.uid!)),
    ...random.sample(clusters, Math.min(1, clusters.length)).map((c) => clusterWorkflowId(c.metadata.uid!)),
  ];
  return withTemporal(world, async (client) => {
    const ended: string[] = [];
    for await (const w of client.workflow.list({ query: 'ExecutionStatus="Completed"', pageSize: 50 })) {
      if (w.workflowId.startsWith(containerWorkflowId(''))) ended.push(w.workflowId);
      if (ended.length >= 50) break;
    }
    ids.push(...random.sample(ended, Math.min(1, ended.length)));
    const reset: string[] = [];
    for (const id of ids) {
      const ok = await resetToFirstTask(client, world.cp.temporalNamespace, id).then(
        () => true,
        () => false,
      );
      if (ok) reset.push(id);
    }
    // The reset runs start from their first step: give them a moment before the next fault.
    await sleep(2_000);
    return `reset ${reset.length} workflows to their first workflow task: ${reset.join(', ')}`;
  });
}
