// createActivities(deps): every activity of the operator, closed over the Kubernetes client, the
// exec transport, the Temporal client and the logger. Their type, `Activities`, is what the
// implementations declare (each activity's parameters and result): workflows import it as a type.
import { createClusterActivities } from './cluster.js';
import { createContainerActivities } from './container.js';
import { createStatusActivities } from './status.js';
import type { ActivityDeps } from './deps.js';
import { createAllocationDecisions } from './allocations.js';
import { createNodeDecisions } from './node-decisions.js';
import { createClusterPortDecisions } from './cluster-ports.js';
import { createRequesterActivities } from './requester.js';
import { createWekaActivities } from './weka.js';
import { createWholeDriveActivities } from './whole-drives.js';
import { heartbeating } from './heartbeat.js';
import { createSignDrivesActivities } from './sign-drives.js';
import { createDeviceSetActivities } from './device-sets.js';
import { createDisruptionBudgetActivities } from './disruption-budget.js';
import { createStaleVirtualDrives } from './stale-virtual-drives.js';
import { createProxyRotationActivities } from './proxy-rotation.js';
import { createDriveVerification } from './drive-verification.js';
import { createBlockedDrives } from './blocked-drives.js';
import { createSharingMigration } from './sharing-migration.js';
import { ApplicationFailure } from '@temporalio/common';
import { MUTEX_REQUEST_ACTIVITIES } from '../src/protocol.js';
import { describeKubeError, isDeterministic } from './kube/errors.js';

export type Activities = ReturnType<typeof createActivities>;

export function createActivities(deps: ActivityDeps) {
  return heartbeating(
    instrumented(
      deps,
      decisionsFailFast({
        ...createAllocationDecisions(deps),
        ...createNodeDecisions(deps),
        ...createClusterPortDecisions(deps),
        ...createRequesterActivities(deps),
        ...createContainerActivities(deps),
        ...createStatusActivities(deps),
        ...createClusterActivities(deps),
        ...createWekaActivities(deps),
        ...createWholeDriveActivities(deps),
        ...createSignDrivesActivities(deps),
        ...createDeviceSetActivities(deps),
        ...createDisruptionBudgetActivities(deps),
        ...createStaleVirtualDrives(deps),
        ...createProxyRotationActivities(deps),
        ...createDriveVerification(deps),
        ...createBlockedDrives(deps),
        ...createSharingMigration(deps),
      }),
    ),
  );
}

/** The activities a mutex executes: every other decision of the node waits while one runs. */
const MUTEX_EXECUTED: ReadonlySet<string> = new Set(Object.values(MUTEX_REQUEST_ACTIVITIES));

/**
 * A mutex's activity must never retry for ever what retrying cannot fix: a Kubernetes call that
 * the apiserver refused (a 4xx other than a conflict: the object fails the schema or a policy, or
 * the operator is forbidden it) fails the activity for good (KubeRefused), and the mutex answers
 * its requester with that refusal and goes on with the next decision.
 */
export function decisionsFailFast<T extends object>(activities: T): T {
  return Object.fromEntries(
    Object.entries(activities).map(([name, fn]) => {
      if (typeof fn !== 'function' || !MUTEX_EXECUTED.has(name)) return [name, fn];
      const run = fn as (...a: unknown[]) => Promise<unknown>;
      const guarded = async (...args: unknown[]) => {
        try {
          return await run(...args);
        } catch (err) {
          if (!isDeterministic(err)) throw err;
          throw ApplicationFailure.nonRetryable(`${name}: ${describeKubeError(err)}`, 'KubeRefused');
        }
      };
      return [name, guarded];
    }),
  ) as T;
}

/** Applies deps.instrument, when given, to every activity. */
function instrumented<T extends object>(deps: ActivityDeps, activities: T): T {
  const wrap = deps.instrument;
  if (!wrap) return activities;
  return Object.fromEntries(
    Object.entries(activities).map(([name, fn]) => [
      name,
      typeof fn === 'function' ? wrap(name, fn as (...a: unknown[]) => Promise<unknown>) : fn,
    ]),
  ) as T;
}

export type { ActivityDeps } from './deps.js';
