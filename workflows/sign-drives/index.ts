// The sign-drives operation (`weka-operation/<uid>`), for WekaManualOperations with action
// sign-drives: on every node the selector matches, ensure the node's ssdproxy, choose the devices
// (device-signing.ts), sign them one by one for the proxy (shared: true) or for exclusive use,
// skipping with the reason any whose data would be lost unasked, and publish the signed drives on
// the node, each step a request to the node's mutex (so nothing removes the proxy in the middle of signing, and
// publishing, which adds capacity, wakes the containers refused for lack of it). Nodes
// run concurrently and independently: one node's failure is that node's result only. Then the
// workflow waits for the operation's deletion. Signing is never reverted, so deletion only removes
// the finalizer.
import { upsertMemo, upsertSearchAttributes } from '@temporalio/workflow';
import { WekaPhase, type ObjectWorkflowInput } from '../../src/protocol.js';
import { kubeLocal } from '../activities.js';
import { objectState } from '../lifecycle.js';
import { accept, conclude, letGo, selectNodes, signNodes } from './operation.js';
import { startRun } from './run.js';

export async function signDrivesWorkflow(input: ObjectWorkflowInput): Promise<void> {
  const run = startRun(input);
  const { ref, status } = run;

  const op = await kubeLocal.readOperation(ref);
  if (!op || op.uid !== input.uid) return; // deleted before we started, or another object now
  upsertMemo({ namespace: ref.namespace, name: ref.name, uid: input.uid });
  upsertSearchAttributes([{ key: WekaPhase, value: status.phase }]);
  status.observedGeneration = op.generation;
  status.conditions = [...op.status.conditions];

  await run.life.run({
    deleting: op.deleting,
    bringUp: async () => {
      const request = await accept(run, op);
      if (!request) return;
      const nodes = await selectNodes(run, request);
      if (!nodes) return;
      await signNodes(run, request, nodes);
      await conclude(run, nodes);
    },
    objectState: async () => objectState(await kubeLocal.readOperation(ref), input.uid),
    teardown: () => letGo(run),
  });
}
