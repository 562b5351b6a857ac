// The clean-stale-virtual-drives operation, for WekaManualOperations with that action: on every
// node the selector matches, find the virtual drives on its devices that nothing claims (no ledger
// entry, no status, no Weka cluster), publish them and the fingerprint of the whole set, and with
// deleteStaleVids remove them only once a second pass, secondPassAfterSeconds later, finds the
// same set (the fingerprints agree), or at the first pass when a person confirmed its fingerprint.
// A removal finds the drives again in each node's mutex and spares any claimed since.
import { sleep } from '@temporalio/workflow';
import type { OperationSnapshot, StaleOnNode } from '../../activities/types.js';
import { labelSelectorText } from '../../src/node/sign-drives-request.js';
import {
  cleanStaleRequest,
  MAX_PASSES,
  staleFingerprint,
  type CleanStaleRequest,
  type StaleVirtualDrive,
} from '../../src/node/stale-virtual-drives.js';
import { kube } from '../activities.js';
import { fail, refuse } from '../manual-operation/end.js';
import type { OperationRun } from '../manual-operation/run.js';
import { findOnNodes, removeOnNodes, type NodeAnswer } from './nodes.js';

export async function cleanStaleVirtualDrives(run: OperationRun, op: OperationSnapshot): Promise<void> {
  const request = await accept(run, op);
  if (!request) return;
  const nodes = await selectNodes(run, request);
  if (!nodes) return;
  let previous: string | undefined;
  for (let pass = 1; ; pass++) {
    const found = await findOnNodes(run, nodes);
    if (await failedNodes(run, found, nodes.length)) return;
    const stale = new Map(found.map((a) => [a.node, a.ok ? a.result.stale : []]));
    const fingerprint = staleFingerprint(stale);
    await show(run, found, fingerprint);
    const { count, gib } = sizeOf(stale);
    if (count === 0)
      return succeed(run, 'NothingStale', `no stale virtual drive on the ${nodes.length} nodes searched`);
    const what = `${count} stale virtual drives (${gib} GiB) on ${[...stale].filter(([, d]) => d.length > 0).length} nodes, fingerprint ${fingerprint}`;
    if (pass === 1) await run.status.event('Warning', 'StaleVirtualDrivesFound', `${what}: ${listed(stale)}`);
    if (!request.remove)
      return succeed(run, 'StaleReported', `${what}; nothing removed: set deleteStaleVids to remove them`);
    if (request.confirmFingerprint !== undefined) {
      if (fingerprint === request.confirmFingerprint) return remove(run, stale);
      return failWith(
        run,
        'FingerprintMismatch',
        `found ${what}, not the set of the confirmed fingerprint ${request.confirmFingerprint}: nothing removed`,
      );
    }
    if (fingerprint === previous) return remove(run, stale);
    if (pass === MAX_PASSES)
      return failWith(
        run,
        'StaleSetKeptChanging',
        `${MAX_PASSES} passes each found another set (the last: ${what}): nothing removed`,
      );
    previous = fingerprint;
    await run.status.enter(
      'Running',
      `pass ${pass} found ${what}; removed only if the pass in ${request.secondPassAfterSeconds} s finds the same set`,
    );
    await sleep(request.secondPassAfterSeconds * 1000);
  }
}

async function accept(run: OperationRun, op: OperationSnapshot): Promise<CleanStaleRequest | undefined> {
  const checked = cleanStaleRequest(op.spec);
  if (!checked.ok) {
    await refuse(run, checked.reason, checked.message);
    return undefined;
  }
  const { request } = checked;
  const mode = !request.remove
    ? 'report only'
    : request.confirmFingerprint !== undefined
      ? `remove the set of fingerprint ${request.confirmFingerprint}`
      : `remove once two passes ${request.secondPassAfterSeconds} s apart agree`;
  await run.status.condition(
    'Accepted',
    'True',
    'Accepted',
    `clean-stale-virtual-drives (${mode}) on the nodes matching ${labelSelectorText(request.nodeSelector)}`,
  );
  return request;
}

async function selectNodes(run: OperationRun, request: CleanStaleRequest): Promise<string[] | undefined> {
  const selector = labelSelectorText(request.nodeSelector);
  await run.status.enter('Running', `listing the nodes matching ${selector}`);
  const nodes = await kube.listSelectedNodes({ nodeSelector: { ...request.nodeSelector } });
  if (nodes.length === 0) {
    await failWith(run, 'NoMatchingNodes', `no node matches ${selector}: nothing was searched`);
    return undefined;
  }
  for (const node of nodes) await run.status.result({ node });
  return nodes;
}

/** Records the failed nodes' errors and ends the operation Failed when there is any. */
async function failedNodes(run: OperationRun, answers: readonly NodeAnswer<unknown>[], of: number): Promise<boolean> {
  const failed = answers.filter((a) => !a.ok);
  if (failed.length === 0) return false;
  for (const a of failed) await run.status.result({ node: a.node, error: a.ok ? '' : a.error });
  const detail = failed.map((a) => `${a.node}: ${a.ok ? '' : a.error}`).join('; ');
  await failWith(run, 'NodesFailed', `${failed.length} of ${of} nodes failed, so nothing was removed: ${detail}`);
  return true;
}

/** Each node's stale drives, the set's fingerprint, and the drives kept although no ledger or status claims them. */
async function show(run: OperationRun, found: readonly NodeAnswer<StaleOnNode>[], fingerprint: string): Promise<void> {
  run.status.setFingerprint(fingerprint);
  for (const a of found) {
    if (!a.ok) continue;
    run.status.nodeStep(a.node, `${a.result.stale.length} stale virtual drives`);
    await run.status.result({ node: a.node, staleVirtualDrives: a.result.stale });
    if (a.result.kept.length > 0)
      await run.status.event(
        'Normal',
        'VirtualDrivesKept',
        `node ${a.node}: kept ${a.result.kept.map((k) => `${k.virtualUUID} (${k.why})`).join(', ')}`,
      );
  }
}

async function remove(run: OperationRun, stale: ReadonlyMap<string, readonly StaleVirtualDrive[]>): Promise<void> {
  await run.status.enter('Running', 'removing the stale virtual drives');
  const answers = await removeOnNodes(run, stale);
  let removed = 0;
  let spared = 0;
  for (const a of answers) {
    if (!a.ok) continue;
    removed += a.result.removed.length;
    spared += a.result.spared.length;
    await run.status.result({
      node: a.node,
      staleVirtualDrives: [...(stale.get(a.node) ?? [])],
      removed: a.result.removed,
    });
    run.status.nodeStep(a.node, `removed ${a.result.removed.length}, spared ${a.result.spared.length}`);
    if (a.result.removed.length > 0)
      await run.status.event(
        'Normal',
        'StaleVirtualDrivesRemoved',
        `node ${a.node}: removed ${a.result.removed.join(', ')}` +
          (a.result.spared.length > 0 ? `; spared ${a.result.spared.join(', ')} (no longer stale)` : ''),
      );
  }
  if (await failedNodes(run, answers, answers.length)) return;
  await succeed(
    run,
    'StaleRemoved',
    `removed ${removed} stale virtual drives` + (spared > 0 ? `; spared ${spared} that were no longer stale` : ''),
  );
}

async function succeed(run: OperationRun, reason: string, message: string): Promise<void> {
  await run.status.condition('Succeeded', 'True', reason, message, 'Normal');
  await run.status.enter('Succeeded', `${message}; waiting for deletion`);
}

const failWith = (run: OperationRun, reason: string, message: string) =>
  fail(run, reason, message, `${message}; waiting for deletion`);

function sizeOf(stale: ReadonlyMap<string, readonly StaleVirtualDrive[]>): { count: number; gib: number } {
  const all = [...stale.values()].flat();
  return { count: all.length, gib: all.reduce((sum, d) => sum + d.capacityGiB, 0) };
}

function listed(stale: ReadonlyMap<string, readonly StaleVirtualDrive[]>): string {
  return [...stale]
    .flatMap(([node, drives]) =>
      drives.map((d) => `${node}/${d.virtualUUID} (${d.capacityGiB} GiB, cluster ${d.ownerClusterGUID || 'unknown'})`),
    )
    .join(', ');
}
