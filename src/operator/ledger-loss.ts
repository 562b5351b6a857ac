// Which Nodes need their allocation ledger rebuilt now. A Node deleted and registered again under
// its name (a replaced VM, `kubectl delete node` and a kubelet that registers again) comes back
// without the operator's ledger annotation while the drive containers on it still hold what the
// ledger gave them. The node's mutex rebuilds the ledger from the devices and the statuses before
// any decision, but a node where nothing is decided would go on advertising capacity its
// containers hold. The watcher executes what this decides: it asks the node's mutex to publish
// the node's drives, which rebuilds the ledger.
import { SHARED_DRIVES_ANNOTATION } from '../annotations/index.js';
import { ALLOCATIONS_ANNOTATION } from '../node/allocation-ledger.js';
import type { KnownContainer } from './pod-loss.js';

/** What the watcher keeps of a Node. */
export interface WatchedNode {
  uid: string;
  name: string;
  /** Whether it carries the operator's allocation ledger. */
  hasLedger: boolean;
  /** Whether it lists signed shared drives (without them no ledger can be rebuilt). */
  hasSharedDrives: boolean;
}

/** The phases in which a drive container holds an allocation the node's ledger gave it. */
export const HOLDING_PHASES: ReadonlySet<string> = new Set([
  'WaitingForCluster',
  'Signing',
  'AddingDrives',
  'Ready',
  'Error',
  'Deleting',
]);

export function watchedNodeOf(raw: unknown): WatchedNode | undefined {
  const node = raw as { metadata?: { uid?: string; name?: string; annotations?: Record<string, string> } };
  const { uid, name, annotations = {} } = node.metadata ?? {};
  if (!uid || !name) return undefined;
  return {
    uid,
    name,
    hasLedger: annotations[ALLOCATIONS_ANNOTATION] !== undefined,
    hasSharedDrives: annotations[SHARED_DRIVES_ANNOTATION] !== undefined,
  };
}

/** Whether the node lost its ledger while a container on it holds an allocation from it. */
export function ledgerLost(node: WatchedNode, containers: Iterable<KnownContainer>): boolean {
  if (node.hasLedger || !node.hasSharedDrives) return false;
  for (const c of containers)
    if (c.node === node.name && c.phase !== undefined && HOLDING_PHASES.has(c.phase)) return true;
  return false;
}
