// Before a node's mutex gives a container its first allocation, it asks the apiserver whether the
// pod that allocation makes would be admitted (a dry run: nothing is created). A namespace whose
// ResourceQuota on shared GiB is used up refuses it; the container is then refused the
// allocation with that reason, so a tenant beyond its quota never holds a node's capacity.
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import type { WekaContainer } from '../../src/api/index.js';
import type { ContainerAllocation } from '../../src/allocation/types.js';
import { refusal, type AllocationOutcome } from '../../src/node/node-allocations.js';
import { driveContainerPod, podRefusalReason } from '../../src/manifests/pods.js';
import { apiMessage, kubeFailure } from './errors.js';

/** The refusal of the container's allocation when its pod would not be admitted; undefined when it would. */
export async function podRefusal(
  core: CoreV1Api,
  container: WekaContainer,
  allocation: ContainerAllocation,
  priorityClass?: string,
): Promise<(AllocationOutcome & { ok: false }) | undefined> {
  const pod = driveContainerPod(container, allocation, priorityClass);
  try {
    await core.createNamespacedPod({ namespace: pod.metadata.namespace, body: pod as V1Pod, dryRun: 'All' });
    return undefined;
  } catch (err) {
    const failure = kubeFailure(err);
    // A pod of the name exists already (it is counted as it is), or the apiserver is away: the
    // real create decides.
    if (failure === 'conflict' || failure === 'transient') return undefined;
    const message = apiMessage(err);
    return refusal(
      podRefusalReason(message),
      `the pod this allocation makes would be refused: ${message}; nothing was allocated, and the container asks again in 30 s or when capacity is released on the node`,
      true,
    );
  }
}
