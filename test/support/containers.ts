// Weka custom resources as a user, or a Weka cluster's administrator, handles them from outside the
// operator, through the KubeConfig given: the harness's for the integration and chaos tests, a
// benchmark's own control plane's for the benchmarks. No vitest here: the benchmarks run outside it.
import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import {
  API_GROUP,
  API_GROUP_VERSION,
  API_VERSION,
  type WekaCluster,
  type WekaContainer,
} from '../../src/api/index.js';
import type { ObjectRef } from '../../src/api/names.js';
import { mapLimit } from './async.js';
import { simulatedClusterJoinIps, simulatedClusterRoot } from '../../deploy/local/shared-drives.js';

export const WEKA_API = { group: API_GROUP, version: API_VERSION };
export const WEKA_CONTAINERS = { ...WEKA_API, plural: 'wekacontainers' };
export const WEKA_CLUSTERS = { ...WEKA_API, plural: 'wekaclusters' };

/** The image of the drive containers the tests create (kwok runs their pods: nothing pulls it). */
export const TEST_IMAGE = 'quay.io/weka.io/weka-in-container:test';

/** The object, or null when the apiserver has none (404). */
export async function readObject<T>(
  kc: KubeConfig,
  kind: { group: string; version: string; plural: string },
  ref: ObjectRef,
): Promise<T | null> {
  try {
    return (await kc.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({ ...kind, ...ref })) as T;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return null;
    throw err;
  }
}

/**
 * Every WekaContainer of `namespace`, read in pages of 500: one list of thousands of containers
 * can outlast the apiserver's request timeout on a busy machine.
 */
export async function listContainers(
  kc: KubeConfig,
  namespace: string,
  o: { fieldSelector?: string } = {},
): Promise<WekaContainer[]> {
  const api = kc.makeApiClient(CustomObjectsApi);
  const items: WekaContainer[] = [];
  let page: string | undefined;
  do {
    const list = (await api.listNamespacedCustomObject({
      ...WEKA_CONTAINERS,
      namespace,
      ...o,
      limit: 500,
      ...(page ? { _continue: page } : {}),
    })) as { items: WekaContainer[]; metadata?: { continue?: string } };
    items.push(...list.items);
    page = list.metadata?.continue || undefined;
  } while (page);
  return items;
}

export async function listWekaClusters(kc: KubeConfig, namespace: string): Promise<WekaCluster[]> {
  return (
    (await kc.makeApiClient(CustomObjectsApi).listNamespacedCustomObject({ ...WEKA_CLUSTERS, namespace })) as {
      items: WekaCluster[];
    }
  ).items;
}

/** Changes a container's spec as a user would, with a merge patch; the caller tells its workflow, as the watcher would. */
export async function patchContainerSpec(kc: KubeConfig, ref: ObjectRef, spec: object): Promise<void> {
  await kc
    .makeApiClient(CustomObjectsApi)
    .patchNamespacedCustomObject(
      { ...WEKA_CONTAINERS, ...ref, body: { spec } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
}

/** The addresses a standalone container joins a simulated cluster through (made in this process). */
async function joinIpsFor(clusterGUID: string, simulatorRoot?: string): Promise<string[]> {
  const root = simulatorRoot ?? simulatedClusterRoot(clusterGUID);
  if (root === undefined) throw new Error(`the simulated Weka cluster ${clusterGUID} was not made by this process`);
  const joinIps = await simulatedClusterJoinIps(root, clusterGUID);
  if (joinIps.length === 0)
    throw new Error(`the simulated Weka cluster ${clusterGUID} has no container with an address`);
  return joinIps;
}

/**
 * Creates a drive WekaContainer object (mode drive, the test image, then `spec`); a standalone
 * container of `clusterGUID` gets the addresses of that simulated cluster's containers as its
 * spec.joinIps. Starts nothing: without `finalizers` it is what a user creates, and the operator's
 * watcher takes it from there.
 */
export async function createContainerObject(
  kc: KubeConfig,
  ref: ObjectRef,
  spec: object,
  o: { finalizers?: string[]; clusterGUID?: string; labels?: Record<string, string>; simulatorRoot?: string } = {},
): Promise<WekaContainer> {
  const created = (await kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
    ...WEKA_CONTAINERS,
    namespace: ref.namespace,
    body: {
      apiVersion: API_GROUP_VERSION,
      kind: 'WekaContainer',
      metadata: {
        name: ref.name,
        ...(o.finalizers?.length ? { finalizers: o.finalizers } : {}),
        ...(o.labels ? { labels: o.labels } : {}),
      },
      spec: {
        mode: 'drive',
        image: TEST_IMAGE,
        ...(o.clusterGUID ? { joinIps: await joinIpsFor(o.clusterGUID, o.simulatorRoot) } : {}),
        ...spec,
      },
    },
  })) as WekaContainer;
  return created;
}

/**
 * Creates drive WekaContainers in `namespace` as a user would (createContainerObject, no
 * finalizer), `concurrency` at a time (one after the other unless given), each with its own
 * standalone cluster's GUID, else the one given for all, when there is one. Returns their
 * references, in order.
 */
export async function createDriveContainers(
  kc: KubeConfig,
  namespace: string,
  containers: ReadonlyArray<{ name: string; spec: object; clusterGUID?: string }>,
  o: { clusterGUID?: string; concurrency?: number } = {},
): Promise<ObjectRef[]> {
  await mapLimit(containers, o.concurrency ?? 1, (c) => {
    const clusterGUID = c.clusterGUID ?? o.clusterGUID;
    return createContainerObject(kc, { namespace, name: c.name }, c.spec, clusterGUID ? { clusterGUID } : {});
  });
  return containers.map((c) => ({ namespace, name: c.name }));
}

/** Deletes the containers; one that is already gone is no error. */
export async function deleteContainers(kc: KubeConfig, refs: readonly ObjectRef[]): Promise<void> {
  const custom = kc.makeApiClient(CustomObjectsApi);
  for (const ref of refs) {
    await custom.deleteNamespacedCustomObject({ ...WEKA_CONTAINERS, ...ref }).catch((err: unknown) => {
      if ((err as { code?: number }).code !== 404) throw err;
    });
  }
}

/** Deletes an object of the kind; one already gone is fine. */
export async function deleteObject(
  kc: KubeConfig,
  kind: { group: string; version: string; plural: string },
  ref: ObjectRef,
): Promise<void> {
  await kc
    .makeApiClient(CustomObjectsApi)
    .deleteNamespacedCustomObject({ ...kind, ...ref })
    .catch((err: unknown) => {
      if ((err as { code?: number }).code !== 404) throw err;
    });
}

/** The apiserver's refusal of a request: its HTTP code and its Status message. Fails when it accepts it. */
export async function rejection(request: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await request;
  } catch (err) {
    if (!(err instanceof ApiException)) throw err;
    const raw: unknown = err.body;
    const body = (typeof raw === 'string' ? JSON.parse(raw) : raw) as { message?: string };
    return { code: err.code, message: body.message ?? '' };
  }
  throw new Error('the apiserver accepted a request it should have rejected');
}

/** Creates the namespace unless it exists. */
export async function ensureNamespace(kc: KubeConfig, name: string): Promise<void> {
  await kc
    .makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name } } })
    .catch((e: { code?: number }) => {
      if (e.code !== 409) throw e;
    });
}

export const isReady = (c: WekaContainer): boolean => c.status?.phase === 'Ready';
export const isAllocated = (c: WekaContainer): boolean => (c.status?.allocations?.virtualDrives?.length ?? 0) > 0;

/**
 * The containers not Ready, or being deleted, each with its phase, how long it has been deleted and
 * its Ready condition: what a wait that timed out was waiting for (at most `limit` of them).
 */
export function laggardSummary(containers: readonly WekaContainer[], limit = 5, now = Date.now()): string {
  const laggards = containers.filter((c) => !isReady(c) || c.metadata.deletionTimestamp);
  const described = laggards.slice(0, limit).map((c) => {
    const deleted = c.metadata.deletionTimestamp;
    const since =
      deleted === undefined
        ? ''
        : ` deleted ${Math.round((now - Date.parse(deleted)) / 1000)} s ago, finalizers [${(c.metadata.finalizers ?? []).join(', ')}]`;
    const ready = c.status?.conditions?.find((k) => k.type === 'Ready');
    const condition = ready ? `; Ready ${ready.reason}: ${ready.message.slice(0, 240)}` : '';
    return `${c.metadata.namespace}/${c.metadata.name} ${c.status?.phase ?? 'none'}${since}${condition}`;
  });
  const more = laggards.length > limit ? `; and ${laggards.length - limit} more` : '';
  return described.join('; ') + more;
}

/** "Ready=12 Signing=3 ...", for progress lines and failure messages. */
export function phaseSummary(containers: readonly WekaContainer[]): string {
  const counts = new Map<string, number>();
  for (const c of containers) counts.set(c.status?.phase ?? 'none', (counts.get(c.status?.phase ?? 'none') ?? 0) + 1);
  return (
    [...counts]
      .sort()
      .map(([phase, n]) => `${phase}=${n}`)
      .join(' ') || 'none'
  );
}

/**
 * A WekaCluster as a user creates it (no finalizer: the watcher adds it and starts the workflow)
 * on the nodes `nodeSelector` selects; its uid.
 */
export async function createWekaClusterObject(
  kc: KubeConfig,
  ref: { namespace: string; name: string },
  nodeSelector: Record<string, string>,
  dynamicTemplate: object,
  moreSpec: object = {},
): Promise<string> {
  const created = (await kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
    ...WEKA_CLUSTERS,
    namespace: ref.namespace,
    body: {
      apiVersion: 'weka.weka.io/v1alpha1',
      kind: 'WekaCluster',
      metadata: { name: ref.name },
      spec: { image: TEST_IMAGE, nodeSelector, dynamicTemplate, ...moreSpec },
    },
  })) as WekaCluster;
  return created.metadata.uid!;
}
