// The device-set steps of a WekaCluster's workflow (src/manifests/device-set-pods.ts): bring each
// set's devices to its nodes and sign them for the ssdproxy, and on deletion release them once no
// virtual drive is left on them. Signing and releasing are requests to the node's mutex.
import type { ObjectRef } from '../src/api/names.js';
import { nodeMutexId } from '../src/protocol.js';
import type { DeviceSetSigned } from '../activities/types.js';
import { kube } from './activities.js';
import type { ClusterStatus } from './cluster-status.js';
import type { MutexClient } from './mutex-client.js';

export interface DeviceSetContext {
  readonly ref: ObjectRef;
  readonly uid: string;
  readonly mutex: MutexClient;
  readonly status: ClusterStatus;
}

const CONDITION = 'DeviceSetsReady';

/** Sets the condition only when it says something new: a pass that changed nothing writes nothing. */
async function show(ctx: DeviceSetContext, ok: boolean, reason: string, message: string): Promise<void> {
  const now = ctx.status.conditions.find((c) => c.type === CONDITION);
  if (now && now.status === (ok ? 'True' : 'False') && now.reason === reason && now.message === message) return;
  await ctx.status.condition(CONDITION, ok ? 'True' : 'False', reason, message, ok ? 'Normal' : 'Warning');
}

interface Problem {
  reason: string;
  message: string;
}

interface NodeOutcome {
  signed: number;
  problems: Problem[];
}

/** Makes what is missing of a set on one node and has the node's mutex sign what became ready. */
async function provisionOnNode(ctx: DeviceSetContext, set: string, node: string): Promise<NodeOutcome> {
  const problems: Problem[] = [];
  let signed = 0;
  const ensured = await kube.ensureDeviceSet({ ref: ctx.ref, uid: ctx.uid, set, node });
  if (ensured.unsigned > 0) {
    const cluster = { ...ctx.ref, uid: ctx.uid };
    const answer = await ctx.mutex.call(nodeMutexId(node), 'sign-device-set', { node, cluster, set }, node);
    if (!answer.ok) {
      const problem = {
        reason: answer.error?.type ?? 'SigningFailed',
        message: answer.error?.message ?? 'signing failed',
      };
      return { signed: 0, problems: [problem] };
    }
    const result = answer.result as DeviceSetSigned;
    signed += result.signed;
    if (result.skipped.length > 0)
      problems.push({
        reason: 'DevicesSkipped',
        message: `device set ${set} on node ${node}: not signed: ${result.skipped.join('; ')}`,
      });
    if (result.notAttached.length > 0)
      problems.push({
        reason: 'DeviceNotAttached',
        message: `device set ${set} on node ${node}: the device pods do not see ${result.notAttached.join(', ')} yet`,
      });
  }
  signed += ensured.signed;
  if (ensured.problem) problems.push(ensured.problem);
  return { signed, problems };
}

/**
 * One pass over the cluster's device sets: makes what is missing of each on each of its nodes,
 * signs the devices that became ready, and says on the cluster what holds the others up. Says
 * whether every device of every set is signed (then the sets need no look until the spec or the
 * nodes change, or the cluster's periodic review).
 */
export async function provisionDeviceSets(ctx: DeviceSetContext): Promise<boolean> {
  const plan = await kube.deviceSetPlan({ ref: ctx.ref, uid: ctx.uid });
  if (plan.length === 0) return true;
  const problems: Problem[] = [];
  const work: Promise<NodeOutcome>[] = [];
  for (const set of plan) {
    if (set.problem) {
      problems.push(set.problem);
      continue;
    }
    if (set.nodes.length === 0)
      problems.push({
        reason: 'NoMatchingNodes',
        message: `device set ${set.name}: no selected node matches its placement`,
      });
    // Each node's devices are signed by that node's mutex: a busy node holds up only its own.
    for (const node of set.nodes) work.push(provisionOnNode(ctx, set.name, node));
  }
  let signed = 0;
  for (const outcome of await Promise.all(work)) {
    signed += outcome.signed;
    problems.push(...outcome.problems);
  }
  const [first] = problems;
  if (first) {
    const more =
      problems.length > 1
        ? ` (and ${problems.length - 1} more: ${problems
            .slice(1)
            .map((p) => p.reason)
            .join(', ')})`
        : '';
    await show(ctx, false, first.reason, first.message + more);
    return false;
  }
  await show(ctx, true, 'DevicesSigned', `${signed} devices from ${plan.length} device sets are signed and shared`);
  return true;
}

/**
 * Releases every device set of the cluster, node by node; a node whose devices still carry
 * virtual drives (of another cluster: this one's members are gone), or cannot be read, is asked
 * again every 30 seconds, with who holds them (or why) on the cluster's condition. Says whether
 * everything is released. A node released is asked to remove its ssdproxy if no drive container
 * is left there: releasing reads the devices in the proxy's pod, which makes the proxy again
 * after the last member's teardown removed it.
 */
export async function releaseDeviceSets(ctx: DeviceSetContext): Promise<boolean> {
  const remnants = await kube.deviceSetRemnants({ uid: ctx.uid });
  const held: { reason: string; message: string }[] = [];
  const released = new Set<string>();
  for (const { set, node } of remnants) {
    const cluster = { ...ctx.ref, uid: ctx.uid };
    const answer = await ctx.mutex.call(nodeMutexId(node), 'release-device-set', { node, cluster, set }, node);
    if (answer.ok) released.add(node);
    else
      held.push({
        reason: answer.error?.type ?? 'ReleaseFailed',
        message: answer.error?.message ?? `device set ${set} on node ${node}: not released`,
      });
  }
  for (const node of released) await ctx.mutex.call(nodeMutexId(node), 'remove-proxy-if-unused', { node }, node);
  if (held.length === 0) return true;
  // Devices in use come first: they are what a person has to act on.
  const reason = held.find((h) => h.reason === 'DevicesInUse')?.reason ?? held[0]!.reason;
  await show(ctx, false, reason, `waiting to release: ${held.map((h) => h.message).join('; ')}`);
  return false;
}
