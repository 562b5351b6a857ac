// The block-drives and unblock-drives operations. Blocking is one decision of the node's mutex: the
// drives are blocked, and each virtual drive on a blocked shared drive gets a replacement of the
// same size and type elsewhere on the node, in the ledger. Then each container holding one is
// told; it signs and adds its replacements, and only then removes the old drives from Weka and the
// device. The operation waits until they are all out (however long Weka takes to phase them out),
// showing each on the object. A drive no other drive has the room for stays with its container,
// which says so and asks again whenever capacity is released; the operation names it and ends.
import { getExternalWorkflowHandle, sleep } from '@temporalio/workflow';
import type { BlockDrivesResult, BlockedContainer, OperationSnapshot } from '../../activities/types.js';
import type { DriveReplacement } from '../../src/api/schemas/wekamanualoperation.js';
import { backoffDelay } from '../../src/backoff.js';
import { blockedList, describeBlocked } from '../../src/node/blocked-drives.js';
import { containerWorkflowId, drivesBlockedSignal, nodeMutexId } from '../../src/protocol.js';
import { kubeLocal } from '../activities.js';
import { refuse } from '../manual-operation/end.js';
import type { OperationRun } from '../manual-operation/run.js';

/** How soon the operation looks again at the replacements it waits for: 2 s, doubling up to a minute. */
export const REPLACEMENT_LOOK = { initialMs: 2_000, maxMs: 60_000, jitter: false } as const;

export async function blockDrives(run: OperationRun, op: OperationSnapshot, unblock: boolean): Promise<void> {
  const action = unblock ? 'unblock-drives' : 'block-drives';
  const payload = op.spec.payload?.blockDrivesPayload;
  const serials = payload?.serialIDs ?? [];
  const physicalUUIDs = payload?.physicalUUIDs ?? [];
  if (!payload || serials.length + physicalUUIDs.length === 0)
    return refuse(
      run,
      'InvalidPayload',
      `${action} needs payload.blockDrivesPayload with the node and its drives (serialIDs, physicalUUIDs, or both)`,
    );
  const { node } = payload;
  await run.status.enter('Running', `${action} on node ${node}: ${describeBlocked({ serials, physicalUUIDs })}`);
  const answer = await run.mutex.call(nodeMutexId(node), action, { node, serials, physicalUUIDs }, node);
  if (!answer.ok) return refuse(run, answer.error?.type ?? 'Refused', answer.error?.message ?? `${action} was refused`);
  const result = answer.result as BlockDrivesResult;
  const blocked = blockedList(result);
  const named = describeBlocked({ serials, physicalUUIDs });
  if (unblock) {
    await run.status.condition('Accepted', 'True', 'Accepted', `unblock ${named} on node ${node}`);
    await run.status.result({ node, blocked });
    const message = `node ${node}: ${named} unblocked; the node offers them again (blocked now: ${describeBlocked(result)})`;
    await run.status.condition('Succeeded', 'True', 'Unblocked', message, 'Normal');
    return run.status.enter('Succeeded', `${message}; waiting for deletion`);
  }
  const replacing = result.containers.filter((c) => c.replaced.length + c.removing.length > 0);
  await run.status.condition(
    'Accepted',
    'True',
    'Accepted',
    `block ${named} on node ${node}: ${replacing.length} containers have virtual drives to replace`,
  );
  await tellContainers(result.containers);
  await warnUnreplaced(run, node, result.containers);
  let rows = replacementRows(result.containers, new Set());
  await run.status.result({ node, blocked, replacements: rows, ...waitingFor(rows) });
  for (let looks = 1; rows.some((r) => r.state === 'Replacing'); looks++) {
    await run.status.enter('Running', `node ${node}: ${waitingFor(rows).waitingFor}`);
    await sleep(backoffDelay(looks, REPLACEMENT_LOOK));
    const left = new Set<string>();
    for (const c of replacing) {
      const held = await kubeLocal.readNodeAllocation({ node, uid: c.uid });
      for (const v of held?.replacedVirtualDrives ?? []) left.add(v.virtualUUID);
    }
    const next = replacementRows(result.containers, left, true);
    if (next.some((r, i) => r.state !== rows[i]!.state))
      await run.status.result({ node, blocked, replacements: next, ...waitingFor(next) });
    rows = next;
  }
  const done = rows.filter((r) => r.state === 'Replaced').length;
  const kept = rows.filter((r) => r.state === 'NoCapacity' || r.state === 'WholeDrive').length;
  const message =
    `node ${node}: ${named} blocked; ${done} virtual drives replaced and removed` +
    (kept > 0 ? `; ${kept} drives stay with their containers (see status.results[].replacements)` : '');
  await run.status.condition('Succeeded', 'True', kept > 0 ? 'BlockedWithDrivesKept' : 'Blocked', message, 'Normal');
  await run.status.enter('Succeeded', `${message}; waiting for deletion`);
}

/** Each container with a drive on a blocked drive asks its mutex again. One already gone is skipped. */
async function tellContainers(containers: readonly BlockedContainer[]): Promise<void> {
  for (const c of containers) {
    if (c.replaced.length + c.unplaced.length + c.removing.length === 0) continue;
    try {
      await getExternalWorkflowHandle(containerWorkflowId(c.uid)).signal(drivesBlockedSignal);
    } catch {
      // No running workflow: the container is gone, and its teardown removes every drive it held.
    }
  }
}

async function warnUnreplaced(run: OperationRun, node: string, containers: readonly BlockedContainer[]): Promise<void> {
  for (const c of containers) {
    if (c.unplaced.length > 0)
      await run.status.event(
        'Warning',
        'NoReplacementCapacity',
        `node ${node}: ${c.container} keeps virtual drives ${c.unplaced.join(', ')} on a blocked drive: no other drive of the node has the room for a replacement; it asks again whenever capacity is released there`,
      );
    if (c.wholeDrives.length > 0)
      await run.status.event(
        'Warning',
        'WholeDrivesBlocked',
        `node ${node}: ${c.container} holds blocked whole drives ${c.wholeDrives.join(', ')} for its exclusive use: they are not replaced (no new container is given them)`,
      );
  }
}

/**
 * One row per drive on a blocked drive. `left`: the replaced drives still in the ledger; with
 * `looked`, a replaced drive no longer there is Replaced.
 */
function replacementRows(
  containers: readonly BlockedContainer[],
  left: ReadonlySet<string>,
  looked = false,
): DriveReplacement[] {
  return containers.flatMap((c) => [
    ...c.replaced.map((r) => ({
      container: c.container,
      virtualUUID: r.old,
      replacement: r.replacement,
      state: !looked || left.has(r.old) ? 'Replacing' : 'Replaced',
    })),
    ...c.removing
      .filter((uuid) => !c.replaced.some((r) => r.old === uuid))
      .map((uuid) => ({
        container: c.container,
        virtualUUID: uuid,
        state: !looked || left.has(uuid) ? 'Replacing' : 'Replaced',
      })),
    ...c.unplaced.map((uuid) => ({ container: c.container, virtualUUID: uuid, state: 'NoCapacity' })),
    ...c.wholeDrives.map((serial) => ({ container: c.container, virtualUUID: serial, state: 'WholeDrive' })),
  ]);
}

function waitingFor(rows: readonly DriveReplacement[]): { waitingFor?: string } {
  const open = rows.filter((r) => r.state === 'Replacing');
  if (open.length === 0) return {};
  const who = [...new Set(open.map((r) => r.container))].join(', ');
  return { waitingFor: `${open.length} virtual drives to be replaced and removed by ${who}` };
}
