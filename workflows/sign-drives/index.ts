// The sign-drives operation, for WekaManualOperations with action sign-drives: on every node the
// selector matches, ensure the node's ssdproxy, choose the devices (device-signing.ts), sign them
// one by one for the proxy (shared: true) or for exclusive use, skipping with the reason any whose
// data would be lost unasked, and publish the signed drives on the node, each step a request to
// the node's mutex (so nothing removes the proxy in the middle of signing, and publishing, which
// adds capacity, wakes the containers refused for lack of it). Nodes run concurrently and
// independently: one node's failure is that node's result only. Signing is never reverted.
import type { OperationSnapshot } from '../../activities/types.js';
import type { OperationRun } from '../manual-operation/run.js';
import { accept, conclude, selectNodes, signNodes } from './operation.js';

export async function signDrives(run: OperationRun, op: OperationSnapshot): Promise<void> {
  const request = await accept(run, op);
  if (!request) return;
  const nodes = await selectNodes(run, request);
  if (!nodes) return;
  await signNodes(run, request, nodes);
  await conclude(run, nodes);
}
