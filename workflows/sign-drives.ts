// The sign-drives operation (`weka-operation/<uid>`), for WekaManualOperations with action
// sign-drives: on every node the selector matches, ensure the node's ssdproxy, choose the devices
// (device-signing.ts), sign them one by one for the proxy (shared: true) or for exclusive use,
// skipping with the reason any whose data would be lost unasked, and publish the signed drives on
// the node, each step a request to the node's mutex (so nothing removes the proxy in the middle of signing, and
// publishing, which adds capacity, wakes the containers refused for lack of it). Nodes
// run concurrently and independently: one node's failure is that node's result only. Then the
// workflow waits for the operation's deletion. Signing is never reverted, so deletion only removes
// the finalizer.
import { isCancellation, upsertMemo, upsertSearchAttributes } from '@temporalio/workflow';
import type { NodeDrivesPublished, OperationSnapshot, ProxySignedDrive, SignedDevice } from '../activities/types.js';
import type { ObjectRef } from '../src/api/names.js';
import type { SkippedDevice } from '../src/node/device-signing.js';
import { labelSelectorText, signDrivesRequest, type SignDrivesRequest } from '../src/node/sign-drives-request.js';
import { WekaPhase, nodeMutexId, type ObjectWorkflowInput } from '../src/protocol.js';
import { kube, kubeLocal, weka } from './activities.js';
import { Lifecycle, messageOf, objectState } from './lifecycle.js';
import { installMutexClient } from './mutex-client.js';
import { OperationStatus, type NodeResult } from './operation-status.js';

export async function signDrivesWorkflow(input: ObjectWorkflowInput): Promise<void> {
  const ref: ObjectRef = { namespace: input.namespace, name: input.name };
  const mutex = installMutexClient();
  const status = new OperationStatus(ref, input.uid);
  // An operation is one-off: it runs the spec it read at the start, so a later edit changes nothing.
  const life = new Lifecycle(input, status, { specChanges: false });

  const op = await kubeLocal.readOperation(ref);
  if (!op || op.uid !== input.uid) return; // deleted before we started, or another object now
  upsertMemo({ namespace: ref.namespace, name: ref.name, uid: input.uid });
  upsertSearchAttributes([{ key: WekaPhase, value: status.phase }]);
  status.observedGeneration = op.generation;
  status.conditions = [...op.status.conditions];

  /** In the node's mutex, so that containers refused for lack of capacity are woken at once. */
  async function publishThroughMutex(node: string): Promise<NodeDrivesPublished> {
    const answer = await mutex.call(nodeMutexId(node), 'publish-drives', { node }, node);
    if (!answer.ok) throw new Error(`publishing the signed drives: ${answer.error?.message ?? 'failed'}`);
    return answer.result as NodeDrivesPublished;
  }

  async function signNode(request: SignDrivesRequest, node: string): Promise<NodeResult> {
    const use = request.mode === 'proxy' ? 'the ssdproxy' : 'exclusive use';
    status.nodeStep(node, "ensuring the node's ssdproxy");
    const proxy = await mutex.call(nodeMutexId(node), 'ensure-proxy', { node }, node);
    if (!proxy.ok) return { node, error: `ensuring the node's ssdproxy: ${proxy.error?.message ?? 'failed'}` };
    const operation = { ...ref, uid: input.uid };
    status.nodeStep(node, `choosing the devices (${request.type})`);
    const choice = await weka.chooseNodeDevices({ node, operation });
    const skipped: SkippedDevice[] = [...choice.skipped];
    if (choice.chosen.length === 0) {
      await reportSkipped(node, skipped);
      return { node, skipped, error: choice.nothingChosen ?? 'no device chosen' };
    }
    status.nodeStep(node, `signing ${choice.chosen.length} devices for ${use}`);
    const signed: ProxySignedDrive[] = [];
    const erased: string[] = [];
    const failures: string[] = [];
    let now = 0;
    // One device per request: the node's mutex runs nothing else (removing its proxy, say) meanwhile.
    // The requests are sent together, so they reach the node's queue at about the same time: the
    // node's other work (allocations that wait for these drives) seldom comes between two devices.
    const answers = await Promise.all(
      choice.chosen.map((devicePath) =>
        mutex.call(nodeMutexId(node), 'sign-drive', { node, devicePath, operation }, node),
      ),
    );
    for (const [i, answer] of answers.entries()) {
      const devicePath = choice.chosen[i]!;
      if (!answer.ok) {
        failures.push(answer.error?.message ?? `${devicePath}: signing failed`);
        continue;
      }
      const device = answer.result as SignedDevice;
      if ('skipped' in device) {
        skipped.push(device.skipped);
        continue;
      }
      signed.push(device.drive);
      if (device.signed) now++;
      erased.push(...device.erased.map((what) => `${device.drive.devicePath}: ${what}`));
    }
    const drives = signed.map(({ physicalUUID, ...rest }) => ({ uuid: physicalUUID, ...rest }));
    if (signed.length > 0) {
      status.nodeStep(node, `publishing ${signed.length} drives on the node`);
      const published = await publishThroughMutex(node);
      const offers =
        `${published.driveCount} shared drives (${published.tlcGiB} GiB TLC, ${published.qlcGiB} GiB QLC) ` +
        `and ${published.exclusiveCount} exclusive drives`;
      const message = `node ${node}: ${now} drives signed for ${use} now, ${signed.length - now} already signed; the node offers ${offers}`;
      await status.event('Normal', 'NodeSigned', message);
      if (erased.length > 0)
        await status.event(
          'Warning',
          'DataErased',
          `node ${node}: signing erased, as the operation allowed: ${erased.join('; ')}`,
        );
      await reportDrift(node, published);
    }
    await reportSkipped(node, skipped);
    const result = { node, drives, ...(skipped.length > 0 ? { skipped } : {}) };
    if (failures.length === 0) return result;
    return { ...result, error: failures.join('; ') };
  }

  async function reportSkipped(node: string, skipped: readonly SkippedDevice[]): Promise<void> {
    if (skipped.length === 0) return;
    const what = skipped.map((s) => `${s.devicePath} (${s.reason}): ${s.message}`).join('; ');
    await status.event('Warning', 'DevicesSkipped', `node ${node}: ${skipped.length} devices not signed: ${what}`);
  }

  /** What reading the devices showed that the node did not say: found virtual drives, dropped drives. */
  async function reportDrift(node: string, published: NodeDrivesPublished): Promise<void> {
    const some = (items: string[]): string =>
      items.slice(0, 5).join(', ') + (items.length > 5 ? ` and ${items.length - 5} more` : '');
    if (published.found.length > 0) {
      const message =
        `node ${node}: ${published.found.length} virtual drives on the devices belong to no WekaContainer and are ` +
        `counted as taken (${published.foundGiB} GiB found in all): ${some(published.found)}`;
      await status.event('Warning', 'VirtualDrivesFound', message);
    }
    if (published.dropped.length > 0) {
      const message = `node ${node}: no device reports these drives any more (wiped, signed again or removed); they are no longer shared: ${some(published.dropped)}`;
      await status.event('Warning', 'DrivesDropped', message);
    }
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
      status.stage('Accepted', 'False', checked.reason, checked.message, 'Warning');
      await status.enter('Refused', `refused: ${checked.message}`, {
        kind: 'stalled',
        reason: checked.reason,
        message: checked.message,
      });
      return;
    }
    const { request } = checked;
    const selector = labelSelectorText(request.nodeSelector);
    await status.condition(
      'Accepted',
      'True',
      'Accepted',
      `sign-drives (${request.type}, ${request.mode === 'proxy' ? 'shared' : 'exclusive'}) on the nodes matching ${selector}`,
    );
    await status.enter('Running', `listing the nodes matching ${selector}`);
    const nodes = await kube.listSelectedNodes({ nodeSelector: { ...request.nodeSelector } });
    if (nodes.length === 0) {
      await fail('NoMatchingNodes', `no node matches ${selector}: nothing was signed`, 'no node matched the selector');
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
    const skipped = status.skippedDevices();
    if (failed.length === 0) {
      await status.condition(
        'Succeeded',
        'True',
        skipped === 0 ? 'AllNodesSigned' : 'SignedSomeSkipped',
        `drives signed and published on all ${nodes.length} nodes` +
          (skipped === 0 ? '' : `; ${skipped} devices were skipped, each with its reason in the node's result`),
        'Normal',
      );
      await status.enter('Succeeded', 'every node signed; waiting for deletion');
    } else {
      const detail = failed.map((r) => `${r.node}: ${r.error ?? ''}`).join('; ');
      await fail(
        'NodesFailed',
        `${failed.length} of ${nodes.length} nodes failed: ${detail}`,
        `${failed.length} of ${nodes.length} nodes failed; waiting for deletion`,
      );
    }
  }

  /** Ends the operation Failed: Succeeded=False and Stalled=True with why, until a person deletes it. */
  async function fail(reason: string, message: string, step: string): Promise<void> {
    await status.condition('Succeeded', 'False', reason, message, 'Warning');
    await status.enter('Failed', step, { kind: 'stalled', reason, message });
  }

  /** Signing is never reverted: a deleted operation only lets go of its finalizer. */
  async function finish(): Promise<void> {
    const current = await kubeLocal.readOperation(ref);
    if (!current || current.uid !== input.uid) return;
    status.step = 'deleted: nothing to undo (signing is not reverted); removing the finalizer';
    await kubeLocal.removeFinalizer({ kind: 'WekaManualOperation', ref, uid: input.uid });
  }

  await life.run({
    deleting: op.deleting,
    bringUp: () => runOperation(op),
    objectState: async () => objectState(await kubeLocal.readOperation(ref), input.uid),
    teardown: finish,
  });
}
