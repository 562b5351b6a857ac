// The sign-drives operation (`weka-operation/<uid>`), for WekaManualOperations with action
// sign-drives and shared: true: on every node the selector matches, ensure the node's ssdproxy
// (through the node's mutex), sign the listed devices for it, and publish the signed drives on the
// node (through the mutex too: publishing adds capacity, which wakes refused containers). Nodes run concurrently and independently: one node's failure is that node's result only.
// Then the workflow waits for the operation's deletion. Signing is never reverted, so deletion
// (the deleteRequested signal, or cancelling the workflow) only removes the finalizer.
import {
  ActivityCancellationType,
  ActivityFailure,
  CancellationScope,
  CancelledFailure,
  condition,
  isCancellation,
  patched,
  proxyActivities,
  setHandler,
  upsertMemo,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { NodeDrivesPublished, OperationSnapshot, SignDrivesActivities } from '../activities/types.js';
import { type ObjectRef } from '../src/lifecycle/names.js';
import {
  labelSelectorText,
  signDrivesRequest,
  unsupportedTypeMessage,
  type SignDrivesRequest,
} from '../src/lifecycle/sign-drives-request.js';
import { HEARTBEAT_TIMEOUT, kube } from './activities.js';
import { installMutexClient } from './mutex-client.js';
import { OperationStatus, type NodeResult } from './operation-status.js';
import { NON_RETRYABLE_ERRORS } from './retry.js';
import {
  type ProxySignedDrive,
  nodeMutexId,
  deleteRequestedSignal,
  specChangedSignal,
  stateQuery,
  WekaPhase,
} from '../src/protocol.js';

export interface SignDrivesInput {
  namespace: string;
  name: string;
  uid: string;
}

const acts = proxyActivities<SignDrivesActivities>({
  // Up to three Weka CLI calls per device, each bounded by the exec timeout.
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: HEARTBEAT_TIMEOUT,
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  // An operation ends: a node that keeps failing (its proxy pod gone, say) becomes that node's error.
  retry: {
    initialInterval: '500 milliseconds',
    maximumInterval: '15 seconds',
    maximumAttempts: 10,
    nonRetryableErrorTypes: NON_RETRYABLE_ERRORS,
  },
});

function messageOf(err: unknown): string {
  const cause = err instanceof ActivityFailure && err.cause ? err.cause : err;
  return cause instanceof Error ? cause.message : String(cause);
}

export async function signDrivesWorkflow(input: SignDrivesInput): Promise<void> {
  const ref: ObjectRef = { namespace: input.namespace, name: input.name };
  const mutex = installMutexClient();
  const status = new OperationStatus(ref);
  let deleteRequested = false;
  const scope = new CancellationScope();
  setHandler(deleteRequestedSignal, () => {
    deleteRequested = true;
    scope.cancel();
  });
  setHandler(stateQuery, () => status.view());
  // An operation is one-off: it runs the spec it read at the start, so a later edit changes nothing.
  setHandler(specChangedSignal, () => undefined);

  const op = await acts.readOperation(ref);
  if (!op || op.uid !== input.uid) return; // deleted before we started, or another object now
  upsertMemo({ namespace: ref.namespace, name: ref.name, uid: input.uid });
  upsertSearchAttributes([{ key: WekaPhase, value: status.phase }]);
  status.observedGeneration = op.generation;

  /** In the node's mutex, so that containers refused for lack of capacity are woken at once. */
  async function publishThroughMutex(node: string, drives: ProxySignedDrive[]): Promise<NodeDrivesPublished> {
    const answer = await mutex.call(nodeMutexId(node), 'publish-drives', { node, drives }, node);
    if (!answer.ok) throw new Error(`publishing the signed drives: ${answer.error?.message ?? 'failed'}`);
    return answer.result as NodeDrivesPublished;
  }

  async function signNode(request: SignDrivesRequest, node: string): Promise<NodeResult> {
    const unsupported = unsupportedTypeMessage(request.type);
    if (unsupported) return { node, error: unsupported };
    status.nodeStep(node, "ensuring the node's ssdproxy");
    const proxy = await mutex.call(nodeMutexId(node), 'ensure-proxy', { node }, node);
    if (!proxy.ok) return { node, error: `ensuring the node's ssdproxy: ${proxy.error?.message ?? 'failed'}` };
    status.nodeStep(node, `signing ${request.devicePaths.length} devices for the ssdproxy`);
    const signing = await acts.signNodeDrives({ node, devicePaths: [...request.devicePaths], shared: true });
    const drives = signing.drives.map(({ physicalUUID, ...rest }) => ({ uuid: physicalUUID, ...rest }));
    if (signing.drives.length > 0) {
      status.nodeStep(node, `publishing ${signing.drives.length} drives on the node`);
      const published = patched('publish-drives-through-node-mutex')
        ? await publishThroughMutex(node, signing.drives)
        : await acts.publishNodeDrives({ node, drives: signing.drives });
      await status.event(
        'Normal',
        'NodeSigned',
        `node ${node}: ${signing.newlySigned.length} drives signed now, ${signing.drives.length - signing.newlySigned.length} already signed; the node shares ${published.driveCount} drives, ${published.tlcGiB} GiB TLC and ${published.qlcGiB} GiB QLC`,
      );
    }
    if (signing.failures.length === 0) return { node, drives };
    const error = signing.failures.map((f) => `${f.devicePath}: ${f.message}`).join('; ');
    return { node, drives, error };
  }

  /** A node's failure is recorded as its result; it never stops the other nodes. */
  async function runNode(request: SignDrivesRequest, node: string): Promise<void> {
    let result: NodeResult;
    try {
      result = await signNode(request, node);
    } catch (err) {
      if (isCancellation(err)) throw err;
      result = { node, error: messageOf(err) };
    }
    status.nodeStep(
      node,
      result.error === undefined ? `done: ${result.drives?.length ?? 0} drives` : `failed: ${result.error}`,
    );
    await status.result(result);
    if (result.error !== undefined) await status.event('Warning', 'NodeFailed', `node ${node}: ${result.error}`);
  }

  async function runOperation(snapshot: OperationSnapshot): Promise<void> {
    const checked = signDrivesRequest(snapshot.spec);
    if (!checked.ok) {
      await status.condition('Accepted', 'False', checked.reason, checked.message, 'Warning');
      await status.enter('Failed', `refused: ${checked.message}`);
      return;
    }
    const { request } = checked;
    const selector = labelSelectorText(request.nodeSelector);
    await status.condition(
      'Accepted',
      'True',
      'Accepted',
      `sign-drives (${request.type}, shared) on the nodes matching ${selector}`,
    );
    await status.enter('Running', `listing the nodes matching ${selector}`);
    const nodes = await acts.listSelectedNodes({ nodeSelector: { ...request.nodeSelector } });
    if (nodes.length === 0) {
      await status.condition(
        'Succeeded',
        'False',
        'NoMatchingNodes',
        `no node matches ${selector}: nothing was signed`,
        'Warning',
      );
      await status.enter('Failed', 'no node matched the selector');
      return;
    }
    for (const node of nodes) await status.result({ node });
    await status.condition(
      'Succeeded',
      'Unknown',
      'Running',
      `signing drives on ${nodes.length} nodes: ${nodes.join(', ')}`,
      'Normal',
    );
    await status.enter('Running', `signing drives on ${nodes.length} nodes`);
    await Promise.all(nodes.map((node) => runNode(request, node)));
    const failed = status.failedResults();
    if (failed.length === 0) {
      await status.condition(
        'Succeeded',
        'True',
        'AllNodesSigned',
        `drives signed and published on all ${nodes.length} nodes`,
        'Normal',
      );
      await status.enter('Succeeded', 'every node signed; waiting for deletion');
    } else {
      const detail = failed.map((r) => `${r.node}: ${r.error ?? ''}`).join('; ');
      await status.condition(
        'Succeeded',
        'False',
        'NodesFailed',
        `${failed.length} of ${nodes.length} nodes failed: ${detail}`,
        'Warning',
      );
      await status.enter('Failed', `${failed.length} of ${nodes.length} nodes failed; waiting for deletion`);
    }
  }

  try {
    // Started (or restarted) for an object already being deleted: straight to the finalizer.
    if (op.deleting || deleteRequested) throw new CancelledFailure('deletion started before the workflow');
    await scope.run(async () => {
      await runOperation(op);
      await condition(() => deleteRequested);
    });
  } catch (err) {
    if (!isCancellation(err)) throw err;
  }
  await CancellationScope.nonCancellable(finish);

  async function finish(): Promise<void> {
    const current = await acts.readOperation(ref);
    if (!current || current.uid !== input.uid) return;
    if (current.deleting) {
      status.step = 'deleted: nothing to undo (signing is not reverted); removing the finalizer';
      await kube.removeFinalizer({ kind: 'WekaManualOperation', ref });
      return;
    }
    // Cancelled without a deletion (from Temporal): say so instead of staying Running forever.
    if (status.phase === 'Running' || status.phase === 'Pending') {
      await status.condition(
        'Succeeded',
        'False',
        'Cancelled',
        "the operation's workflow was cancelled before every node was signed",
        'Warning',
      );
      await status.enter('Failed', 'cancelled');
    }
  }
}
