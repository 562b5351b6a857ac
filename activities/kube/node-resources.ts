// A node's extended resources follow its drive annotations: a pod that asks for shared GiB or
// whole drives is placed only where the node publishes them. A sign-drives operation publishes them
// with the annotations; a node annotated some other way (by a person, or by a script) gets them
// published here, before a drive container's pod is made on it.
import type { CoreV1Api, V1Node } from '@kubernetes/client-node';
import { FIELD_MANAGER } from '../../src/api/names.js';
import { promisedResources, unpublishedResources } from '../../src/node/node-drives.js';
import { isConflict, orIfMissing } from './errors.js';
import { mergeHeaders } from './weka-api.js';

const ATTEMPTS = 5;

/**
 * Publishes what the node's annotations promise and its allocatable does not show yet, conditional
 * on the node's resourceVersion (a publisher that read the devices meanwhile is never undone).
 */
export async function publishPromisedResources(core: CoreV1Api, first: V1Node): Promise<void> {
  let node: V1Node | null = first;
  for (let attempt = 0; node && attempt < ATTEMPTS; attempt++) {
    const promised = promisedResources(node.metadata?.annotations ?? {});
    if (!promised) return;
    const missing = unpublishedResources(promised, node.status?.allocatable);
    if (Object.keys(missing).length === 0) return;
    const name: string = node.metadata?.name ?? '';
    try {
      await core.patchNodeStatus(
        {
          name,
          fieldManager: FIELD_MANAGER.nodeSigner,
          body: {
            metadata: { resourceVersion: node.metadata?.resourceVersion },
            status: { capacity: missing, allocatable: missing },
          },
        },
        mergeHeaders,
      );
      return;
    } catch (err) {
      if (!isConflict(err)) throw err;
      node = await orIfMissing(core.readNode({ name }), null);
    }
  }
}
