// What a WekaCluster's workflow does to and for its member drive containers beside creating and
// removing them: start their workflows, signal them, record a replacement, and keep the disruption
// budget that holds drains to one member at a time.
import { ParentClosePolicy, getExternalWorkflowHandle, startChild, workflowInfo } from '@temporalio/workflow';
import {
  WORKFLOW,
  containerWorkflowId,
  type deleteRequestedSignal,
  type specChangedSignal,
  type wakeUpSignal,
} from '../../src/protocol.js';
import { memberIndex } from '../../src/lifecycle/cluster-layout.js';
import { kube } from '../activities.js';
import type { ClusterRun } from './run.js';

/** The watcher starts member workflows too; whichever comes first wins, the other is a no-op. */
export async function startMembers(run: ClusterRun, members: { name: string; uid: string }[]): Promise<void> {
  for (const m of members) {
    try {
      await startChild(WORKFLOW.driveContainer, {
        workflowId: containerWorkflowId(m.uid),
        args: [{ namespace: run.ref.namespace, name: m.name, uid: m.uid }],
        taskQueue: workflowInfo().taskQueue,
        parentClosePolicy: ParentClosePolicy.ABANDON,
      });
    } catch {
      // Already running (started by the watcher): nothing to do.
    }
  }
}

export async function tellMembers(
  members: { uid: string }[],
  signal: typeof wakeUpSignal | typeof deleteRequestedSignal | typeof specChangedSignal,
): Promise<void> {
  for (const m of members) {
    try {
      await getExternalWorkflowHandle(containerWorkflowId(m.uid)).signal(signal);
    } catch {
      // Not running (finished, or not started yet): it reads the state when it runs.
    }
  }
}

/** Orders two member names by their slot in the cluster. */
export function bySlot(run: ClusterRun, a: string, b: string): number {
  return (memberIndex(run.ref.name, a) ?? 0) - (memberIndex(run.ref.name, b) ?? 0);
}

/** Says on the cluster which member is replaced and what it leaves on its lost node. */
export async function recordReplacement(
  run: ClusterRun,
  r: { name: string; message: string },
  plan: { create: { name: string; index: number; node: string }[] },
  members: { name: string; node: string; holds: string }[],
): Promise<void> {
  const old = members.find((m) => m.name === r.name);
  const by = plan.create.find((c) => c.index === memberIndex(run.ref.name, r.name));
  const message =
    `member ${r.name} is replaced${by ? ` by ${by.name} on node ${by.node}` : ''}: ${r.message}. ` +
    `It held ${old?.holds ?? 'nothing known'} on node ${old?.node ?? '?'}; its teardown takes it out of the Weka ` +
    'cluster from another member, and the signatures stay on that node until it is back (or are gone with it)';
  await run.status.condition('MembersReplaced', 'True', 'NodeLost', message, 'Warning');
}

/** Keeps the disruption budget at every member but one (src/manifests/disruption-budget.ts). */
export async function keepDisruptionBudget(run: ClusterRun, members: number): Promise<void> {
  if (run.budgetFor === members) return;
  const done = await kube.ensureClusterDisruptionBudget({ ref: run.ref, uid: run.input.uid, members });
  run.budgetFor = members;
  if (done === 'foreign') {
    const message = `a PodDisruptionBudget named like the cluster's is not the operator's: left as it is, so drains are not held to one member at a time`;
    await run.status.event('Warning', 'DisruptionBudgetTaken', message);
  }
}
