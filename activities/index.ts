// createActivities(deps): every activity of the operator, closed over the Kubernetes client, the
// exec transport, the Temporal client and the logger. Their type, `Activities`, is what the
// implementations declare (each activity's parameters and result): workflows import it as a type.
import { createClusterActivities } from './cluster.js';
import { createContainerActivities } from './container.js';
import type { ActivityDeps } from './deps.js';
import { createAllocationDecisions } from './allocations.js';
import { createNodeDecisions } from './node-decisions.js';
import { createClusterPortDecisions } from './cluster-ports.js';
import { createRequesterActivities } from './requester.js';
import { createWekaActivities } from './weka.js';
import { heartbeating } from './heartbeat.js';
import { createSignDrivesActivities } from './sign-drives.js';

export type Activities = ReturnType<typeof createActivities>;

export function createActivities(deps: ActivityDeps) {
  return heartbeating(
    instrumented(deps, {
      ...createAllocationDecisions(deps),
      ...createNodeDecisions(deps),
      ...createClusterPortDecisions(deps),
      ...createRequesterActivities(deps),
      ...createContainerActivities(deps),
      ...createClusterActivities(deps),
      ...createWekaActivities(deps),
      ...createSignDrivesActivities(deps),
    }),
  );
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
