// Kubernetes Events the watcher records on the objects it acts on, for `kubectl describe`.
import type { CoreV1Api, CoreV1Event } from '@kubernetes/client-node';
import { API_GROUP_VERSION } from '../../../src/api/index.js';
import type { WatchedObject } from '../../../src/lifecycle/watch-decision.js';

export async function recordWatcherEvent(core: CoreV1Api, obj: WatchedObject, reason: string, message: string): Promise<void> {
  const now = new Date();
  const event: CoreV1Event = {
    metadata: { generateName: `${obj.name}.`, namespace: obj.namespace },
    involvedObject: { apiVersion: API_GROUP_VERSION, kind: obj.kind, name: obj.name, namespace: obj.namespace, uid: obj.uid },
    type: 'Normal',
    reason,
    message: message.slice(0, 1024),
    source: { component: 'weka-drives-watcher' },
    firstTimestamp: now,
    lastTimestamp: now,
    count: 1,
  };
  await core.createNamespacedEvent({ namespace: obj.namespace, body: event });
}
