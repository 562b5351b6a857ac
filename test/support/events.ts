// The Events on an object, as a user sees them in `kubectl describe`.
import { CoreV1Api, type CoreV1Event } from '@kubernetes/client-node';
import type { ObjectRef } from '../../src/api/names.js';
import { eventually } from './async.js';
import { kubeConfig } from './harness.js';

/** Every Event on the object named `ref` in its namespace. */
export async function eventsOf(ref: ObjectRef): Promise<CoreV1Event[]> {
  const events = await kubeConfig().makeApiClient(CoreV1Api).listNamespacedEvent({ namespace: ref.namespace });
  return events.items.filter((e) => e.involvedObject.name === ref.name);
}

/** Waits for a Warning Event on the object with this reason, and returns its message. */
export async function warningEvent(ref: ObjectRef, reason: string): Promise<string> {
  return eventually(`${ref.name}: a Warning Event ${reason}`, async () => {
    const found = (await eventsOf(ref)).find((e) => e.type === 'Warning' && e.reason === reason);
    return found ? (found.message ?? '') : undefined;
  });
}
