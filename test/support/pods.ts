// The operator's pods as a test reads and disrupts them: read one by name, evict one as
// `kubectl drain` does (the eviction API, which PodDisruptionBudgets hold back).
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { kubeConfig } from './harness.js';

export async function readPod(namespace: string, name: string): Promise<V1Pod | null> {
  try {
    return await kubeConfig().makeApiClient(CoreV1Api).readNamespacedPod({ namespace, name });
  } catch (err) {
    if ((err as { code?: number }).code === 404) return null;
    throw err;
  }
}

/** Evicts the pod as `kubectl drain` does; the HTTP status the apiserver answered (201, or 429 for a budget). */
export async function evictPod(namespace: string, name: string, o: { dryRun?: boolean } = {}): Promise<number> {
  try {
    await kubeConfig()
      .makeApiClient(CoreV1Api)
      .createNamespacedPodEviction({
        namespace,
        name,
        body: {
          apiVersion: 'policy/v1',
          kind: 'Eviction',
          metadata: { name, namespace },
          // A probe: answered as an eviction would be, without evicting.
          ...(o.dryRun ? { deleteOptions: { dryRun: ['All'] } } : {}),
        },
      });
    return 201;
  } catch (err) {
    return (err as { code?: number }).code ?? 0;
  }
}
