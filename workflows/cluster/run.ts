// One run of a WekaCluster's workflow: what its steps share (the cluster as last read, its status,
// its lifecycle, the mutex client, and the little each step remembers between passes), the read
// that starts it, and the wait between passes that reads the cluster afresh.
import { upsertMemo, upsertSearchAttributes } from '@temporalio/workflow';
import type { ClusterSnapshot } from '../../activities/types.js';
import type { ObjectRef } from '../../src/api/names.js';
import { WekaCluster, type ObjectWorkflowInput } from '../../src/protocol.js';
import { kubeLocal } from '../activities.js';
import { ClusterStatus } from '../cluster-status.js';
import { Lifecycle, continuedRun, objectState, type ObjectState, type Received } from '../lifecycle.js';
import { installMutexClient, type MutexClient } from '../mutex-client.js';

/** How long a refused step waits before it is tried again. */
export const RETRY_WAIT = '30 seconds';

export interface ClusterRun {
  readonly ref: ObjectRef;
  readonly input: ObjectWorkflowInput;
  readonly status: ClusterStatus;
  readonly life: Lifecycle;
  readonly mutex: MutexClient;
  /** The cluster as last read: each wait between passes reads it afresh. */
  cluster: ClusterSnapshot;
  /**
   * A run continued from an earlier one whose cluster records its port range (the PortsAllocated
   * condition, written after the allocator wrote status.ports) does not ask the ports mutex again:
   * it would answer with the same ports.
   */
  readonly portsRecorded: boolean;
  /**
   * The spec generation and selected nodes at which every device was signed: nothing to look at
   * until they change, or for DEVICE_SET_REVIEW_MS (./device-set-pass.ts): a device pod deleted
   * meanwhile is made again then.
   */
  deviceSetsSettled: string;
  /** The device-set pass under way, if one is. */
  deviceSetWork: Promise<void> | undefined;
  /** Whether the cluster was formed at the last look: formed since, its members learn its GUID. */
  formedBefore: boolean;
  /** The member count the cluster's disruption budget was last made for, in this run. */
  budgetFor: number | undefined;
  /** Whether the cluster was Ready once: after that, converging is an update, not a forming. */
  everReady: boolean;
}

/**
 * Starts the run: answers the lifecycle's signals and the mutex's, reads the cluster, and restores
 * what its status records. Undefined when the cluster is gone, or another cluster has its name.
 */
export async function openRun(input: ObjectWorkflowInput): Promise<ClusterRun | undefined> {
  const ref: ObjectRef = { namespace: input.namespace, name: input.name };
  const mutex = installMutexClient();
  const status = new ClusterStatus(ref, input.uid);
  const life = new Lifecycle(input, status);

  const cluster = await kubeLocal.readCluster(ref);
  if (!cluster || cluster.uid !== input.uid) return undefined;
  upsertMemo({ namespace: ref.namespace, name: ref.name, uid: input.uid });
  upsertSearchAttributes([{ key: WekaCluster, value: `${ref.namespace}/${ref.name}` }]);
  status.observedGeneration = cluster.generation;
  status.restoreConditions(cluster.status.conditions);
  if (cluster.status.clusterGUID) status.clusterGUID = cluster.status.clusterGUID;

  return {
    ref,
    input,
    status,
    life,
    mutex,
    cluster,
    portsRecorded:
      continuedRun() && cluster.status.conditions.some((c) => c.type === 'PortsAllocated' && c.status === 'True'),
    deviceSetsSettled: '',
    deviceSetWork: undefined,
    formedBefore: Boolean(status.clusterGUID),
    budgetFor: undefined,
    everReady: status.conditions.some((c) => c.type === 'Ready' && c.status === 'True'),
  };
}

/** What the apiserver says of the run's cluster now. */
export async function clusterState(run: ClusterRun): Promise<ObjectState> {
  return objectState(await kubeLocal.readCluster(run.ref), run.input.uid);
}

/**
 * Waits until a spec change, a wake-up, or the timeout; re-reads the cluster after. A new run
 * (past the history limit) reads it afresh and looks again, as a spec change or a wake-up would.
 */
export async function pause(run: ClusterRun, timeout: string, since?: Received): Promise<void> {
  await run.life.changed({ wakeUps: true, timeout, ...(since ? { since } : {}) });
  await run.life.continueAsNewIfLong(() => run.deviceSetWork ?? Promise.resolve());
  const now = await kubeLocal.readCluster(run.ref);
  if (now?.uid === run.input.uid) {
    run.cluster = now;
    run.status.observedGeneration = now.generation;
  } else {
    // Gone, or another cluster of the name (this one forced out, its finalizer removed by hand):
    // its teardown, as if the watcher had told of the deletion.
    run.life.requestTeardown();
  }
}
