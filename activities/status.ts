// What a lifecycle shows on its object: the status its workflow owns, applied whole through the
// status subresource as the workflow's field manager, and the Events that go with its changes.
// Both in one local activity, so a step that changes a condition costs one round trip.
import type { CoreV1Event } from '@kubernetes/client-node';
import { API_GROUP_VERSION, WRITTEN_BY_RULE } from '../src/api/index.js';
import { FIELD_MANAGER, type ObjectRef } from '../src/api/names.js';
import type { ActivityDeps } from './deps.js';
import {
  apiMessage,
  httpStatus,
  isAlreadyExists,
  isConflict,
  isNamespaceTerminating,
  isNotFound,
  orIfMissing,
} from './kube/errors.js';
import { WekaApi } from './kube/weka-api.js';
import type { EventInput, NodeEventInput, StatusWrite, StatusWriteOutcome } from './types.js';

export function createStatusActivities(deps: ActivityDeps) {
  const api = new WekaApi(deps.kubeConfig);
  const versions = new VersionsSeen(VERSIONS_KEPT);

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
    const event = eventOf(
      { ...(name ? { name } : { generateName: `${ref.name}.` }), namespace: ref.namespace },
      { apiVersion: API_GROUP_VERSION, kind, name: ref.name, namespace: ref.namespace, ...involved },
      { type, reason, message },
    );
    try {
      await api.core.createNamespacedEvent({ namespace: ref.namespace, body: event });
    } catch (err) {
      if (name && isAlreadyExists(err)) return;
      // Its namespace is being deleted, and the Event with it: the log keeps what it said.
      if (isNamespaceTerminating(err)) {
        deps.logger.info(
          { object: `${ref.namespace}/${ref.name}`, kind, type, reason, message },
          'Event not recorded: its namespace is being deleted',
        );
        return;
      }
      throw err;
    }
  }

  /**
   * Records an Event on a Node (in the default namespace, where Kubernetes records node Events):
   * for what a teardown left on the node when its own object's namespace can take no Event.
   */
  async function recordNodeEvent({ node, type, reason, message }: NodeEventInput): Promise<void> {
    const found = await orIfMissing(api.core.readNode({ name: node }), null);
    // Gone: nobody will look for its Events.
    if (!found) return;
    const uid = found.metadata?.uid;
    const involved = { apiVersion: 'v1', kind: 'Node', name: node, ...(uid ? { uid } : {}) };
    const body = eventOf({ generateName: `${node}.`, namespace: 'default' }, involved, { type, reason, message });
    await api.core.createNamespacedEvent({ namespace: 'default', body });
    if (type === 'Warning') deps.onNodeWarning?.(reason);
  }

  return {
    recordEvent,
    recordNodeEvent,

    /**
     * Applies the status (when given), then records the Events of its changes, in order. Nothing is
     * done when the name is another object's now (or nobody's), or when the object records a newer
     * write of the workflow: this one came late, from a workflow task done again elsewhere.
     */
    async writeStatus({ kind, ref, uid, status, events }: StatusWrite): Promise<StatusWriteOutcome> {
      if (status) {
        const outcome = await applyOnObjectOf(uid, kind, ref, status);
        if (outcome !== 'applied') {
          deps.logger.warn({ kind, ref, uid, writtenBy: status.writtenBy, outcome }, 'status write not applied');
          return outcome;
        }
      }
      for (const e of events) await recordEvent({ kind, ref, uid, ...e });
      return 'applied';
    },
  };

  /**
   * Applies the status on the object of `uid` at a version of that object: the one its last write
   * here left, else one read now. A version is the uid's fence, since an object created again under
   * the name never has it; a conflict (another writer, or another object) reads the object again.
   */
  async function applyOnObjectOf(
    uid: string,
    kind: StatusWrite['kind'],
    ref: ObjectRef,
    status: NonNullable<StatusWrite['status']>,
  ): Promise<StatusWriteOutcome> {
    let version = versions.take(uid);
    for (let attempt = 1; ; attempt++) {
      if (version === undefined) {
        const obj = await api.get(kind, ref);
        if (obj?.metadata.uid !== uid) return 'gone';
        version = obj.metadata.resourceVersion;
      }
      try {
        const written = await api.applyStatus(kind, ref, { ...status }, FIELD_MANAGER.workflow, version);
        versions.remember(uid, written);
        return 'applied';
      } catch (err) {
        if (isNotFound(err)) return 'gone';
        if (httpStatus(err) === 422 && apiMessage(err).includes(WRITTEN_BY_RULE.message)) return 'stale';
        // Another writer changed the object since that version: read it again. Past a few, the
        // local activity's retries take over, with their backoff.
        if (!isConflict(err) || attempt === CONFLICT_RETRIES) throw err;
        version = undefined;
      }
    }
  }
}

/** Applies that meet another writer's change, read again at once before the call fails. */
const CONFLICT_RETRIES = 3;

/**
 * Objects whose last version written here is kept. Past it the oldest are forgotten, and their
 * next write reads first: a parked lifecycle writes rarely, and memory stays flat in their number.
 */
const VERSIONS_KEPT = 2_000;

/** The resourceVersion each object's last status write here left, by uid, the newest last. */
class VersionsSeen {
  private readonly byUid = new Map<string, string>();

  constructor(private readonly limit: number) {}

  /** The version last left on the object, forgotten: a failed write must not leave it behind. */
  take(uid: string): string | undefined {
    const version = this.byUid.get(uid);
    this.byUid.delete(uid);
    return version;
  }

  remember(uid: string, version: string | undefined): void {
    if (version === undefined) return;
    this.byUid.set(uid, version);
    if (this.byUid.size > this.limit) this.byUid.delete(this.byUid.keys().next().value as string);
  }
}

/** An Event of the operator's, first seen now, about the `involved` object. */
function eventOf(
  metadata: CoreV1Event['metadata'],
  involved: CoreV1Event['involvedObject'],
  o: { type: string; reason: string; message: string },
): CoreV1Event {
  const now = new Date();
  return {
    metadata,
    involvedObject: involved,
    type: o.type,
    reason: o.reason,
    message: o.message.slice(0, 1024),
    source: { component: 'weka-drives-operator' },
    firstTimestamp: now,
    lastTimestamp: now,
    count: 1,
  };
}
