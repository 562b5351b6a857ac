// The drive verification (`weka-drive-verification/<task queue>`): one workflow for the whole
// operator, never one timer per container, so idle containers cost nothing more. Every period it
// asks each node with an ssdproxy, one node at a time, which Ready drive containers miss a virtual
// drive on the node's devices or in their Weka cluster (activities/drive-verification.ts: a read,
// so the node's mutex is not woken), and tells each such container (drivesMissing), whose own
// workflow signs and adds the drive again, or says on the object why it cannot. Then it waits out
// the period and continues as new, so its history stays one sweep long.
import {
  continueAsNew,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  setCurrentDetails,
  setHandler,
  sleep,
} from '@temporalio/workflow';
import type { NodeDrivesVerified } from '../../activities/types.js';
import {
  containerWorkflowId,
  drivesMissingSignal,
  verificationSettingsSignal,
  type DriveVerificationInput,
} from '../../src/protocol.js';
import { kube, weka } from '../activities.js';
import { messageOf } from '../lifecycle.js';

export async function driveVerificationWorkflow(input: DriveVerificationInput): Promise<void> {
  let periodSeconds = input.periodSeconds;
  setHandler(verificationSettingsSignal, (settings) => {
    periodSeconds = settings.periodSeconds;
  });
  const nodes = await kube.nodesToVerify();
  const lines: string[] = [];
  let told = 0;
  for (const node of nodes) {
    let found: NodeDrivesVerified;
    try {
      found = await weka.verifyNodeDrives({ node });
    } catch (err) {
      if (isCancellation(err)) throw err;
      lines.push(`- ${node}: not verified: ${messageOf(err)}`);
      continue;
    }
    lines.push(
      `- ${node}: ${found.skipped ?? `${found.checked} Ready containers, ${found.missing.length} missing drives`}`,
    );
    for (const { uid, ref, missing } of found.missing) {
      try {
        await getExternalWorkflowHandle(containerWorkflowId(uid)).signal(drivesMissingSignal, { missing });
        told++;
      } catch (err) {
        // Its workflow ended (the container is gone): nothing to repair.
        log.warn('could not tell a container of its missing drives', { ref, error: messageOf(err) });
      }
    }
  }
  setCurrentDetails(
    [
      `**last sweep**: ${nodes.length} nodes, ${told} containers told of missing drives; next in ${periodSeconds} s`,
      ...lines,
    ].join('\n'),
  );
  await sleep(periodSeconds * 1000);
  await continueAsNew<typeof driveVerificationWorkflow>({ periodSeconds });
}
