// Blocking and unblocking a node's drives, executed by its mutex (so nothing is allocated on the
// node meanwhile): the blocked-drive annotations, the virtual drives on a newly blocked drive
// replaced in the ledger (src/node/blocked-drives.ts), and the extended resources, in one
// conditional write of the Node. The containers are told by the operation's workflow; each signs
// and adds its new drives, removes the old ones, and then asks its mutex to forget them here.
import { randomUUID } from 'node:crypto';
import type { V1Node } from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/activity';
import {
  BLOCKED_DRIVES_ANNOTATION,
  BLOCKED_PHYSICAL_UUIDS_ANNOTATION,
  decodeSerialsAnnotation,
  decodeSharedDrivesAnnotation,
  encodeSerialsAnnotation,
  EXCLUSIVE_DRIVES_ANNOTATION,
  SHARED_DRIVES_ANNOTATION,
} from '../src/annotations/index.js';
import { FIELD_MANAGER } from '../src/api/names.js';
import { ALLOCATIONS_ANNOTATION, encodeLedger, ledgerClaims, withAllocation } from '../src/node/allocation-ledger.js';
import {
  blockedDrivesOf,
  blockedSharedUUIDs,
  planBlock,
  planUnblock,
  replaceBlockedVirtualDrives,
  withoutReplaced,
  type DriveIds,
} from '../src/node/blocked-drives.js';
import { refusal } from '../src/node/node-allocations.js';
import type { MutexOutcome } from '../src/protocol.js';
import type { ActivityDeps } from './deps.js';
import { isConflict, orIfMissing } from './kube/errors.js';
import { ledgerOf, updateLedger } from './kube/node-ledger.js';
import { publishPromisedResources } from './kube/node-resources.js';
import { mergeHeaders, WekaApi } from './kube/weka-api.js';
import type { BlockDrivesResult, BlockedContainer } from './types.js';

const NODE_WRITE_ATTEMPTS = 10;

export function createBlockedDrives(deps: ActivityDeps) {
  const api = new WekaApi(deps.kubeConfig);

  async function change(node: string, ask: DriveIds, unblock: boolean): Promise<MutexOutcome> {
    for (let attempt = 0; attempt < NODE_WRITE_ATTEMPTS; attempt++) {
      const read = await orIfMissing(api.core.readNode({ name: node }), null);
      if (!read) return refusal('NodeNotFound', `node ${node} does not exist`, false);
      const annotations = read.metadata?.annotations ?? {};
      const shared = decodeSharedDrivesAnnotation(annotations[SHARED_DRIVES_ANNOTATION] ?? '[]');
      const exclusive = decodeSerialsAnnotation(EXCLUSIVE_DRIVES_ANNOTATION, annotations[EXCLUSIVE_DRIVES_ANNOTATION]);
      const current = blockedDrivesOf(annotations);
      const malformed = (error: { message: string }) =>
        refusal('MalformedAnnotation', `node ${node}: ${error.message}; nothing was changed`, false);
      if (!shared.ok) return malformed(shared.error);
      if (!exclusive.ok) return malformed(exclusive.error);
      if (!current.ok) return malformed(current.error);
      const plan = unblock
        ? planUnblock(node, current.blocked, ask)
        : planBlock(node, { shared: shared.drives, exclusive: exclusive.serials }, current.blocked, ask);
      if (!plan.ok) return refusal(plan.type, plan.message, false);
      const blocked = blockedSharedUUIDs(shared.drives, plan.blocked);
      let ledger = ledgerOf(read);
      const containers: BlockedContainer[] = [];
      const blockedSerials = new Set(plan.blocked.serials);
      for (const uid of Object.keys(ledger.containers).sort()) {
        const entry = ledger.containers[uid]!;
        const decision = replaceBlockedVirtualDrives(
          { held: entry.allocation, drives: shared.drives, blocked, claimed: ledgerClaims(ledger) },
          randomUUID,
        );
        if (decision.allocation !== entry.allocation)
          ledger = withAllocation(ledger, uid, entry.container, decision.allocation);
        const wholeDrives = (entry.allocation.drives ?? []).filter((s) => blockedSerials.has(s));
        const removing = (decision.allocation.replacedVirtualDrives ?? []).map((v) => v.virtualUUID);
        if (decision.replaced.length + decision.unplaced.length + removing.length + wholeDrives.length === 0) continue;
        containers.push({
          container: entry.container,
          uid,
          replaced: decision.replaced.map((r) => ({ old: r.old.virtualUUID, replacement: r.replacement.virtualUUID })),
          unplaced: decision.unplaced.map((v) => v.virtualUUID),
          removing,
          wholeDrives,
        });
      }
      try {
        const written = await writeNode(read, {
          [BLOCKED_DRIVES_ANNOTATION]: listOrNull(plan.blocked.serials),
          [BLOCKED_PHYSICAL_UUIDS_ANNOTATION]: listOrNull(plan.blocked.physicalUUIDs),
          [ALLOCATIONS_ANNOTATION]: encodeLedger(ledger),
        });
        await publishPromisedResources(api.core, written);
      } catch (err) {
        if (isConflict(err)) continue;
        throw err;
      }
      deps.logger.info({ node, unblock, ...plan.blocked, containers: containers.length }, 'changed blocked drives');
      const result: BlockDrivesResult = { ...plan.blocked, containers };
      return { ok: true, result };
    }
    throw ApplicationFailure.retryable(`node ${node} kept changing while its drives were blocked`, 'NodeConflict');
  }

  /** The annotations patched, conditional on the version read; the node as written. */
  async function writeNode(read: V1Node, annotations: Record<string, string | null>): Promise<V1Node> {
    return api.core.patchNode(
      {
        name: read.metadata?.name ?? '',
        fieldManager: FIELD_MANAGER.allocator,
        body: { metadata: { resourceVersion: read.metadata?.resourceVersion, annotations } },
      },
      mergeHeaders,
    );
  }

  return {
    async blockDrives({ node, ...ask }: { node: string } & DriveIds): Promise<MutexOutcome> {
      return change(node, ask, false);
    },

    async unblockDrives({ node, ...ask }: { node: string } & DriveIds): Promise<MutexOutcome> {
      return change(node, ask, true);
    },

    /**
     * Forgets replaced virtual drives its container has removed from Weka and the device: they
     * leave the ledger (the space they held is on a blocked drive, so nothing is offered again).
     */
    async forgetReplacedDrives({
      node,
      uid,
      virtualUUIDs,
    }: {
      node: string;
      uid: string;
      virtualUUIDs: string[];
    }): Promise<MutexOutcome> {
      await updateLedger(api.core, node, (ledger) => {
        const entry = ledger.containers[uid];
        if (!entry) return ledger;
        const next = withoutReplaced(entry.allocation, virtualUUIDs);
        return next === entry.allocation ? ledger : withAllocation(ledger, uid, entry.container, next);
      });
      return { ok: true };
    },
  };
}

/** An empty list is no annotation at all. */
const listOrNull = (list: readonly string[]): string | null => (list.length > 0 ? encodeSerialsAnnotation(list) : null);
