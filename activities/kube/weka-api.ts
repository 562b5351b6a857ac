// Typed access to the operator's custom resources. Status writes go through the status
// subresource by server-side apply, each writer with its own field manager.
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import {
  API_GROUP,
  API_VERSION,
  WEKA_CLUSTER_KIND,
  WEKA_CLUSTER_PLURAL,
  WEKA_CONTAINER_KIND,
  WEKA_CONTAINER_PLURAL,
  WEKA_MANUAL_OPERATION_KIND,
  WEKA_MANUAL_OPERATION_PLURAL,
  ENDED_OPERATION_PHASES,
  type ObjectMeta,
  type WekaCluster,
  type WekaContainer,
  type WekaManualOperation,
} from '../../src/api/index.js';
import type { ObjectRef } from '../../src/api/names.js';
import type { ObjectSnapshot } from '../types.js';
import { isConflict, orIfMissing } from './errors.js';

export type WekaKind = typeof WEKA_CONTAINER_KIND | typeof WEKA_CLUSTER_KIND | typeof WEKA_MANUAL_OPERATION_KIND;

export const PLURAL: Record<WekaKind, string> = {
  WekaContainer: WEKA_CONTAINER_PLURAL,
  WekaCluster: WEKA_CLUSTER_PLURAL,
  WekaManualOperation: WEKA_MANUAL_OPERATION_PLURAL,
};

/**
 * The part of a workflow's snapshot of an object that every kind shares: its identity, generation,
 * deletion and annotations, and a plain copy of its spec (no client types).
 */
export function snapshotOf<Spec>(obj: { metadata: ObjectMeta; spec: unknown }): ObjectSnapshot & { spec: Spec } {
  return {
    uid: obj.metadata.uid ?? '',
    generation: obj.metadata.generation ?? 0,
    deleting: obj.metadata.deletionTimestamp !== undefined,
    annotations: { ...(obj.metadata.annotations ?? {}) },
    spec: JSON.parse(JSON.stringify(obj.spec)) as Spec,
  };
}

const applyHeaders = setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply);
/** The header of a JSON merge patch, for the client's patch calls. */
export const mergeHeaders = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

export class WekaApi {
  readonly custom: CustomObjectsApi;
  readonly core: CoreV1Api;

  constructor(readonly kubeConfig: KubeConfig) {
    this.custom = kubeConfig.makeApiClient(CustomObjectsApi);
    this.core = kubeConfig.makeApiClient(CoreV1Api);
  }

  private params(kind: WekaKind, ref: ObjectRef) {
    return { group: API_GROUP, version: API_VERSION, plural: PLURAL[kind], namespace: ref.namespace, name: ref.name };
  }

  async get<T extends WekaContainer | WekaCluster | WekaManualOperation>(
    kind: WekaKind,
    ref: ObjectRef,
  ): Promise<T | null> {
    return orIfMissing(this.custom.getNamespacedCustomObject(this.params(kind, ref)) as Promise<T>, null);
  }

  getContainer(ref: ObjectRef): Promise<WekaContainer | null> {
    return this.get<WekaContainer>(WEKA_CONTAINER_KIND, ref);
  }

  getCluster(ref: ObjectRef): Promise<WekaCluster | null> {
    return this.get<WekaCluster>(WEKA_CLUSTER_KIND, ref);
  }

  getOperation(ref: ObjectRef): Promise<WekaManualOperation | null> {
    return this.get<WekaManualOperation>(WEKA_MANUAL_OPERATION_KIND, ref);
  }

  /** Every WekaContainer on the node, in every namespace, read from the apiserver now. */
  async listContainersOnNode(node: string): Promise<WekaContainer[]> {
    const list = (await this.custom.listClusterCustomObject({
      group: API_GROUP,
      version: API_VERSION,
      plural: WEKA_CONTAINER_PLURAL,
      fieldSelector: `spec.nodeName=${node}`,
    })) as { items: WekaContainer[] };
    return list.items;
  }

  /** Every WekaContainer in every namespace, read from the apiserver now. */
  async listAllContainers(): Promise<WekaContainer[]> {
    const list = (await this.custom.listClusterCustomObject({
      group: API_GROUP,
      version: API_VERSION,
      plural: WEKA_CONTAINER_PLURAL,
    })) as { items: WekaContainer[] };
    return list.items;
  }

  async listClusters(): Promise<WekaCluster[]> {
    const list = (await this.custom.listClusterCustomObject({
      group: API_GROUP,
      version: API_VERSION,
      plural: WEKA_CLUSTER_PLURAL,
    })) as { items: WekaCluster[] };
    return list.items;
  }

  async createContainer(body: WekaContainer): Promise<WekaContainer> {
    return (await this.custom.createNamespacedCustomObject({
      group: API_GROUP,
      version: API_VERSION,
      plural: WEKA_CONTAINER_PLURAL,
      namespace: body.metadata.namespace ?? 'default',
      body,
    })) as WekaContainer;
  }

  async delete(kind: WekaKind, ref: ObjectRef): Promise<void> {
    await orIfMissing(this.custom.deleteNamespacedCustomObject(this.params(kind, ref)), undefined);
  }

  /**
   * Server-side apply of `status` on the status subresource as `fieldManager`. With
   * `resourceVersion`, the write happens only if the object is still at that version (409
   * otherwise). A uid in the body would not fence: the status subresource ignores metadata.
   * Returns the object's resourceVersion after the write.
   */
  async applyStatus(
    kind: WekaKind,
    ref: ObjectRef,
    status: Record<string, unknown>,
    fieldManager: string,
    resourceVersion?: string,
  ): Promise<string | undefined> {
    const body = {
      apiVersion: `${API_GROUP}/${API_VERSION}`,
      kind,
      metadata: { name: ref.name, namespace: ref.namespace, ...(resourceVersion ? { resourceVersion } : {}) },
      status,
    };
    const applied = (await this.custom.patchNamespacedCustomObjectStatus(
      { ...this.params(kind, ref), body, fieldManager, force: true },
      applyHeaders,
    )) as { metadata?: ObjectMeta } | undefined;
    return applied?.metadata?.resourceVersion;
  }

  /**
   * A JSON merge patch of the spec of an object the operator owns (its ssdproxy containers), and of
   * `annotations` (null removes one) in the same write.
   */
  async patchSpec(
    kind: WekaKind,
    ref: ObjectRef,
    spec: Record<string, unknown>,
    annotations?: Record<string, string | null>,
  ): Promise<void> {
    const body = annotations ? { spec, metadata: { annotations } } : { spec };
    await this.custom.patchNamespacedCustomObject({ ...this.params(kind, ref), body }, mergeHeaders);
  }

  /**
   * The members of the cluster named `ref`; with `uid`, only those of the cluster of that uid (its
   * controller), never those of another cluster created since under the same name.
   */
  async listClusterMembers(ref: ObjectRef, uid?: string): Promise<WekaContainer[]> {
    const list = (await this.custom.listNamespacedCustomObject({
      group: API_GROUP,
      version: API_VERSION,
      plural: WEKA_CONTAINER_PLURAL,
      namespace: ref.namespace,
      fieldSelector: `spec.cluster=${ref.name}`,
    })) as { items: WekaContainer[] };
    if (uid === undefined) return list.items;
    return list.items.filter((c) =>
      c.metadata.ownerReferences?.some((o) => o.kind === 'WekaCluster' && o.controller === true && o.uid === uid),
    );
  }

  /** Deletes the WekaContainer of that uid (its own workflow tears it down); gone, or another object of the name by now, is done. */
  async deleteContainerOfUid(ref: ObjectRef, uid: string): Promise<void> {
    try {
      await orIfMissing(
        this.custom.deleteNamespacedCustomObject({
          ...this.params('WekaContainer', ref),
          body: { preconditions: { uid } },
        }),
        undefined,
      );
    } catch (err) {
      if (!isConflict(err)) throw err;
    }
  }

  /** Every WekaManualOperation in every namespace, read from the apiserver now. */
  async listOperations(): Promise<WekaManualOperation[]> {
    const list = (await this.custom.listClusterCustomObject({
      group: API_GROUP,
      version: API_VERSION,
      plural: PLURAL[WEKA_MANUAL_OPERATION_KIND],
    })) as { items: WekaManualOperation[] };
    return list.items;
  }

  /** The operations of this action that have not ended and are not being deleted: uid -> namespace/name. */
  async liveOperations(action: string): Promise<Map<string, string>> {
    return new Map(
      (await this.listOperations())
        .filter((o) => o.spec.action === action && !o.metadata.deletionTimestamp)
        .filter((o) => !ENDED_OPERATION_PHASES.includes(o.status?.phase ?? ''))
        .map((o) => [o.metadata.uid!, `${o.metadata.namespace}/${o.metadata.name}`]),
    );
  }

  /** A JSON merge patch of metadata (finalizers), conditional on resourceVersion. */
  async patchMetadata(kind: WekaKind, ref: ObjectRef, metadata: Record<string, unknown>): Promise<void> {
    await this.custom.patchNamespacedCustomObject({ ...this.params(kind, ref), body: { metadata } }, mergeHeaders);
  }
}
