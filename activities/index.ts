// createActivities(deps): every activity of the operator, closed over the Kubernetes client, the
// exec transport, the Temporal client and the logger.
import { createContainerActivities } from './container.js';
import type { ActivityDeps } from './deps.js';
import { createNodeDecisions } from './node-decisions.js';
import { createClusterPortDecisions } from './cluster-ports.js';
import { createRequesterActivities } from './requester.js';
import type { ContainerActivities, MutexActivities, RequesterActivities, WekaActivities } from './types.js';
import { createWekaActivities } from './weka.js';
import { heartbeating } from './heartbeat.js';

export type Activities = MutexActivities & RequesterActivities & ContainerActivities & WekaActivities;

export function createActivities(deps: ActivityDeps): Activities {
  return heartbeating({
    ...createNodeDecisions(deps),
    ...createClusterPortDecisions(deps),
    ...createRequesterActivities(deps),
    ...createContainerActivities(deps),
    ...createWekaActivities(deps),
  });
}

export type { ActivityDeps } from './deps.js';
