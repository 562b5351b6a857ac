// The drive container's lifecycle (`weka-container/<uid>`), for WekaContainers of mode drive:
// ensure the node's proxy, allocate virtual drives and ports (through the node's mutex), run the
// pod on those ports, wait for the cluster GUID, join on them, sign and add every virtual drive,
// then stay Ready until deletion, growing in place (new virtual drives beside the ones it holds,
// on the same ports) when its spec asks for more, and making its pod (or its node's proxy pod)
// again when the watcher tells it one was lost, then checking its membership and drives. The
// object's deletion (never a cancel alone: workflows/lifecycle.ts) tears it all down in reverse, in
// a scope that cannot be cancelled. Every step is idempotent, so a restart redoes nothing.
import type { ObjectWorkflowInput } from '../../src/protocol.js';
import { kubeLocal } from '../activities.js';
import { objectState } from '../lifecycle.js';
import { bringUp, retryFailedSteps } from './bring-up.js';
import { openRun } from './run.js';
import { teardown } from './teardown.js';

export async function driveContainerWorkflow(input: ObjectWorkflowInput): Promise<void> {
  // The object as the run starts: null when it is gone already (a vanished teardown is finished).
  const run = await openRun(input);
  if (!run) return;
  await run.life.run({
    deleting: run.snapshot.deleting,
    // node → proxy → allocation → pod → cluster GUID → join, sign and add → Ready → wait, again
    // at each change; a step that fails for good is shown and tried again later.
    bringUp: () => retryFailedSteps(run, () => bringUp(run)),
    objectState: async () => objectState(await kubeLocal.readContainer(run.ref), input.uid),
    // drives out of the cluster and off the devices → allocation released → pod → proxy → finalizer
    teardown: () => teardown(run),
  });
}
