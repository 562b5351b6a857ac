// Activity stubs shared by the workflows. Every activity waits for its cancellation to complete:
// a teardown must never start while a sign or add it would undo may still be running. Every
// activity heartbeats while it runs (activities/heartbeat.ts), so a dead worker is noticed within
// HEARTBEAT_TIMEOUT and the activity is retried.
import { ActivityCancellationType, proxyActivities } from '@temporalio/workflow';
import type { ContainerActivities, WekaActivities } from '../activities/types.js';
import { NON_RETRYABLE_ERRORS } from './retry.js';

export const HEARTBEAT_TIMEOUT = '5 seconds';

const retry = {
  initialInterval: '500 milliseconds',
  maximumInterval: '15 seconds',
  nonRetryableErrorTypes: NON_RETRYABLE_ERRORS,
};

export const kube = proxyActivities<ContainerActivities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: HEARTBEAT_TIMEOUT,
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry,
});

export const weka = proxyActivities<WekaActivities>({
  startToCloseTimeout: '3 minutes',
  heartbeatTimeout: HEARTBEAT_TIMEOUT,
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry,
});
