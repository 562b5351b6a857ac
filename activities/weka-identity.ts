// What a pod's Weka container says it is, through its agent: a member of a cluster (with the
// cluster's GUID and its container ID), or set up in no cluster yet. An agent with no answer yet
// (the container is starting) fails the attempt as JoinPending, which the activity's retries ask again.
import { ApplicationFailure } from '@temporalio/activity';
import { containerIdentityCall, type ContainerIdentity } from '../src/weka/index.js';
import type { ExecTarget } from './exec/transport.js';
import type { WekaCli } from './weka-cli.js';

export type KnownIdentity = Exclude<ContainerIdentity, { state: 'unknown' }>;

export async function identify(
  run: WekaCli,
  target: ExecTarget,
  name: string,
  agentPort: number,
): Promise<KnownIdentity> {
  const identity = await run(target, containerIdentityCall(name, agentPort));
  if (identity.state === 'unknown') throw ApplicationFailure.retryable(`${name}: ${identity.reason}`, 'JoinPending');
  return identity;
}
