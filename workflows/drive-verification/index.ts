// The drive verification (`weka-drive-verification/<task queue>`): one workflow for the whole
// operator, never one timer per container, so idle containers cost nothing more. Every period it
// asks each node with an ssdproxy, through the node's mutex (so never beside an allocation or a
// release there), which Ready drive containers miss a virtual drive on the node's devices or in
// their Weka cluster, and tells each such container (drivesMissing), whose own workflow signs and
// adds the drive again, or says on the object why it cannot. Then it waits out the period and
// continues as new, so its history stays one sweep long.
import {
  continueAsNew,
  getExternalWorkflowHandle,
  log,
  setCurrentDetails,
  setHandler,
  sleep,
} from '@temporalio/workflow';
import type { NodeDrivesVerified } from '../../activities/types.js';
import {
  containerWorkflowId,
  drivesMissingSignal,
  nodeMutexId,
  verificationSettingsSignal,
  type DriveVerificationInput,
} from '../../src/protocol.js';
import { kube } from '../activities.js';
import { messageOf } from '../lifecycle.js';
import { installMutexClient } from '../mutex-client.js';

export async function driveVerificationWorkflow(input: DriveVerificationInput): Promise<void> {
  let periodSeconds = input.periodSeconds;
  setHandler(verificationSettingsSignal, (settings) => {
    periodSeconds = settings.periodSeconds;
  });
  const mutex = installMutexClient();
  const nodes = await kube.nodesToVerify();
  const lines: string[] = [];
  let told = 0;
  for (const node of nodes) {
    const answer = await mutex.call(nodeMutexId(node), 'verify-drives', { node }, node);
    if (!answer.ok) {
      lines.push(`- ${node}: ${answer.error?.message ?? 'not verified'}`);
      continue;
    }
    const found = answer.result as NodeDrivesVerified;
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
