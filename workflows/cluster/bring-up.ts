// The bring-up of a WekaCluster: allocate its port range, then converge on its spec pass after
// pass for as long as it lives, showing after each pass how the cluster stands.
import { isCancellation } from '@temporalio/workflow';
import { CLUSTER_PORTS_MUTEX_ID } from '../../src/protocol.js';
import { isContinueAsNew, messageOf } from '../lifecycle.js';
import { converge, type Pass } from './converge.js';
import { RETRY_WAIT, pause, type ClusterRun } from './run.js';

/** Allocates the cluster's port range through the global cluster-ports mutex, asking until it is given. */
export async function allocatePorts(run: ClusterRun): Promise<void> {
  const { ref, input, status } = run;
  await status.enter('AllocatingPorts', 'allocating the cluster port range');
  for (;;) {
    const answer = await run.mutex.call(CLUSTER_PORTS_MUTEX_ID, 'allocate-cluster-ports', { ...ref, uid: input.uid });
    if (answer.ok) {
      const ports = answer.result as { basePort: number; portRange: number };
      await status.condition(
        'PortsAllocated',
        'True',
        'PortsAllocated',
        `ports ${ports.basePort}-${ports.basePort + ports.portRange - 1}`,
      );
      return;
    }
    const reason = answer.error?.type ?? 'PortsRefused';
    const message = answer.error?.message ?? 'port allocation refused';
    status.stage('PortsAllocated', 'False', reason, message, 'Warning');
    // Asked again all the same: the range may be freed by another cluster's deletion.
    await status.enter('Refused', `${message}; asking again every ${RETRY_WAIT}`, {
      kind: 'stalled',
      reason,
      message,
    });
    await pause(run, RETRY_WAIT);
  }
}

/**
 * Keeps the cluster as the spec says for as long as it lives: each pass creates the members it
 * lacks (and replaces, removes or grows the others), forms the Weka cluster once it can, and shows
 * the cluster Ready whenever every member it counts on is; then it waits for a change. A spec
 * change (more or fewer members, a larger template), a lost node and a member's own changes are
 * each converged on.
 *
 * The pass and what it shows stay in this one function: the device-set pass runs beside it, and
 * where both go on in one workflow task, the order of their commands follows the awaits on each
 * side. A helper of its own here would add awaits, change that order, and the recorded histories
 * would no longer replay.
 */
export async function keepConverged(run: ClusterRun): Promise<void> {
  const { status } = run;
  for (let delay = 1; ;) {
    let pass: Pass;
    // A member's wake-up that comes while this pass runs calls for another pass at once.
    const received = run.life.mark();
    try {
      pass = await converge(run);
    } catch (err) {
      // A step that failed for good (a refused Weka command, a refused write): shown, and the
      // next pass, which reads everything afresh, tries again.
      if (isCancellation(err) || isContinueAsNew(err)) throw err;
      pass = { serving: false, settled: false, step: `a step failed: ${messageOf(err)}; trying again` };
      await status.condition('Converged', 'False', 'StepFailed', pass.step, 'Warning');
    }
    const { serving, settled, step, refused } = pass;
    if (serving && settled && status.conditions.some((c) => c.type === 'Converged' && c.status === 'False'))
      await status.condition('Converged', 'True', 'Converged', 'the members match the spec');
    const readyNow = status.conditions.some((c) => c.type === 'Ready' && c.status === 'True');
    if (serving && !readyNow) await status.condition('Ready', 'True', 'Ready', 'every drive container is Ready');
    if (!serving && readyNow) await status.condition('Ready', 'False', 'MembersNotReady', step);
    if (serving) run.everReady = true;
    const phase = refused ? 'Refused' : serving && settled ? 'Ready' : run.everReady ? 'Updating' : 'Forming';
    const shown = refused ?? (phase === 'Ready' ? 'ready; watching members, nodes and the spec' : step);
    const progress = refused ? { kind: 'stalled' as const, reason: 'MembersRefused', message: refused } : undefined;
    if (status.phase !== phase || status.step !== shown) await status.enter(phase, shown, progress);
    delay = serving && settled ? 30 : Math.min(delay * 2, 15);
    await pause(run, `${delay} seconds`, received);
  }
}
