// What a lifecycle shows on its object: the status its workflow owns, applied whole through the
// status subresource as the workflow's field manager, and the Events that go with its changes.
// Both in one local activity, so a step that changes a condition costs one round trip.
import type { CoreV1Event } from '@kubernetes/client-node';
import { API_GROUP_VERSION } from '../src/api/index.js';
import { FIELD_MANAGER } from '../src/lifecycle/names.js';
import type { ActivityDeps } from './deps.js';
import { isAlreadyExists, orIfMissing } from './kube/errors.js';
import { WekaApi } from './kube/weka-api.js';
import type { EventInput, StatusWrite } from './types.js';

export function createStatusActivities(deps: ActivityDeps) {
  const api = new WekaApi(deps.kubeConfig);

  /**
   * Records an Event about an object. With the object's uid it is not read first. With a name the
   * Event is created once: a retried call finds it there and is done.
   */
  async function recordEvent({ kind, ref, uid, name, type, reason, message }: EventInput): Promise<void> {
    let involved: { uid?: string; resourceVersion?: string } | undefined = uid === undefined ? undefined : { uid };
    if (!involved) {
      const obj = await api.get(kind, ref);
      // Gone: nobody will look for its Events.
      if (!obj) return;
      involved = {
        ...(obj.metadata.uid ? { uid: obj.metadata.uid } : {}),
        ...(obj.metadata.resourceVersion ? { resourceVersion: obj.metadata.resourceVersion } : {}),
      };
    }
    const now = new Date();
    const event: CoreV1Event = {
      metadata: { ...(name ? { name } : { generateName: `${ref.name}.` }), namespace: ref.namespace },
      involvedObject: { apiVersion: API_GROUP_VERSION, kind, name: ref.name, namespace: ref.namespace, ...involved },
      type,
      reason,
      message: message.slice(0, 1024),
      source: { component: 'weka-drives-operator' },
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    };
    try {
      await api.core.createNamespacedEvent({ namespace: ref.namespace, body: event });
    } catch (err) {
      if (!(name && isAlreadyExists(err))) throw err;
    }
  }

  return {
    recordEvent,

    /** Applies the status (when given), then records the Events of its changes, in order. */
    async writeStatus({ kind, ref, uid, status, events }: StatusWrite): Promise<void> {
      // The object is gone: there is no status left to show.
      if (status) await orIfMissing(api.applyStatus(kind, ref, { ...status }, FIELD_MANAGER.workflow), undefined);
      for (const e of events) await recordEvent({ kind, ref, uid, ...e });
    },
  };
}
