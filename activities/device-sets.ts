// Activities of a WekaCluster's device sets (src/manifests/device-set-pods.ts): make each set's claims
// and device pods on its nodes, sign the bound devices for the node's ssdproxy inside their device
// pods and publish them as the node's shared drives, and, when the cluster goes, release them once
// no virtual drive is left on them. Signing and releasing are executed by the node's mutex, so no
// allocation is decided while the node's drives change.
import { ApplicationFailure, Context } from '@temporalio/activity';
import { CoreV1Api, StorageV1Api, type V1PersistentVolumeClaim, type V1Pod } from '@kubernetes/client-node';
import type { StorageClassDeviceSet } from '../src/api/schemas/device-sets.js';
import type { WekaCluster } from '../src/api/index.js';
import {
  claimManifest,
  CLUSTER_UID_LABEL,
  DEVICE_CLAIM_FINALIZER,
  DEVICE_NODE_ANNOTATION,
  DEVICE_SET_LABEL,
  deviceSetClaims,
  deviceSetDriveType,
  deviceSetNodes,
  deviceSetProblem,
  deviceSetReadiness,
  devicePod,
  type DeviceClaim,
  type DeviceSetCluster,
  type DevicePodManifest,
  type DeviceSetReadiness,
} from '../src/manifests/device-set-pods.js';
import { podEnded } from '../src/manifests/pods.js';
import { FIELD_MANAGER, WEKA_POD_CONTAINER, refText, type ObjectRef } from '../src/api/names.js';
import { labelSelectorText } from '../src/node/sign-drives-request.js';
import { imageAllowed } from '../src/manifests/image-policy.js';
import {
  NON_RETRYABLE_WEKA_ERRORS,
  readDriveCall,
  signProxyCall,
  WekaDeviceNotListed,
  type DriveInfo,
} from '../src/weka/index.js';
import type { MutexOutcome, MutexPayloads } from '../src/protocol.js';
import type { ActivityDeps } from './deps.js';
import type { DeviceSetSigned } from './types.js';
import { isAlreadyExists, isDeterministic, isNotFound, orIfMissing } from './kube/errors.js';
import { mergeHeaders, WekaApi } from './kube/weka-api.js';
import { podFacts } from './kube/pods.js';
import { ledgerOf } from './kube/node-ledger.js';
import { emptyLedger } from '../src/node/allocation-ledger.js';
import { createNodeDrivesPublisher } from './node-drives-publisher.js';
import { liveClusterRefusal } from './cluster-ports.js';
import { wekaCli } from './weka-cli.js';

/** Attempts of a mutex-executed device-set activity before its failure is its answer. */
const MUTEX_ATTEMPTS = 3;

/** On a claim once its device is signed: the physical UUID the signing gave it. */
export const SIGNED_UUID_ANNOTATION = 'weka.weka.io/physical-uuid';

export interface DeviceSetPlan {
  readonly name: string;
  readonly nodes: string[];
  readonly problem?: { reason: string; message: string };
}

export interface EnsuredDeviceSet extends DeviceSetReadiness {
  /** Devices ready to sign whose claims are not all signed yet. */
  readonly unsigned: number;
  readonly signed: number;
}

const isWekaRefusal = (err: unknown): err is Error =>
  err instanceof Error && NON_RETRYABLE_WEKA_ERRORS.includes(err.name);

export function createDeviceSetActivities(deps: ActivityDeps) {
  const api = new WekaApi(deps.kubeConfig);
  const core = deps.kubeConfig.makeApiClient(CoreV1Api);
  const storage = deps.kubeConfig.makeApiClient(StorageV1Api);
  const run = wekaCli(deps.exec);
  const publisher = createNodeDrivesPublisher(deps);
  const namespace = deps.operatorNamespace;

  /** The cluster of that uid, unless it is gone or being deleted: nothing is made or signed for it then. */
  async function liveCluster(ref: ObjectRef, uid: string): Promise<WekaCluster | null> {
    const cluster = await api.getCluster(ref);
    if (!cluster || cluster.metadata.uid !== uid || cluster.metadata.deletionTimestamp) return null;
    return cluster;
  }

  function ownerOf(cluster: WekaCluster): DeviceSetCluster {
    return {
      namespace: cluster.metadata.namespace ?? '',
      name: cluster.metadata.name ?? '',
      uid: cluster.metadata.uid ?? '',
      image: cluster.spec.image,
      imagePullSecret: cluster.spec.imagePullSecret,
    };
  }

  function setOf(cluster: WekaCluster, name: string): StorageClassDeviceSet {
    const set = cluster.spec.storageClassDeviceSets?.find((s) => s.name === name);
    if (!set) throw ApplicationFailure.nonRetryable(`the cluster has no device set ${name}`, 'NoSuchDeviceSet');
    return set;
  }

  const setSelector = (uid: string, set: string) => `${CLUSTER_UID_LABEL}=${uid},${DEVICE_SET_LABEL}=${set}`;

  /** This cluster's claims and pods of the set on the node, by name. */
  async function objectsOnNode(uid: string, set: string, node: string) {
    const labelSelector = setSelector(uid, set);
    const onNode = (o: { metadata?: { annotations?: Record<string, string> } }) =>
      o.metadata?.annotations?.[DEVICE_NODE_ANNOTATION] === node;
    const [claims, pods] = await Promise.all([
      core.listNamespacedPersistentVolumeClaim({ namespace, labelSelector }),
      core.listNamespacedPod({ namespace, labelSelector }),
    ]);
    return {
      claims: new Map(claims.items.filter(onNode).map((c) => [c.metadata?.name ?? '', c])),
      pods: new Map(pods.items.filter(onNode).map((p) => [p.metadata?.name ?? '', p])),
    };
  }

  /** Reads one device inside its pod; null when the pod does not see it (its volume is not attached yet). */
  async function readDevice(claim: DeviceClaim): Promise<DriveInfo | null> {
    try {
      return await run({ namespace, pod: claim.pod, container: WEKA_POD_CONTAINER }, readDriveCall(claim.devicePath));
    } catch (err) {
      if (err instanceof WekaDeviceNotListed) return null;
      throw err;
    }
  }

  async function annotateClaim(name: string, physicalUUID: string): Promise<void> {
    await core.patchNamespacedPersistentVolumeClaim(
      {
        name,
        namespace,
        fieldManager: FIELD_MANAGER.nodeSigner,
        body: { metadata: { annotations: { [SIGNED_UUID_ANNOTATION]: physicalUUID } } },
      },
      mergeHeaders,
    );
  }

  /** Sets a claim's finalizers, conditional on the version read; a claim gone meanwhile needs none. */
  async function setClaimFinalizers(claim: V1PersistentVolumeClaim, finalizers: string[]): Promise<void> {
    await core
      .patchNamespacedPersistentVolumeClaim(
        {
          name: claim.metadata?.name ?? '',
          namespace,
          fieldManager: FIELD_MANAGER.nodeSigner,
          body: { metadata: { resourceVersion: claim.metadata?.resourceVersion, finalizers } },
        },
        mergeHeaders,
      )
      .catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
  }

  async function createDevicePod(manifest: DevicePodManifest): Promise<void> {
    await core.createNamespacedPod({ namespace, body: manifest as V1Pod }).catch((err: unknown) => {
      if (!isAlreadyExists(err)) throw err;
    });
  }

  /** Deletes a device pod that ended (that very pod, by its uid): it is made again once it is gone. */
  async function deleteEndedPod(pod: V1Pod): Promise<void> {
    const facts = podFacts(pod);
    if (!podEnded(facts) || facts.deletionTimestamp) return;
    await core
      .deleteNamespacedPod({
        name: pod.metadata?.name ?? '',
        namespace,
        body: { preconditions: { uid: facts.uid ?? '' } },
      })
      .catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
  }

  /**
   * Starts again a device pod that is gone or ended, from the cluster's spec (the cluster exists
   * while its teardown runs), so that its devices can be read before they are released.
   */
  async function restartDevicePod(
    ref: ObjectRef & { uid: string },
    setName: string,
    node: string,
    nodeUid: string,
    claim: V1PersistentVolumeClaim,
    pod: V1Pod | undefined,
  ): Promise<void> {
    // One there is on its way to running, or to being made again once an ended one is gone.
    if (pod) return deleteEndedPod(pod);
    const cluster = await api.getCluster(ref);
    const set =
      cluster?.metadata.uid === ref.uid
        ? cluster.spec.storageClassDeviceSets?.find((s) => s.name === setName)
        : undefined;
    if (!cluster || !set) return;
    const index = deviceSetClaims(ownerOf(cluster), set, node).find((c) => c.name === claim.metadata?.name)?.index;
    if (index === undefined) return;
    await createDevicePod(devicePod(ownerOf(cluster), set, { name: node, uid: nodeUid }, index, namespace));
  }

  return {
    /**
     * Each device set of the cluster with the nodes it has devices on: the nodes the cluster
     * selects that the set's placement takes; or why the set cannot be claimed as written.
     */
    async deviceSetPlan({ ref, uid }: { ref: ObjectRef; uid: string }): Promise<DeviceSetPlan[]> {
      const cluster = await liveCluster(ref, uid);
      if (!cluster) return [];
      const sets = cluster.spec.storageClassDeviceSets ?? [];
      if (sets.length === 0) return [];
      const selector = labelSelectorText(cluster.spec.nodeSelector ?? {});
      const nodes = (await core.listNode(selector ? { labelSelector: selector } : {})).items.map((n) => ({
        name: n.metadata?.name ?? '',
        labels: n.metadata?.labels ?? {},
      }));
      return sets.map((set) => {
        const problem = deviceSetProblem(set);
        return problem ? { name: set.name, nodes: [], problem } : { name: set.name, nodes: deviceSetNodes(set, nodes) };
      });
    },

    /**
     * Makes what is missing of the set on the node: its claims, and a pod per device (an ended pod
     * is deleted, and made again on a later call); then says which devices are ready to sign, how
     * many of them are signed, and what holds the others up.
     */
    async ensureDeviceSet(input: {
      ref: ObjectRef;
      uid: string;
      set: string;
      node: string;
    }): Promise<EnsuredDeviceSet> {
      const cluster = await liveCluster(input.ref, input.uid);
      if (!cluster) throw ApplicationFailure.nonRetryable(`${refText(input.ref)} is gone or being deleted`, 'Gone');
      const owner = ownerOf(cluster);
      if (!imageAllowed(owner.image, deps.allowedImages))
        throw ApplicationFailure.nonRetryable(
          `image ${owner.image} is not one the operator may run (allowedImages: ${deps.allowedImages.join(', ')})`,
          'ImageNotAllowed',
        );
      const set = setOf(cluster, input.set);
      const nodeObject = await orIfMissing(core.readNode({ name: input.node }), null);
      if (!nodeObject) throw ApplicationFailure.nonRetryable(`node ${input.node} does not exist`, 'NotFound');
      const node = { name: input.node, uid: nodeObject.metadata?.uid ?? '' };
      const wanted = deviceSetClaims(owner, set, node.name);
      const classes = [...new Set(set.volumeClaimTemplates.map((t) => t.spec.storageClassName ?? ''))];
      const missingClasses: string[] = [];
      for (const name of classes.filter((c) => c !== ''))
        if (!(await orIfMissing(storage.readStorageClass({ name }), null))) missingClasses.push(name);
      let { claims, pods } = await objectsOnNode(owner.uid, set.name, node.name);
      let made = false;
      for (const claim of wanted.filter((c) => !claims.has(c.name))) {
        const body = claimManifest(owner, set, node, claim, namespace) as V1PersistentVolumeClaim;
        await core.createNamespacedPersistentVolumeClaim({ namespace, body }).catch((err: unknown) => {
          if (!isAlreadyExists(err)) throw err;
        });
        made = true;
      }
      for (let index = 0; index < set.count; index++) {
        const manifest = devicePod(owner, set, node, index, namespace);
        const pod = pods.get(manifest.metadata.name);
        if (pod) await deleteEndedPod(pod);
        else {
          await createDevicePod(manifest);
          made = true;
        }
      }
      // A claim made before the operator kept its finalizer on claims gets it now.
      for (const claim of claims.values())
        if (!claim.metadata?.deletionTimestamp && !(claim.metadata?.finalizers ?? []).includes(DEVICE_CLAIM_FINALIZER))
          await setClaimFinalizers(claim, [...(claim.metadata?.finalizers ?? []), DEVICE_CLAIM_FINALIZER]);
      if (made) ({ claims, pods } = await objectsOnNode(owner.uid, set.name, node.name));
      const devices = [...Array(set.count).keys()].map((index) => {
        const mine = wanted.filter((c) => c.index === index);
        const pod = pods.get(mine[0]!.pod);
        return {
          index,
          claims: mine.map((c) => ({ name: c.name, phase: claims.get(c.name)?.status?.phase })),
          pod: pod ? podFacts(pod) : null,
        };
      });
      const readiness = deviceSetReadiness({ set: set.name, node: node.name, devices, missingClasses });
      const signedClaim = (c: DeviceClaim) =>
        Boolean(claims.get(c.name)?.metadata?.annotations?.[SIGNED_UUID_ANNOTATION]);
      const readyClaims = wanted.filter((c) => readiness.ready.includes(c.index));
      const unsigned = new Set(readyClaims.filter((c) => !signedClaim(c)).map((c) => c.index)).size;
      return { ...readiness, unsigned, signed: wanted.filter(signedClaim).length };
    },

    /**
     * Signs, for the node's ssdproxy, each device of the set on the node whose pod runs, inside
     * that pod by the path the pod sees it at, unless it is signed so already; a device of another
     * type than the set declares, one signed for exclusive use, or one the tool refuses to sign
     * (it holds partitions or data) is skipped with the reason. Then publishes the node's drives:
     * the proxy sees the devices on the node. Executed by the node's mutex.
     */
    async signDeviceSet({ node, cluster: ref, set: setName }: MutexPayloads['sign-device-set']): Promise<MutexOutcome> {
      try {
        const cluster = await liveCluster(ref, ref.uid);
        if (!cluster)
          return {
            ok: false,
            error: { type: 'Gone', message: `${refText(ref)} is gone or being deleted: nothing signed` },
          };
        const set = setOf(cluster, setName);
        const declared = deviceSetDriveType(set);
        const { claims, pods } = await objectsOnNode(ref.uid, set.name, node);
        const result: DeviceSetSigned = { signed: 0, skipped: [], notAttached: [] };
        for (const claim of deviceSetClaims(ownerOf(cluster), set, node)) {
          const object = claims.get(claim.name);
          if (object?.status?.phase !== 'Bound' || object.metadata?.annotations?.[SIGNED_UUID_ANNOTATION]) continue;
          if (pods.get(claim.pod)?.status?.phase !== 'Running') continue;
          const before = await readDevice(claim);
          if (!before) {
            result.notAttached.push(claim.name);
            continue;
          }
          const skip = (why: string) => result.skipped.push(`${claim.name} (${claim.devicePath}): ${why}`);
          if (before.type !== declared) {
            skip(`it is a ${before.type} device; the set declares ${declared} (config.driveType)`);
            continue;
          }
          if (before.signature === 'exclusive') {
            skip('it is signed for exclusive use');
            continue;
          }
          let after = before;
          if (before.signature !== 'proxy') {
            try {
              await run(
                { namespace, pod: claim.pod, container: WEKA_POD_CONTAINER },
                signProxyCall(claim.devicePath, []),
              );
            } catch (err) {
              if (!isWekaRefusal(err)) throw err;
              skip(`the sign tool refused it: ${err.message}`);
              continue;
            }
            after = (await readDevice(claim)) ?? after;
          }
          if (after.signature !== 'proxy' || after.physicalUUID === null) {
            skip('it is not signed for the proxy after signing it');
            continue;
          }
          await annotateClaim(claim.name, after.physicalUUID);
          result.signed++;
          deps.logger.info({ node, claim: claim.name, physicalUUID: after.physicalUUID }, 'device set device signed');
        }
        // Published whenever a device of the set is signed, now or by an attempt that failed after
        // marking it: the node must offer what is marked.
        const marked = [...claims.values()].some((c) => c.metadata?.annotations?.[SIGNED_UUID_ANNOTATION]);
        if (result.signed > 0 || marked) await publisher.publish(node);
        return { ok: true, result };
      } catch (err) {
        // Never holds the node's mutex for long: the third failure is the answer.
        if (isDeterministic(err) || Context.current().info.attempt < MUTEX_ATTEMPTS || !(err instanceof Error))
          throw err;
        const message = `device set ${setName} on node ${node}: ${err.message} (after ${MUTEX_ATTEMPTS} attempts)`;
        return { ok: false, error: { type: 'SignFailed', message } };
      }
    },

    /**
     * Releases the set's devices on the node once none carries a virtual drive. Every bound claim is
     * read in its device pod (a claim marked signed or not: an attempt may have signed it and failed
     * before marking it); a device that cannot be read holds the release, and a device pod that is
     * gone or ended is started again to read it. Then, in this same mutex turn, the node withholds
     * the signed devices (no publish offers them again while they report their UUID), and the claims
     * are deleted, then the pods (a claim goes once its pod is gone). A device still carrying a
     * virtual drive (another cluster's, say) keeps everything in place, with who holds it.
     */
    async releaseDeviceSet({ node, cluster: ref, set }: MutexPayloads['release-device-set']): Promise<MutexOutcome> {
      const refused = await liveClusterRefusal(api, ref, 'device sets');
      if (refused) return refused;
      try {
        const { claims, pods } = await objectsOnNode(ref.uid, set, node);
        const nodeObject = await orIfMissing(core.readNode({ name: node }), null);
        const ledger = nodeObject ? ledgerOf(nodeObject) : emptyLedger();
        const inUse: string[] = [];
        const unread: string[] = [];
        const withheld: string[] = [];
        for (const claim of nodeObject ? claims.values() : []) {
          const name = claim.metadata?.name ?? '';
          // Being deleted without the operator's finalizer: released by an earlier attempt. Not
          // bound: nothing was ever signed on it. Deleted by someone else (the finalizer is still
          // there): checked like the others, and kept while its device may be in use.
          const ours = (claim.metadata?.finalizers ?? []).includes(DEVICE_CLAIM_FINALIZER);
          const deleting = Boolean(claim.metadata?.deletionTimestamp);
          if ((deleting && !ours) || claim.status?.phase !== 'Bound') continue;
          const pod = [...pods.values()].find((p) =>
            (p.spec?.volumes ?? []).some((v) => v.persistentVolumeClaim?.claimName === name),
          );
          const device = pod?.spec?.containers[0]?.volumeDevices?.find((d) =>
            (pod.spec?.volumes ?? []).some((v) => v.name === d.name && v.persistentVolumeClaim?.claimName === name),
          );
          if (!pod || pod.status?.phase !== 'Running' || !device) {
            if (deleting) {
              // No new pod may use a claim being deleted: its device cannot be read again.
              unread.push(
                `${name}: deleted by someone while its device may carry virtual drives, and its device pod is gone, so the device cannot be read; the operator keeps the claim (finalizer ${DEVICE_CLAIM_FINALIZER}): remove the finalizer once the device carries nothing`,
              );
              continue;
            }
            unread.push(`${name}: its device pod does not run (started again to read the device)`);
            await restartDevicePod(ref, set, node, nodeObject!.metadata?.uid ?? '', claim, pod);
            continue;
          }
          let info: DriveInfo;
          try {
            info = await run(
              { namespace, pod: pod.metadata?.name ?? '', container: WEKA_POD_CONTAINER },
              readDriveCall(device.devicePath),
            );
          } catch (err) {
            if (!isWekaRefusal(err)) throw err;
            unread.push(`${name}: the device cannot be read: ${err.message}`);
            continue;
          }
          // Allocated but not signed yet: the ledger gave a container a virtual drive on it.
          const allocatedTo = Object.values(ledger.containers)
            .filter((e) => e.allocation.virtualDrives.some((v) => v.physicalUUID === info.physicalUUID))
            .map((e) => e.container);
          if (info.virtualDrives.length === 0 && info.physicalUUID && allocatedTo.length > 0)
            inUse.push(`${name}: allocated to ${allocatedTo.join(', ')} (virtual drives not signed yet)`);
          else if (info.virtualDrives.length > 0)
            inUse.push(
              `${name}: ${info.virtualDrives.length} virtual drives (${info.virtualDrives
                .slice(0, 3)
                .map((v) => `${v.virtualUUID} of Weka cluster ${v.ownerClusterGUID}`)
                .join(', ')}${info.virtualDrives.length > 3 ? ', ...' : ''})`,
            );
          else if (info.signature === 'proxy' && info.physicalUUID) withheld.push(info.physicalUUID);
        }
        if (inUse.length > 0 || unread.length > 0)
          return {
            ok: false,
            error: {
              type: inUse.length > 0 ? 'DevicesInUse' : 'DevicesNotRead',
              message: `device set ${set} on node ${node}: ${[...inUse, ...unread].join('; ')}`,
            },
          };
        if (nodeObject && withheld.length > 0) await publisher.publish(node, withheld);
        for (const claim of claims.values()) {
          const finalizers = claim.metadata?.finalizers ?? [];
          if (finalizers.includes(DEVICE_CLAIM_FINALIZER))
            await setClaimFinalizers(
              claim,
              finalizers.filter((f) => f !== DEVICE_CLAIM_FINALIZER),
            );
          await core
            .deleteNamespacedPersistentVolumeClaim({ name: claim.metadata?.name ?? '', namespace })
            .catch((err: unknown) => {
              if (!isNotFound(err)) throw err;
            });
        }
        for (const pod of pods.values())
          await core.deleteNamespacedPod({ name: pod.metadata?.name ?? '', namespace }).catch((err: unknown) => {
            if (!isNotFound(err)) throw err;
          });
        deps.logger.info({ node, set, claims: claims.size, withheld }, 'device set released');
        return { ok: true, result: { released: claims.size } };
      } catch (err) {
        if (isDeterministic(err) || Context.current().info.attempt < MUTEX_ATTEMPTS || !(err instanceof Error))
          throw err;
        const message = `device set ${set} on node ${node}: ${err.message} (after ${MUTEX_ATTEMPTS} attempts)`;
        return { ok: false, error: { type: 'ReleaseFailed', message } };
      }
    },

    /** The (set, node) pairs on which the cluster still has claims or device pods not being deleted. */
    async deviceSetRemnants({ uid }: { uid: string }): Promise<{ set: string; node: string }[]> {
      const labelSelector = `${CLUSTER_UID_LABEL}=${uid}`;
      const [claims, pods] = await Promise.all([
        core.listNamespacedPersistentVolumeClaim({ namespace, labelSelector }),
        core.listNamespacedPod({ namespace, labelSelector }),
      ]);
      const pairs = new Map<string, { set: string; node: string }>();
      for (const o of [...claims.items, ...pods.items]) {
        if (o.metadata?.deletionTimestamp) continue;
        const set = o.metadata?.labels?.[DEVICE_SET_LABEL] ?? '';
        const node = o.metadata?.annotations?.[DEVICE_NODE_ANNOTATION] ?? '';
        pairs.set(`${set}\0${node}`, { set, node });
      }
      return [...pairs.values()];
    },
  };
}
