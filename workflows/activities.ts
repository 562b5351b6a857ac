// Every activity stub the workflows use, one per kind of activity, each with its retry policy.
// Every activity heartbeats while it runs (activities/heartbeat.ts), so a dead worker is noticed
// within HEARTBEAT_TIMEOUT and the activity is retried. Activities that change a node or a Weka
// cluster wait for their cancellation to complete: a teardown must never start while a sign or
// add it would undo may still be running.
import {
  ActivityCancellationType,
  proxyActivities,
  proxyLocalActivities,
  type ActivityInterfaceFor,
  type ActivityOptions,
  type LocalActivityOptions,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { activitySummary } from '../src/lifecycle/activity-summary.js';
import type { MUTEX_REQUEST_ACTIVITIES } from '../src/protocol.js';

/** The activities of each stub: a stub's type admits only its own, so each runs under its policy. */
type KubeActivity =
  | 'createClusterMembers'
  | 'deleteClusterContainers'
  | 'deleteContainerPod'
  | 'deviceSetPlan'
  | 'deviceSetRemnants'
  | 'ensureClusterDisruptionBudget'
  | 'ensureContainerPod'
  | 'ensureDeviceSet'
  | 'findPeerPod'
  | 'growClusterMember'
  | 'listSelectedNodes'
  | 'nodesToVerify'
  | 'planProxyRotation'
  | 'removeClusterMember'
  | 'removeMigratingMember'
  | 'startContainerPod';
type KubeLocalActivity =
  | 'clusterMembers'
  | 'clusterView'
  | 'lostPods'
  | 'memberPodRunning'
  | 'nodeExists'
  | 'nodeReady'
  | 'readCluster'
  | 'readClusterGUID'
  | 'readContainer'
  | 'readJoinIps'
  | 'readNodeAllocation'
  | 'readOperation'
  | 'recordNodeEvent'
  | 'removeFinalizer'
  | 'slotState'
  | 'wakeMemberCluster'
  | 'writeStatus';
type WekaActivity =
  | 'addWholeDriveToCluster'
  | 'chooseNodeDevices'
  | 'formWekaCluster'
  | 'joinCluster'
  | 'planSharingMigration'
  | 'proxyDisruptionVerdict'
  | 'verifyNodeDrives'
  | 'signAndAddVirtualDrive';
type InPodActivity =
  | 'findWekaContainer'
  | 'releaseWholeDrive'
  | 'removeDriveFromCluster'
  | 'removeWekaContainer'
  | 'removeWholeDriveFromCluster'
  | 'startContainerPod'
  | 'unsignVirtualDrive';
type DecisionActivity = (typeof MUTEX_REQUEST_ACTIVITIES)[keyof typeof MUTEX_REQUEST_ACTIVITIES];
type Stub<K extends keyof Activities> = ActivityInterfaceFor<Pick<Activities, K>>;

const HEARTBEAT_TIMEOUT = '5 seconds';

/**
 * Error types that retrying cannot fix: bad input, unparseable output, a definite refusal by a
 * Weka tool, an object that is not there, a Kubernetes call (or an exec) the apiserver refused, an
 * exec into a pod that is gone (the step that makes the pod runs again instead). Activities
 * throw them as non-retryable failures; the policies list them too, so that an error of that type
 * is never retried whatever threw it.
 */
const NON_RETRYABLE_ERRORS = [
  'WekaInputError',
  'WekaOutputError',
  'WekaCommandRefused',
  'InvalidObject',
  'NotFound',
  'KubeRefused',
  'ExecForbidden',
  'ExecPodMissing',
];

const common = { heartbeatTimeout: HEARTBEAT_TIMEOUT } satisfies ActivityOptions;

/**
 * The activity stubs with `options`, each call carrying a one-line summary of what it does and to
 * what (src/lifecycle/activity-summary.ts), shown for the step in the Temporal UI.
 */
function summarized<K extends keyof Activities>(options: ActivityOptions): Stub<K> {
  return withSummaries(proxyActivities<Activities>(options), options);
}

type Summarizable = Record<string, { executeWithOptions(options: object, args: unknown[]): Promise<unknown> }>;

function withSummaries<S extends object>(stubs: S, options: ActivityOptions | LocalActivityOptions): S {
  return new Proxy(stubs, {
    get(target, name) {
      const stub = (target as Summarizable)[name as string];
      if (typeof name !== 'string' || !stub) return stub;
      return (...args: unknown[]) =>
        stub.executeWithOptions({ ...options, summary: activitySummary(name, args[0]) }, args);
    },
  });
}
const waitForCancellation = { cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED };

/**
 * Kubernetes calls that may wait or write many objects (pods, cluster members, device sets, node
 * lists): each retried for as long as the apiserver is away, with back-off up to 15 s. The short
 * ones are `kubeLocal`, with the same options.
 */
const kubeCallOptions = {
  ...waitForCancellation,
  startToCloseTimeout: '2 minutes',
  retry: {
    initialInterval: '500 milliseconds',
    maximumInterval: '15 seconds',
    nonRetryableErrorTypes: NON_RETRYABLE_ERRORS,
  },
} satisfies LocalActivityOptions;
export const kube = summarized<KubeActivity>({ ...common, ...kubeCallOptions });

/**
 * Short Kubernetes reads, status applies, Events and finalizer removals, as local activities: the
 * worker that runs the workflow runs them inside the workflow task, and each is recorded as one
 * marker, where an activity costs three events and the workflow task that takes its result. A
 * lifecycle applies its status at every step, so without this most of its history would be status
 * writes. Retried like `kube` while the apiserver is away; past a minute the worker waits between
 * attempts on a timer instead of holding the workflow task.
 */
export const kubeLocal: Stub<KubeLocalActivity> = withSummaries(
  proxyLocalActivities<Activities>(kubeCallOptions),
  kubeCallOptions,
);

/**
 * Weka CLI calls in a pod (join, sign, add, remove): each bounded by the exec timeout; a refusal
 * by the tool is final, anything else (a pod restarting, exec cut) is retried.
 */
export const weka = summarized<WekaActivity>({
  ...common,
  ...waitForCancellation,
  startToCloseTimeout: '3 minutes',
  retry: {
    initialInterval: '500 milliseconds',
    maximumInterval: '15 seconds',
    nonRetryableErrorTypes: NON_RETRYABLE_ERRORS,
  },
});

/**
 * A teardown's steps in the container's pod (reach the pod, remove and unsign its drives): a few
 * tries each, after which the teardown says on the object that it cannot reach the pod, and tries
 * again later (workflows/drive-container/teardown.ts), instead of retrying unseen for ever.
 */
export const inPod = summarized<InPodActivity>({
  ...common,
  ...waitForCancellation,
  startToCloseTimeout: '3 minutes',
  retry: {
    initialInterval: '1 second',
    maximumInterval: '10 seconds',
    maximumAttempts: 3,
    nonRetryableErrorTypes: NON_RETRYABLE_ERRORS,
  },
});

/**
 * The mutex's decisions (allocate, release, ensure or remove the proxy, sign a device, ports,
 * publish drives): a decision cannot be made without the apiserver, so transient failures are
 * retried quickly; an activity whose failures could last (signing a device in a proxy pod that
 * cannot be reached) answers them as a refusal after a few attempts instead.
 */
export const decisions = summarized<DecisionActivity>({
  ...common,
  startToCloseTimeout: '2 minutes',
  retry: {
    initialInterval: '200 milliseconds',
    maximumInterval: '10 seconds',
    nonRetryableErrorTypes: NON_RETRYABLE_ERRORS,
  },
});

/**
 * Sending a request to a mutex (signal-with-start), as a local activity like `kubeLocal`: retried
 * quickly; the requester re-sends anyway.
 */
const requestOptions = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '5 seconds' },
} satisfies LocalActivityOptions;
export const requests: Stub<'sendMutexRequest'> = withSummaries(
  proxyLocalActivities<Activities>(requestOptions),
  requestOptions,
);

/**
 * Delivering a decision's answers is retried for a minute, never for ever: a mutex must not wait
 * behind a signal it cannot deliver. A requester that misses its answer sends its request again
 * after a minute and is answered from the record; a waiter that misses a wake-up asks again on
 * its own.
 */
export const delivery = summarized<'answerMutexRequests'>({
  ...common,
  startToCloseTimeout: '30 seconds',
  scheduleToCloseTimeout: '1 minute',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '5 seconds' },
});
