// One node of the operation: ensure its ssdproxy, choose its devices, sign them, publish the signed
// drives, each step a request to the node's mutex (so nothing removes the proxy in the middle of
// signing, and publishing, which adds capacity, wakes the containers refused for lack of it).
//
// The nodes run concurrently: where their steps await decides the order of the workflow's commands
// (the nodes' mutex requests, the status writes they queue one after another), so an await added
// or taken out here reorders them and recorded histories no longer replay
// (test/unit/workflows/replay.test.ts). What is split out of a step is synchronous for that reason.
import { isCancellation } from '@temporalio/workflow';
import type { NodeDrivesPublished, ProxySignedDrive, SignedDevice } from '../../activities/types.js';
import type { SkippedDevice } from '../../src/node/device-signing.js';
import type { SignDrivesRequest } from '../../src/node/sign-drives-request.js';
import { nodeMutexId, type MutexResponse } from '../../src/protocol.js';
import { weka } from '../activities.js';
import { messageOf } from '../lifecycle.js';
import { signedDriveRow, type NodeResult } from '../operation-status.js';
import { reportDrift, reportSkipped } from './reports.js';
import type { OperationRun } from '../manual-operation/run.js';

/** A node's failure is recorded as its result; it never stops the other nodes. */
export async function runNode(run: OperationRun, request: SignDrivesRequest, node: string): Promise<void> {
  const { status } = run;
  let result: NodeResult;
  try {
    result = await signNode(run, request, node);
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

async function signNode(run: OperationRun, request: SignDrivesRequest, node: string): Promise<NodeResult> {
  const { mutex, status } = run;
  const use = request.mode === 'proxy' ? 'the ssdproxy' : 'exclusive use';
  status.nodeStep(node, "ensuring the node's ssdproxy");
  const proxy = await mutex.call(nodeMutexId(node), 'ensure-proxy', { node }, node);
  if (!proxy.ok) return { node, error: `ensuring the node's ssdproxy: ${proxy.error?.message ?? 'failed'}` };
  const operation = { ...run.ref, uid: run.uid };
  status.nodeStep(node, `choosing the devices (${request.type})`);
  const choice = await weka.chooseNodeDevices({ node, operation });
  if (choice.chosen.length === 0) {
    const skipped = [...choice.skipped];
    await reportSkipped(run, node, skipped);
    return { node, skipped, error: choice.nothingChosen ?? 'no device chosen' };
  }
  status.nodeStep(node, `signing ${choice.chosen.length} devices for ${use}`);
  // One device per request: the node's mutex runs nothing else (removing its proxy, say) meanwhile.
  // The requests are sent together, so they reach the node's queue at about the same time: the
  // node's other work (allocations that wait for these drives) seldom comes between two devices.
  const answers = await Promise.all(
    choice.chosen.map((devicePath) =>
      mutex.call(nodeMutexId(node), 'sign-drive', { node, devicePath, operation }, node),
    ),
  );
  const { signed, now, erased, skipped, failures } = tally(choice.chosen, answers, choice.skipped);
  const drives = signed.map(signedDriveRow);
  if (signed.length > 0) {
    status.nodeStep(node, `publishing ${signed.length} drives on the node`);
    const published = await publishThroughMutex(run, node);
    const message = `node ${node}: ${now} drives signed for ${use} now, ${signed.length - now} already signed; the node offers ${offers(published)}`;
    await status.event('Normal', 'NodeSigned', message);
    if (erased.length > 0)
      await status.event(
        'Warning',
        'DataErased',
        `node ${node}: signing erased, as the operation allowed: ${erased.join('; ')}`,
      );
    await reportDrift(run, node, published);
  }
  await reportSkipped(run, node, skipped);
  const result = { node, drives, ...(skipped.length > 0 ? { skipped } : {}) };
  if (failures.length === 0) return result;
  return { ...result, error: failures.join('; ') };
}

/** What the answers to a node's sign-drive requests came to. */
interface Tally {
  /** The drives signed, now or before. */
  signed: ProxySignedDrive[];
  /** How many of them were signed now. */
  now: number;
  /** What signing erased, as the operation allowed: `<device>: <what>`. */
  erased: string[];
  /** The devices not signed, with why: those the choice left out, then those signing refused. */
  skipped: SkippedDevice[];
  /** Why each request that failed did. */
  failures: string[];
}

/** Adds up the answers to the requests for `chosen`, one answer per device, in order. */
function tally(
  chosen: readonly string[],
  answers: readonly MutexResponse[],
  skippedInChoice: readonly SkippedDevice[],
): Tally {
  const tally: Tally = { signed: [], now: 0, erased: [], skipped: [...skippedInChoice], failures: [] };
  for (const [i, answer] of answers.entries()) {
    const devicePath = chosen[i]!;
    if (!answer.ok) {
      tally.failures.push(answer.error?.message ?? `${devicePath}: signing failed`);
      continue;
    }
    const device = answer.result as SignedDevice;
    if ('skipped' in device) {
      tally.skipped.push(device.skipped);
      continue;
    }
    tally.signed.push(device.drive);
    if (device.signed) tally.now++;
    tally.erased.push(...device.erased.map((what) => `${device.drive.devicePath}: ${what}`));
  }
  return tally;
}

/** What the node offers after publishing, for the NodeSigned Event. */
function offers(published: NodeDrivesPublished): string {
  return (
    `${published.driveCount} shared drives (${published.tlcGiB} GiB TLC, ${published.qlcGiB} GiB QLC) ` +
    `and ${published.exclusiveCount} exclusive drives`
  );
}

/** In the node's mutex, so that containers refused for lack of capacity are woken at once. */
async function publishThroughMutex(run: OperationRun, node: string): Promise<NodeDrivesPublished> {
  const answer = await run.mutex.call(nodeMutexId(node), 'publish-drives', { node }, node);
  if (!answer.ok) throw new Error(`publishing the signed drives: ${answer.error?.message ?? 'failed'}`);
  return answer.result as NodeDrivesPublished;
}
