// One pass over the nodes of a clean-stale-virtual-drives operation, each node's step a request to
// its mutex, all nodes at once: find the stale virtual drives, or remove those found. A node's
// failure is its result only; the operation ends Failed when any node failed.
import { isCancellation } from '@temporalio/workflow';
import type { RemovedOnNode, StaleOnNode } from '../../activities/types.js';
import type { StaleVirtualDrive } from '../../src/node/stale-virtual-drives.js';
import { nodeMutexId, type MutexPayloads, type MutexRequestKind } from '../../src/protocol.js';
import { messageOf } from '../lifecycle.js';
import type { OperationRun } from '../manual-operation/run.js';

export type NodeAnswer<T> = { node: string; ok: true; result: T } | { node: string; ok: false; error: string };

async function ask<T>(
  run: OperationRun,
  node: string,
  kind: MutexRequestKind,
  payload: MutexPayloads[MutexRequestKind],
): Promise<NodeAnswer<T>> {
  try {
    const answer = await run.mutex.call(nodeMutexId(node), kind, payload, node);
    if (!answer.ok) return { node, ok: false, error: answer.error?.message ?? `${kind} failed` };
    return { node, ok: true, result: answer.result as T };
  } catch (err) {
    if (isCancellation(err)) throw err;
    return { node, ok: false, error: messageOf(err) };
  }
}

/** Every node's stale virtual drives, found in its mutex. */
export function findOnNodes(run: OperationRun, nodes: readonly string[]): Promise<NodeAnswer<StaleOnNode>[]> {
  for (const node of nodes) run.status.nodeStep(node, 'reading the devices');
  return Promise.all(nodes.map((node) => ask<StaleOnNode>(run, node, 'find-stale-drives', { node })));
}

/** Removes, on each node, those of its drives that its mutex still finds stale. */
export function removeOnNodes(
  run: OperationRun,
  stale: ReadonlyMap<string, readonly StaleVirtualDrive[]>,
): Promise<NodeAnswer<RemovedOnNode>[]> {
  const nodes = [...stale].filter(([, drives]) => drives.length > 0);
  for (const [node, drives] of nodes) run.status.nodeStep(node, `removing ${drives.length} stale virtual drives`);
  return Promise.all(
    nodes.map(([node, drives]) => ask<RemovedOnNode>(run, node, 'remove-stale-drives', { node, drives: [...drives] })),
  );
}
