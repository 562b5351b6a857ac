// Creating, waiting for and deleting the pods the operator owns.
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import type { PodManifest } from '../../src/lifecycle/pods.js';
import { currentContext } from '../heartbeat.js';
import { createIfAbsent, orIfMissing } from './errors.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Heartbeats when running inside an activity, so a long wait is not mistaken for a hang. */
function heartbeat(detail: string): void {
  currentContext()?.heartbeat(detail);
}

export async function ensurePod(core: CoreV1Api, manifest: PodManifest): Promise<void> {
  await createIfAbsent(core.createNamespacedPod({ namespace: manifest.metadata.namespace, body: manifest as V1Pod }));
}

/** How long to wait for a pod to run before the activity fails and is retried. */
export const POD_START_TIMEOUT_MS = 60_000;

export async function waitPodRunning(
  core: CoreV1Api,
  namespace: string,
  name: string,
  timeoutMs: number,
): Promise<void> {
  const started = Date.now();
  for (;;) {
    const pod = await orIfMissing(core.readNamespacedPod({ namespace, name }), null);
    if (pod?.status?.phase === 'Running') return;
    if (Date.now() - started > timeoutMs) {
      throw new Error(
        `pod ${namespace}/${name} is ${pod ? `in phase ${pod.status?.phase ?? 'unknown'}` : 'missing'} after ${timeoutMs} ms`,
      );
    }
    heartbeat(`waiting for pod ${namespace}/${name}`);
    await sleep(200);
  }
}

/**
 * Deletes the pod and waits until it is gone. A pod bound to a node that no longer exists never
 * finishes terminating (no kubelet will confirm it), so it is deleted at once, as Kubernetes' pod
 * garbage collector does for the pods of deleted nodes.
 */
export async function deletePod(core: CoreV1Api, namespace: string, name: string, timeoutMs = 60_000): Promise<void> {
  const pod = await orIfMissing(core.readNamespacedPod({ namespace, name }), null);
  if (!pod) return;
  const node = pod.spec?.nodeName;
  const orphaned = node !== undefined && (await orIfMissing(core.readNode({ name: node }), null)) === null;
  await orIfMissing(
    core.deleteNamespacedPod({ namespace, name, ...(orphaned ? { gracePeriodSeconds: 0 } : {}) }),
    null,
  );
  const started = Date.now();
  while ((await orIfMissing(core.readNamespacedPod({ namespace, name }), null)) !== null) {
    if (Date.now() - started > timeoutMs)
      throw new Error(`pod ${namespace}/${name} still exists ${timeoutMs} ms after deletion`);
    heartbeat(`waiting for pod ${namespace}/${name} to go away`);
    await sleep(200);
  }
}
