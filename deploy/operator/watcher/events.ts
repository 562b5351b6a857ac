// Kubernetes Events the watcher records on the objects it acts on, for `kubectl describe`.
import type { CoreV1Api, CoreV1Event } from '@kubernetes/client-node';
import { createIfAbsent } from '../../../activities/kube/errors.js';
import { API_GROUP_VERSION } from '../../../src/api/index.js';
import { watcherEventName } from '../../../src/api/names.js';
import type { WatchedObject } from '../../../src/operator/watch-decision.js';

/**
 * Records one Event per object, reason and occurrence: when another replica's watcher already
 * recorded it for the same action, this one is not recorded again.
 */
export async function recordWatcherEvent(
  core: CoreV1Api,
  obj: WatchedObject,
  reason: string,
  message: string,
  occurrence: string | number,
  type: 'Normal' | 'Warning' = 'Normal',
): Promise<void> {
  const now = new Date();
  const event: CoreV1Event = {
    metadata: { name: watcherEventName(obj, reason, occurrence), namespace: obj.namespace },
    involvedObject: {
      apiVersion: API_GROUP_VERSION,
      kind: obj.kind,
      name: obj.name,
      namespace: obj.namespace,
      uid: obj.uid,
    },
    type,
    reason,
    message: message.slice(0, 1024),
    source: { component: 'weka-drives-watcher' },
    firstTimestamp: now,
    lastTimestamp: now,
    count: 1,
  };
  await createIfAbsent(core.createNamespacedEvent({ namespace: obj.namespace, body: event }));
}
