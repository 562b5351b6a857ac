// Creating, waiting for and deleting the pods the operator owns. The operator's pods are meant to
// run for ever: one that ended (Failed: evicted, its node shut down or rebooted; or Succeeded) never
// runs again, so ensuring a pod replaces it, and one being deleted is waited out and created again
// (decidePod in src/manifests/pods.ts).
import { ApplicationFailure } from '@temporalio/common';
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import {
  decidePod,
  describePod,
  identityEnv,
  podEnded,
  type PodFacts,
  type PodManifest,
} from '../../src/manifests/pods.js';
import { currentContext, pause } from '../heartbeat.js';
import { apiMessage, httpStatus, isAlreadyExists, isConflict, isNamespaceTerminating, orIfMissing } from './errors.js';

/** Heartbeats when running inside an activity, so a long wait is not mistaken for a hang. */
function heartbeat(detail: string): void {
  currentContext()?.heartbeat(detail);
}

/** How long to wait for a pod to run, or for an old pod to go, before the activity fails and is retried. */
export const POD_START_TIMEOUT_MS = 60_000;

/**
 * The error types `waitPodRunning` fails with, at once, for a pod that will not run however long
 * one waits: it has to be created again (`ensurePod` does).
 */
export const POD_FAILED = 'PodFailed';
export const POD_BEING_DELETED = 'PodBeingDeleted';
export const POD_MISSING = 'PodMissing';

/** The scheduler cannot place the pod (it waits, Pending, until its node has room). */
export const POD_UNSCHEDULABLE = 'PodUnschedulable';
/**
 * The apiserver refuses to create the pod: its namespace's ResourceQuota is used up, or an
 * admission policy or the schema refuses it. The same pod is refused until something changes.
 */
export const POD_REFUSED = 'PodRefused';
/** The pod's namespace is being deleted: no pod can be made there again. */
export const NAMESPACE_TERMINATING = 'NamespaceTerminating';

export function podFacts(pod: V1Pod): PodFacts {
  return {
    uid: pod.metadata?.uid,
    phase: pod.status?.phase,
    reason: pod.status?.reason,
    message: pod.status?.message,
    deletionTimestamp: pod.metadata?.deletionTimestamp ?? undefined,
    env: Object.fromEntries((pod.spec?.containers[0]?.env ?? []).map((e) => [e.name, e.value])),
    waiting: waitingReason(pod),
    unschedulable: pod.status?.conditions?.find(
      (c) => c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable',
    )?.message,
  };
}

function waitingReason(pod: V1Pod): string | undefined {
  const waiting = pod.status?.containerStatuses?.find((c) => c.state?.waiting?.reason)?.state?.waiting;
  if (!waiting) return undefined;
  return [waiting.reason, waiting.message].filter(Boolean).join(': ');
}

export interface EnsuredPod {
  /** Whether this call created the pod (false: a usable pod was there). */
  created: boolean;
  /** The ended pods this call deleted to create the pod again, described ("uid U, phase Failed (Evicted: ...)"). */
  replaced: string[];
}

/**
 * Makes sure the pod exists and can run: creates it when missing; replaces one that ended by
 * deleting that very pod (a uid precondition: a pod created meanwhile under the same name is never
 * deleted) and creating it again; waits out one being deleted, then creates it again. A pod that
 * is Pending, Running or Unknown is kept as it is. Fails after `timeoutMs` (an old pod that does
 * not go away); the activity is retried.
 */
/** A wait for a pod that failed because the pod must be made again (waitPodRunning). */
export function mustBeMadeAgain(err: unknown): boolean {
  return err instanceof ApplicationFailure && [POD_FAILED, POD_BEING_DELETED, POD_MISSING].includes(err.type ?? '');
}

export async function ensurePod(
  core: CoreV1Api,
  manifest: PodManifest,
  timeoutMs = POD_START_TIMEOUT_MS,
  /** Its node is cordoned (`kubectl cordon`, `kubectl drain`): a pod that must be made waits. */
  o: { cordoned?: boolean } = {},
): Promise<EnsuredPod> {
  const { namespace, name } = manifest.metadata;
  const started = Date.now();
  const replaced: string[] = [];
  for (;;) {
    const pod = await orIfMissing(core.readNamespacedPod({ namespace, name }), null);
    const facts = pod ? podFacts(pod) : null;
    const action = decidePod(facts, identityEnv(manifest.spec.containers[0]?.env ?? []));
    if (action === 'keep') return { created: false, replaced };
    if (Date.now() - started > timeoutMs) {
      throw new Error(`pod ${namespace}/${name} is still ${describePod(facts)} after ${timeoutMs} ms`);
    }
    // The operator's pods tolerate every taint and a proxy pod is bound to its node, so only this
    // keeps a drained node drained: a lost pod is made again once the node is uncordoned.
    if (action === 'create' && o.cordoned === true)
      throw ApplicationFailure.nonRetryable(
        `pod ${namespace}/${name} is not made while its node is cordoned (unschedulable): it is made once the node is uncordoned`,
        POD_UNSCHEDULABLE,
      );
    switch (action) {
      case 'create':
        try {
          await core.createNamespacedPod({ namespace, body: manifest as V1Pod });
          return { created: true, replaced };
        } catch (err) {
          if (isNamespaceTerminating(err))
            throw ApplicationFailure.nonRetryable(
              `pod ${namespace}/${name} cannot be made: its namespace is being deleted`,
              NAMESPACE_TERMINATING,
            );
          const code = httpStatus(err);
          // 403 from admission (a used-up ResourceQuota, a policy) or 422: not retried at once.
          if (code === 403 || code === 422)
            throw ApplicationFailure.nonRetryable(
              `pod ${namespace}/${name} was refused: ${apiMessage(err)}`,
              POD_REFUSED,
            );
          // Created meanwhile (by another attempt, or a pod on its way out): look at it again.
          if (!isAlreadyExists(err)) throw err;
        }
        break;
      case 'replace':
        if (facts?.uid && !replaced.some((r) => r.startsWith(`uid ${facts.uid},`))) {
          const why = podEnded(facts) ? '' : ', on other ports than its container';
          replaced.push(`uid ${facts.uid}, ${describePod(facts)}${why}`);
        }
        await deletePodByUid(core, namespace, name, facts?.uid);
        break;
      case 'wait-for-deletion':
        heartbeat(`waiting for pod ${namespace}/${name} to finish its deletion before creating it again`);
        await pause(200);
        break;
    }
  }
}

/**
 * Deletes that pod: the one with this uid, not one created under the same name after it was read.
 * Gone already, or another pod by now (the precondition fails: 409), is no error. A pod in a
 * terminal phase is removed by the apiserver at once (no kubelet has anything left to stop).
 */
export async function deletePodByUid(core: CoreV1Api, namespace: string, name: string, uid: string | undefined) {
  try {
    await orIfMissing(core.deleteNamespacedPod({ namespace, name, body: uid ? { preconditions: { uid } } : {} }), null);
  } catch (err) {
    if (!isConflict(err)) throw err;
  }
}

/**
 * Waits until the pod runs. A pod that will never run without being created again (it ended, it
 * is being deleted, or it is gone: the caller made it, so someone deleted it since) fails the wait
 * at once with a message that says so (types POD_FAILED, POD_BEING_DELETED, POD_MISSING), instead
 * of waiting out `timeoutMs`: waiting cannot help, `ensurePod` can. So does one the scheduler
 * cannot place (POD_UNSCHEDULABLE, not retried), with the scheduler's reason: the caller shows it
 * and looks again later, as the scheduler does. A pending pod is waited for, up to `timeoutMs`.
 */
export async function waitPodRunning(
  core: CoreV1Api,
  namespace: string,
  name: string,
  timeoutMs: number,
): Promise<void> {
  const started = Date.now();
  for (;;) {
    const pod = await orIfMissing(core.readNamespacedPod({ namespace, name }), null);
    const facts = pod ? podFacts(pod) : null;
    const action = decidePod(facts);
    if (action === 'keep' && facts?.phase === 'Running') return;
    if (action === 'keep' && facts?.phase === 'Pending' && facts.unschedulable !== undefined) {
      throw ApplicationFailure.nonRetryable(
        `pod ${namespace}/${name} cannot be scheduled: ${facts.unschedulable}`,
        POD_UNSCHEDULABLE,
      );
    }
    if (!pod) {
      throw ApplicationFailure.retryable(
        `pod ${namespace}/${name} is missing: it was deleted after it was made; ` +
          `waiting cannot help, it must be created again`,
        POD_MISSING,
      );
    }
    if (action === 'replace' || action === 'wait-for-deletion') {
      throw ApplicationFailure.retryable(
        `pod ${namespace}/${name} will not run: it is ${describePod(facts)}; ` +
          `waiting cannot help, it must be created again`,
        action === 'replace' ? POD_FAILED : POD_BEING_DELETED,
      );
    }
    if (Date.now() - started > timeoutMs) {
      throw new Error(`pod ${namespace}/${name} is ${describePod(facts)} after ${timeoutMs} ms`);
    }
    heartbeat(`waiting for pod ${namespace}/${name}`);
    await pause(200);
  }
}

/**
 * Deletes the pod and waits until it is gone. A pod bound to a node that no longer exists never
 * finishes terminating (no kubelet will confirm it), so it is deleted at once, as Kubernetes' pod
 * garbage collector does for the pods of deleted nodes; so is one whose deletion a person forced
 * (`force`) after checking that its node is down.
 */
export async function deletePod(
  core: CoreV1Api,
  namespace: string,
  name: string,
  timeoutMs = 60_000,
  force = false,
): Promise<void> {
  const pod = await orIfMissing(core.readNamespacedPod({ namespace, name }), null);
  if (!pod) return;
  const node = pod.spec?.nodeName;
  const orphaned = node !== undefined && (await orIfMissing(core.readNode({ name: node }), null)) === null;
  await orIfMissing(
    core.deleteNamespacedPod({ namespace, name, ...(orphaned || force ? { gracePeriodSeconds: 0 } : {}) }),
    null,
  );
  const started = Date.now();
  while ((await orIfMissing(core.readNamespacedPod({ namespace, name }), null)) !== null) {
    if (Date.now() - started > timeoutMs)
      throw new Error(`pod ${namespace}/${name} still exists ${timeoutMs} ms after deletion`);
    heartbeat(`waiting for pod ${namespace}/${name} to go away`);
    await pause(200);
  }
}
