// The proxy decisions a node's mutex workflow makes, one at a time: ensure the node's ssdproxy,
// run it from a new image (rotate-ssdproxy), and remove it once nothing uses it (allocation decisions are in allocations.ts). Each reads the
// apiserver afresh and is idempotent. Refusals are answers (data), not exceptions.
import type { WekaContainer } from '../src/api/index.js';
import { MANAGED_BY, MANAGED_BY_LABEL, proxyName, ROTATED_FROM_ANNOTATION } from '../src/api/names.js';
import { nodeOwner, wekaPod } from '../src/manifests/pods.js';
import { proxyResources } from '../src/manifests/pod-resources.js';
import { decodeSharedDrivesAnnotation, SHARED_DRIVES_ANNOTATION } from '../src/annotations/shared-drives.js';
import { refusal as refused } from '../src/node/node-allocations.js';
import type { ActivityDeps } from './deps.js';
import { createIfAbsent, orIfMissing } from './kube/errors.js';
import { ApplicationFailure } from '@temporalio/activity';
import {
  deletePod,
  deletePodByUid,
  ensurePod,
  POD_START_TIMEOUT_MS,
  POD_UNSCHEDULABLE,
  waitPodRunning,
} from './kube/pods.js';
import { WekaApi } from './kube/weka-api.js';
import { ALLOCATIONS_ANNOTATION, decodeLedger } from '../src/node/allocation-ledger.js';
import type { MutexOutcome } from '../src/protocol.js';
import type { ProxyRotated } from './types.js';

/**
 * How many drive containers on the node need its ssdproxy: every one but those being deleted whose
 * allocation is already released.
 */
export async function proxyUsers(api: WekaApi, node: string): Promise<number> {
  return (await api.listContainersOnNode(node)).filter((c) => {
    if (c.spec.mode !== 'drive') return false;
    const released = !c.status?.allocations?.virtualDrives?.length;
    return !(c.metadata.deletionTimestamp && released);
  }).length;
}

export function createNodeDecisions(deps: ActivityDeps) {
  const api = new WekaApi(deps.kubeConfig);

  /**
   * Makes the node's proxy object and pod if absent and waits until the pod runs. The pod runs the
   * object's image (the one a rotation set), or `image` for a new object: the operator's proxy
   * image unless given.
   */
  async function runProxy(node: string, image = deps.proxyImage): Promise<MutexOutcome> {
    const name = proxyName(node);
    const ns = deps.operatorNamespace;
    // A proxy pod for a node that does not exist would never run; say so instead.
    const nodeObject = await orIfMissing(api.core.readNode({ name: node }), null);
    if (!nodeObject) {
      return refused(
        'NodeNotFound',
        `node ${node} does not exist; the container waits until it does or its spec changes`,
        true,
      );
    }
    // Both exist only for the node: Kubernetes' garbage collector deletes them with it.
    const owners = [nodeOwner({ name: node, uid: nodeObject.metadata?.uid ?? '' })];
    await createIfAbsent(
      api.createContainer({
        apiVersion: 'weka.weka.io/v1alpha1',
        kind: 'WekaContainer',
        metadata: { name, namespace: ns, labels: { [MANAGED_BY_LABEL]: MANAGED_BY }, ownerReferences: owners },
        spec: { mode: 'ssdproxy', nodeName: node, image },
      } as WekaContainer),
    );
    // Its pod carries the proxy container's uid, which the node's drain guard selects it by.
    const proxy = await api.get<WekaContainer>('WekaContainer', { namespace: ns, name });
    // An evicted proxy pod (or one whose node rebooted) is replaced; one being deleted is waited out.
    const manifest = wekaPod({
      name,
      namespace: ns,
      node,
      image: proxy?.spec.image ?? image,
      role: 'ssdproxy',
      owner: `${ns}/${name}`,
      ownerUID: proxy?.metadata.uid,
      owners,
      resources: proxyResources(sharedDrives(nodeObject.metadata?.annotations?.[SHARED_DRIVES_ANNOTATION])),
      priorityClass: deps.podPriorityClass,
    });
    const cordoned = nodeObject.spec?.unschedulable === true;
    const pod = await ensurePod(api.core, manifest, undefined, { cordoned }).catch((err: unknown) => {
      if (err instanceof ApplicationFailure && err.type === POD_UNSCHEDULABLE) return err;
      throw err;
    });
    if (pod instanceof ApplicationFailure) return refused('NodeCordoned', `node ${node}: ${pod.message}`, true);
    if (pod.replaced.length > 0) deps.logger.warn({ node, replaced: pod.replaced }, 'replaced the ssdproxy pod');
    await waitPodRunning(api.core, ns, name, POD_START_TIMEOUT_MS);
    return { ok: true, result: { namespace: ns, pod: name } };
  }

  return {
    async ensureProxy({ node }: { node: string }): Promise<MutexOutcome> {
      return runProxy(node);
    },

    /**
     * Runs the node's ssdproxy from `image`: sets its object's image, then deletes its pod when the
     * pod runs another image and makes it again from the new one, and waits until it runs. A pod
     * that does not run within POD_START_TIMEOUT_MS is answered as a refusal (ProxyNotRunning),
     * never retried: the campaign stops there and says so. A node without a proxy has nothing to rotate.
     */
    async rotateProxy({ node, image }: { node: string; image: string }): Promise<MutexOutcome> {
      const ns = deps.operatorNamespace;
      const name = proxyName(node);
      const proxy = await api.getContainer({ namespace: ns, name });
      if (!proxy) return { ok: true, result: { previousImage: '', rotated: false } satisfies ProxyRotated };
      const pod = await orIfMissing(api.core.readNamespacedPod({ namespace: ns, name }), null);
      // A retry of a restart that changed the object already finds the image it ran before recorded there.
      const recorded = proxy.spec.image === image ? proxy.metadata.annotations?.[ROTATED_FROM_ANNOTATION] : undefined;
      const previousImage = recorded ?? pod?.spec?.containers[0]?.image ?? proxy.spec.image ?? '';
      if (proxy.spec.image !== image)
        await api.patchSpec(
          'WekaContainer',
          { namespace: ns, name },
          { image },
          { [ROTATED_FROM_ANNOTATION]: previousImage },
        );
      if (pod && pod.spec?.containers[0]?.image !== image) {
        deps.logger.info({ node, from: previousImage, to: image }, 'restarting the ssdproxy from a new image');
        await deletePodByUid(api.core, ns, name, pod.metadata?.uid);
      }
      try {
        const outcome = await runProxy(node, image);
        if (!outcome.ok) return outcome;
      } catch (err) {
        if (!(err instanceof Error) || !/after \d+ ms/.test(err.message)) throw err;
        return refused(
          'ProxyNotRunning',
          `node ${node}: the ssdproxy from ${image} does not run: ${err.message}`,
          false,
        );
      }
      return { ok: true, result: { previousImage, rotated: true } satisfies ProxyRotated };
    },

    async removeProxyIfUnused({ node }: { node: string }): Promise<MutexOutcome> {
      const users = await proxyUsers(api, node);
      if (users > 0) return { ok: true, result: { removed: false, users } };
      // A container whose object is gone (its finalizer removed by hand) keeps its ledger entry until
      // its teardown releases it, and that release reads the node's devices in the proxy pod.
      // A ledger that cannot be read may hold some: the proxy stays until a person mends it.
      const nodeObject = await orIfMissing(api.core.readNode({ name: node }), null);
      const ledger = decodeLedger(nodeObject?.metadata?.annotations?.[ALLOCATIONS_ANNOTATION]);
      const held = ledger.ok ? Object.keys(ledger.ledger.containers).length : 1;
      if (nodeObject && held > 0) return { ok: true, result: { removed: false, users: held } };
      const name = proxyName(node);
      await deletePod(api.core, deps.operatorNamespace, name);
      await api.delete('WekaContainer', { namespace: deps.operatorNamespace, name });
      deps.logger.info({ node }, 'removed ssdproxy: no drive container left on the node');
      return { ok: true, result: { removed: true, users: 0 } };
    },
  };
}

/** The node's shared drives, which size the proxy's huge pages; none when the annotation is absent or malformed. */
function sharedDrives(annotation: string | undefined): readonly { capacityGiB: number }[] {
  if (annotation === undefined) return [];
  const decoded = decodeSharedDrivesAnnotation(annotation);
  return decoded.ok ? decoded.drives : [];
}
