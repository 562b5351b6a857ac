// The mutex workflow: one per node (`weka-node/<node>`), and one global for cluster port ranges.
// Every decision that reads or changes what its resource has to give runs here, one at a time,
// in arrival order; the allocations queued together are decided together, in one activity. The
// rules (dedup, batches, waiters, the state carried through continue-as-new, bounded in bytes)
// are pure functions in src/node/mutex-queue.
import { setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import { WekaNode, type MutexInput } from '../../src/protocol.js';
import { continueAsNewIfDue } from './continue-as-new.js';
import { sendAnswers } from './delivery.js';
import { executeNext } from './execute.js';
import { waitForWork } from './idle.js';
import { listenForRequests } from './requests.js';
import { startRun } from './run.js';

export async function mutexWorkflow(input: MutexInput): Promise<void> {
  const run = startRun(input);
  listenForRequests(run);
  if (input.node) upsertSearchAttributes([{ key: WekaNode, value: input.node }]);
  for (;;) {
    setCurrentDetails(`idle; ${run.state.waiters.length} waiting for capacity`);
    if (!(await waitForWork(run))) return;
    sendAnswers(run, run.reanswers.splice(0), []);
    await executeNext(run);
    await continueAsNewIfDue(run);
  }
}
