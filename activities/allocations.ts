// The allocation decisions a node's mutex makes: give containers their virtual drives (one, or
// every allocation queued on the node at once), and release a container's allocation. The
// decisions themselves are pure (src/node/node-allocations.ts); this reads what they need
// and writes what they decided. Idempotent; refusals are answers (data), not exceptions: only a
// transient failure of the apiserver fails the activity, since the node's mutex waits behind it.
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import {
  adoptionReason,
  BLOCKED_DRIVES_ANNOTATION,
  decodeSerialsAnnotation,
  EXCLUSIVE_DRIVES_ANNOTATION,
  decodeSharedDrivesAnnotation,
  decodeWekaOperatorSharedDrives,
  SHARED_DRIVES_ANNOTATION,
  WEKA_OPERATOR_SHARED_DRIVES_ANNOTATION,
} from '../src/annotations/index.js';
import type { WekaCluster, WekaContainer } from '../src/api/index.js';
import { FIELD_MANAGER, refText, TEARDOWN_WITHOUT_POD_ANNOTATION, type ObjectRef } from '../src/api/names.js';
import {
  ALLOCATIONS_ANNOTATION,
  emptyLedger,
  uidOf,
  withAllocation,
  withoutContainer,
  type AllocationLedger,
} from '../src/node/allocation-ledger.js';
import {
  clustersToRead,
  containerKey,
  decideNodeAllocations,
  needsClusterRanges,
  objectKey,
  refusal,
  type AllocationAsk,
  type AllocationOutcome,
  type NodeAllocationDecision,
  type NodeAllocationInput,
  type NodeAllocationRound,
  type ExclusiveNodeDrives,
  type NodeDrives,
} from '../src/node/node-allocations.js';
import type { ContainerAllocation } from '../src/allocation/types.js';
import { clusterRangesOf } from '../src/node/cluster-ports.js';
import type { ActivityDeps } from './deps.js';
import { describeKubeError, isNotFound, kubeFailure, orIfMissing, type KubeFailure } from './kube/errors.js';
import { podRefusal } from './kube/pod-admission.js';
import { createNamespaceQuotaCheck } from './namespace-quota.js';
import { ledgerOf, updateLedger, writeLedger } from './kube/node-ledger.js';
import { WekaApi } from './kube/weka-api.js';
import { createNodeDrivesPublisher } from './node-drives-publisher.js';
import { createSignedOnDevices } from './signed-on-devices.js';
import type { V1Node } from '@kubernetes/client-node';
import { blockedDrivesOf, blockedSharedUUIDs } from '../src/node/blocked-drives.js';

/** A round's decisions; an ask left undefined is decided again in the next round. */
type DecidedRound = Omit<NodeAllocationRound, 'decisions'> & { decisions: (NodeAllocationDecision | undefined)[] };
import type { ContainerOnNode, MutexOutcome } from '../src/protocol.js';

/** A node with no ledger whose devices could not be read to rebuild it: nothing is decided there yet. */
class LedgerNotRebuilt extends Error {
  constructor(node: string, cause: unknown) {
    super(
      `node ${node} has no allocation ledger while containers on it hold allocations (was its Node registered again?), and its devices could not be read to rebuild it (${cause instanceof Error ? cause.message : String(cause)}); the container asks again in 30 s`,
    );
  }
}

/** Fresh reads per activity attempt before containers that keep changing under us are left to Temporal's retry. */
const CONFLICT_ROUNDS = 5;

export function createAllocationDecisions(deps: ActivityDeps) {
  const api = new WekaApi(deps.kubeConfig);
  const publisher = createNodeDrivesPublisher(deps);
  const stillSigned = createSignedOnDevices(deps);
  const firstBeyondQuota = createNamespaceQuotaCheck(api, deps.logger);

  /**
   * The node's shared drives (or why there are none) and its allocation ledger, from one read. A
   * node the Weka operator signed, or one listed in the compact form, is adopted first: its
   * devices are read and published (node-drives-publisher.ts), then the node is read again.
   */
  /** The node's exclusive drives and blocked serials, as the annotations say (absent: none signed). */
  function exclusiveOf(node: string, annotations: Record<string, string>): { exclusive?: ExclusiveNodeDrives } {
    const text = annotations[EXCLUSIVE_DRIVES_ANNOTATION];
    if (text === undefined) return {};
    const signed = decodeSerialsAnnotation(EXCLUSIVE_DRIVES_ANNOTATION, text);
    const blocked = decodeSerialsAnnotation(BLOCKED_DRIVES_ANNOTATION, annotations[BLOCKED_DRIVES_ANNOTATION]);
    for (const d of [signed, blocked])
      if (!d.ok)
        return {
          exclusive: { ok: false, refusal: refusal('MalformedAnnotation', `node ${node}: ${d.error.message}`, true) },
        };
    if (!signed.ok || !blocked.ok) return {};
    return { exclusive: { ok: true, signed: signed.serials, blocked: blocked.serials } };
  }

  async function readNode(
    node: string,
    adopted = false,
  ): Promise<{
    drives: NodeDrives;
    exclusive?: ExclusiveNodeDrives;
    ledger: AllocationLedger;
    object?: V1Node;
    blocked?: Set<string>;
  }> {
    const nodeObject = await orIfMissing(api.core.readNode({ name: node }), null);
    if (!nodeObject)
      return {
        ledger: emptyLedger(),
        drives: {
          ok: false,
          refusal: refusal(
            'NodeNotFound',
            `node ${node} does not exist (any more); the container waits until it is back or its spec changes`,
            true,
          ),
        },
      };
    const ledger = ledgerOf(nodeObject);
    const annotations = nodeObject.metadata?.annotations ?? {};
    const exclusive = exclusiveOf(node, annotations);
    const text = annotations[SHARED_DRIVES_ANNOTATION];
    const theirsText = annotations[WEKA_OPERATOR_SHARED_DRIVES_ANNOTATION];
    const malformed = (message: string) => ({
      ledger,
      object: nodeObject,
      ...exclusive,
      drives: { ok: false as const, refusal: refusal('MalformedAnnotation', `node ${node}: ${message}`, true) },
    });
    if (text === undefined && theirsText === undefined) {
      const message = `node ${node} has no signed shared drives yet (annotation ${SHARED_DRIVES_ANNOTATION}); sign them with a WekaManualOperation sign-drives with shared: true`;
      const drives = { ok: false as const, refusal: refusal('NoSharedDrives', message, true) };
      return { ledger, object: nodeObject, drives, ...exclusive };
    }
    const decoded = decodeSharedDrivesAnnotation(text ?? '[]');
    if (!decoded.ok) return malformed(decoded.error.message);
    if (!adopted) {
      const theirs =
        theirsText === undefined ? { ok: true as const, drives: [] } : decodeWekaOperatorSharedDrives(theirsText);
      if (!theirs.ok) return malformed(theirs.error.message);
      const reason = adoptionReason(decoded.drives, theirs.drives);
      if (reason !== undefined) {
        deps.logger.info({ node, reason }, "adopting the node's drives: reading its devices");
        const published = await publisher.publish(node).catch((err: unknown) => {
          const passing = err instanceof ApplicationFailure ? !err.nonRetryable : kubeFailure(err) === 'transient';
          if (passing) throw err;
          throw new LedgerNotRebuilt(node, err);
        });
        deps.logger.info({ node, ...published }, 'adopted the node');
        return readNode(node, true);
      }
    }
    const blocked = blockedDrivesOf(annotations);
    if (!blocked.ok) return malformed(blocked.error.message);
    return {
      ledger,
      object: nodeObject,
      drives: { ok: true, drives: [...decoded.drives] },
      blocked: blockedSharedUUIDs(decoded.drives, blocked.blocked),
      ...exclusive,
    };
  }

  /** One read of the node, of every container on it, and of what the asks need besides. */
  async function readForDecision(node: string, asks: readonly AllocationAsk[], rebuilt = false) {
    const [{ drives, exclusive, ledger, object, blocked }, onNode] = await Promise.all([
      readNode(node),
      api.listContainersOnNode(node),
    ]);
    // A Node deleted and registered again under the same name comes back without its ledger,
    // though its containers still hold what it gave them: the devices are read first, which gives
    // back the entries they prove (reconcileLedger), and nothing is decided from an empty ledger.
    if (!rebuilt && drives.ok && object && ledgerLost(object, onNode)) {
      deps.logger.warn(
        { node },
        "the node's allocation ledger is gone while containers hold allocations: reading its devices",
      );
      const published = await publisher.publish(node).catch((err: unknown) => {
        const passing = err instanceof ApplicationFailure ? !err.nonRetryable : kubeFailure(err) === 'transient';
        if (passing) throw err;
        throw new LedgerNotRebuilt(node, err);
      });
      deps.logger.warn({ node, restored: published.restored, found: published.found }, "rebuilt the node's ledger");
      return readForDecision(node, asks, true);
    }
    const listed = new Map(onNode.map((c) => [containerKey(c), c]));
    // An asking container not listed on the node has gone or moved: read it to say which.
    const notListed = new Map<string, WekaContainer | null>();
    for (const ask of asks)
      if (!listed.has(objectKey(ask)) && !notListed.has(objectKey(ask)))
        notListed.set(objectKey(ask), await api.getContainer(ask));
    const asking = asks.map((a) => listed.get(objectKey(a)) ?? notListed.get(objectKey(a)));
    const clusters = new Map<string, WekaCluster | null>(
      await Promise.all(
        clustersToRead(asking).map(async (ref) => [objectKey(ref), await api.getCluster(ref)] as const),
      ),
    );
    const clusterRanges = needsClusterRanges(asking) ? clusterRangesOf(await api.listClusters()) : [];
    return {
      node,
      drives,
      ...(exclusive ? { exclusive } : {}),
      ...(blocked ? { blocked } : {}),
      ledger,
      nodeObject: object,
      onNode,
      notListed,
      clusters,
      clusterRanges,
      settings: deps.settings,
    };
  }

  /**
   * The pure decisions. They are deterministic, so one that throws would throw on every retry and
   * hold up the node's mutex for ever: then the first ask is decided alone (the others wait for the
   * next round), and if it throws alone too, the throw is that ask's refusal.
   */
  function decide(read: Omit<NodeAllocationInput, 'asks'>, asks: readonly AllocationAsk[]): DecidedRound {
    try {
      return (deps.decideAllocations ?? decideNodeAllocations)({ ...read, asks }, randomUUID);
    } catch (err) {
      const first = asks[0]!;
      deps.logger.error({ container: refText(first), node: read.node, err }, 'the allocator failed');
      if (asks.length > 1) {
        const alone = decide(read, [first]);
        return { ...alone, decisions: [...alone.decisions, ...asks.slice(1).map(() => undefined)] };
      }
      const message = `the allocator failed on ${refText(first)}: ${err instanceof Error ? err.message : String(err)}; this is a bug of the operator, please report it; the container asks again when its spec changes`;
      return { decisions: [{ outcome: refusal('AllocatorError', message, false) }], ledger: read.ledger, restores: [] };
    }
  }

  /** The answer to an ask whose allocation write the apiserver refused for good. */
  function writeRefused(ref: ObjectRef, err: unknown, failure: KubeFailure): AllocationOutcome {
    if (failure === 'refused' && isNotFound(err))
      return refusal('ContainerGone', `${refText(ref)} no longer exists or is being deleted`, false);
    const what = `the apiserver refused to store the allocation of ${refText(ref)} in its status (${describeKubeError(err)}); nothing was allocated`;
    return failure === 'access'
      ? refusal('AllocationWriteRefused', `${what}; the container asks again in 30 s`, true)
      : refusal('AllocationWriteRefused', `${what}; the container asks again when its spec changes`, false);
  }

  /**
   * One round: one read of the node and of every container on it, the decisions for the pending
   * asks, then their writes one by one in arrival order, each conditional on the version read.
   * A write that fails ends the round there, since the decisions after it counted its allocation:
   * they are made again from a fresh read, refusals included. A conflict (that container changed since the read)
   * leaves its ask to that next round too; a refusal the apiserver would repeat (any other 4xx)
   * is that ask's answer. Only a transient failure (no answer, 408, 429, 5xx) fails the activity,
   * for Temporal to retry. Returns the outcomes known (undefined: decide again) and whether a
   * conflict ended the round.
   */
  async function allocationRound(
    node: string,
    asks: readonly AllocationAsk[],
  ): Promise<{ outcomes: (AllocationOutcome | undefined)[]; conflict: boolean }> {
    let read: Awaited<ReturnType<typeof readForDecision>>;
    try {
      read = await readForDecision(node, asks);
    } catch (err) {
      if (err instanceof LedgerNotRebuilt)
        return { outcomes: asks.map(() => refusal('LedgerNotRebuilt', err.message, true)), conflict: false };
      if (kubeFailure(err) === 'transient') throw err;
      // Refused for good (RBAC, an API this apiserver lacks): nothing can be decided on the node
      // until an administrator acts. Every ask is answered, so the mutex goes on; each asks again.
      deps.logger.warn({ node, err }, 'cannot read the node to allocate');
      const message = `cannot read node ${node} and its WekaContainers to allocate (${describeKubeError(err)}); the container asks again in 30 s`;
      return { outcomes: asks.map(() => refusal('NodeUnreadable', message, true)), conflict: false };
    }
    const round = decide(read, asks);
    const { decisions } = round;
    const refused = (await firstBeyondQuota(read.ledger, decisions)) ?? (await firstPodRefused(read, decisions));
    // The decisions after it counted its allocation: they are made again, without it.
    if (refused)
      return {
        outcomes: decisions.map((d, i) =>
          i === refused.index || d?.sameAs === refused.index ? refused.outcome : undefined,
        ),
        conflict: false,
      };
    const final: (AllocationOutcome | undefined)[] = decisions.map((d) =>
      d === undefined || d.write || d.sameAs !== undefined ? undefined : d.outcome,
    );
    // The ledger first: once it holds an allocation, a container that asks again gets the same one,
    // whatever happens to the status writes below.
    if (read.nodeObject && round.ledger !== read.ledger) {
      try {
        await writeLedger(api.core, read.nodeObject, round.ledger);
      } catch (err) {
        const failure = kubeFailure(err);
        if (failure === 'transient') throw err;
        if (failure === 'conflict') return { outcomes: asks.map(() => undefined), conflict: true };
        const message = `the apiserver refused to record allocations in node ${node}'s annotation ${ALLOCATIONS_ANNOTATION} (${describeKubeError(err)}); nothing was allocated; the container asks again in 30 s`;
        deps.logger.warn({ node, err }, 'the apiserver refused the allocation ledger');
        return { outcomes: asks.map(() => refusal('AllocationWriteRefused', message, true)), conflict: false };
      }
    }
    let conflict = false;
    /** The first ask whose write failed: every decision after it counted its allocation. */
    let failedAt: number | undefined;
    for (const [i, d] of decisions.entries()) {
      if (!d?.write || !d.outcome.ok) continue;
      const allocation = d.outcome.result;
      try {
        await writeAllocation(d.write.ref, allocation, d.write.resourceVersion);
      } catch (err) {
        const failure = kubeFailure(err);
        if (failure === 'transient') throw err;
        if (failure === 'conflict') {
          conflict = true;
          deps.logger.info(
            { container: refText(d.write.ref), node },
            'container changed while allocating; deciding again from a fresh read',
          );
        } else {
          const refused = writeRefused(d.write.ref, err, failure);
          const { uid, ref } = d.write;
          const previous = d.previous;
          if (previous && !refused.ok) {
            // A growth never delivered: the ledger goes back to what the container held, which it keeps.
            final[i] = { ok: true, result: previous, error: refused.error, waitForCapacity: refused.waitForCapacity };
            await updateLedger(api.core, node, (l) => withAllocation(l, uid, objectKey(ref), previous));
          } else {
            final[i] = refused;
            // Never delivered: the ledger lets go of it again.
            await updateLedger(api.core, node, (l) => withoutContainer(l, uid, false));
          }
          deps.logger.warn(
            { container: refText(d.write.ref), node, err },
            'the apiserver refused the allocation; deciding the rest again from a fresh read',
          );
        }
        failedAt = i;
        break;
      }
      deps.logger.info(
        { container: refText(d.write.ref), node, virtualDrives: allocation.virtualDrives.length },
        'allocated',
      );
      final[i] = d.outcome;
    }
    // A refusal decided after the failed write assumed that write's allocation: decide it again.
    if (failedAt !== undefined) for (let j = failedAt + 1; j < final.length; j++) final[j] = undefined;
    for (const [i, d] of decisions.entries()) if (d?.sameAs !== undefined) final[i] = final[d.sameAs];
    await restoreStatuses(node, round.restores);
    return { outcomes: final, conflict };
  }

  /**
   * Whether the node has no ledger at all while a container on it shows an allocation (one being
   * deleted too: its release clears its status, so it shows one only until it is released).
   */
  function ledgerLost(node: V1Node, onNode: readonly WekaContainer[]): boolean {
    if (node.metadata?.annotations?.[ALLOCATIONS_ANNOTATION] !== undefined) return false;
    return onNode.some(
      (c) => (c.status?.allocations?.virtualDrives?.length ?? 0) + (c.status?.allocations?.drives?.length ?? 0) > 0,
    );
  }

  /** The first new allocation whose pod the apiserver would refuse (a used-up quota), and why. */
  async function firstPodRefused(
    read: Awaited<ReturnType<typeof readForDecision>>,
    decisions: DecidedRound['decisions'],
  ): Promise<{ index: number; outcome: AllocationOutcome } | undefined> {
    for (const [index, d] of decisions.entries()) {
      if (!d?.write || !d.outcome.ok || d.previous || read.ledger.containers[d.write.uid]) continue;
      const container = read.onNode.find((c) => c.metadata.uid === d.write!.uid);
      if (!container) continue;
      const outcome = await podRefusal(api.core, container, d.outcome.result, deps.podPriorityClass);
      if (outcome) {
        deps.logger.info(
          { container: refText(d.write.ref), node: read.node, reason: outcome.error.type },
          'pod would be refused',
        );
        return { index, outcome };
      }
    }
    return undefined;
  }

  async function writeAllocation(ref: ObjectRef, allocation: ContainerAllocation, resourceVersion?: string) {
    const status = { allocations: { ...allocation, virtualDriveCount: allocation.virtualDrives.length } };
    await api.applyStatus('WekaContainer', ref, status, FIELD_MANAGER.allocator, resourceVersion);
  }

  /** Live containers whose status lost what the ledger holds get it back (the next round tries again). */
  async function restoreStatuses(node: string, restores: DecidedRound['restores']): Promise<void> {
    for (const r of restores) {
      try {
        await writeAllocation(r.ref, r.allocation, r.resourceVersion);
        deps.logger.warn({ container: refText(r.ref), node }, "restored the container's allocation in its status");
      } catch (err) {
        if (kubeFailure(err) === 'transient') throw err;
        deps.logger.warn({ container: refText(r.ref), node, err }, 'could not restore status');
      }
    }
  }

  /**
   * Decides every ask, in order, as if one after the other; answers in the same order. Every round
   * but one cut short by a conflict answers at least one more ask, so only conflicts can keep it
   * going: after CONFLICT_ROUNDS of them the activity fails, for Temporal to retry.
   */
  async function allocateAll(node: string, asks: readonly AllocationAsk[]): Promise<MutexOutcome[]> {
    const outcomes: (AllocationOutcome | undefined)[] = asks.map(() => undefined);
    let conflicts = 0;
    for (;;) {
      const pending = asks.map((_, i) => i).filter((i) => outcomes[i] === undefined);
      if (pending.length === 0) return outcomes as MutexOutcome[];
      if (conflicts >= CONFLICT_ROUNDS) {
        const changing = [...new Set(pending.map((i) => refText(asks[i]!)))].join(', ');
        throw ApplicationFailure.retryable(
          `${changing} changed while allocating, ${CONFLICT_ROUNDS} reads in a row; retrying`,
          'AllocationConflict',
        );
      }
      const round = await allocationRound(
        node,
        pending.map((i) => asks[i]!),
      );
      pending.forEach((index, j) => (outcomes[index] = round.outcomes[j]));
      if (round.conflict) conflicts++;
    }
  }

  return {
    /** Every queued allocation of one node at once: one outcome per container, in the same order. */
    async allocateForContainers({
      node,
      containers,
    }: {
      node: string;
      containers: ContainerOnNode[];
    }): Promise<MutexOutcome[]> {
      return allocateAll(node, containers);
    },

    /**
     * What the node's ledger holds for the container of `uid`: what its teardown undoes (a status
     * may have been edited by hand). Null when the ledger holds nothing for it, or the node is gone.
     */
    async readNodeAllocation({ node, uid }: { node: string; uid: string }): Promise<ContainerAllocation | null> {
      const nodeObject = await orIfMissing(api.core.readNode({ name: node }), null);
      return nodeObject ? (ledgerOf(nodeObject).containers[uid]?.allocation ?? null) : null;
    },

    /**
     * Lets go of a container's allocation: out of the node's ledger, then out of its status. Only
     * for an object whose deletion started (or that is gone): a request alone never frees the
     * capacity of a live container. Virtual drives its teardown could not remove (it finished
     * without the pod) stay counted as found on the devices. `released` says whether the ledger
     * held anything for it: a release of nothing wakes no waiter.
     */
    async releaseAllocation({ namespace, name, node, uid }: ContainerOnNode): Promise<MutexOutcome> {
      // The object the ledger gave this uid's allocation to, never only the name the request gives:
      // a live container's uid under a made-up name would pass for a container already gone.
      const nodeObject = uid === undefined ? null : await orIfMissing(api.core.readNode({ name: node }), null);
      const read = nodeObject ? ledgerOf(nodeObject) : undefined;
      const entry = uid !== undefined ? read?.containers[uid] : undefined;
      const [recordedNs, recordedName] = entry?.container.split('/') ?? [];
      const ref = recordedNs && recordedName ? { namespace: recordedNs, name: recordedName } : { namespace, name };
      const container = await api.getContainer(ref);
      const same = container !== null && (uid === undefined || container.metadata.uid === uid);
      if (same && !container.metadata.deletionTimestamp) {
        const message = `${refText(ref)} is not being deleted: its allocation is released only by its deletion`;
        deps.logger.warn({ container: refText(ref), node }, 'refused to release the allocation of a live container');
        return refusal('NotDeleting', message, false);
      }
      // Torn down without its own pod (finished without it, or its object vanished mid-teardown):
      // what the devices still hold stays counted.
      const withoutPod = !same || container.metadata.annotations?.[TEARDOWN_WITHOUT_POD_ANNOTATION] === 'true';
      const left = withoutPod && (!nodeObject || !entry || (await stillSigned(nodeObject, entry.allocation)));
      const guid = same ? (container.status?.clusterGUID ?? '') : '';
      // Its drives the ledger counts as found (the entry was lost with its Node and given back only
      // in part, or not at all) go with it too, once no device holds them.
      const named = new Set(
        (same ? (container.status?.allocations?.virtualDrives ?? []) : []).map((v) => v.virtualUUID),
      );
      const foundOfIt = read?.found.filter((f) => named.has(f.virtualUUID)) ?? [];
      const virtualDrives = foundOfIt.map((f) => ({ ...f, serial: '', type: 'TLC' as const }));
      const foundGone = foundOfIt.length > 0 && !(await stillSigned(nodeObject!, { virtualDrives }));
      const gone = new Set(foundGone ? foundOfIt.map((f) => f.virtualUUID) : []);
      let released = false;
      await updateLedger(api.core, node, (ledger) => {
        const key = uid ?? uidOf(ledger, `${ref.namespace}/${ref.name}`);
        released = key !== undefined && ledger.containers[key] !== undefined;
        const without = released ? withoutContainer(ledger, key!, left, guid) : ledger;
        if (gone.size === 0 || !without.found.some((f) => gone.has(f.virtualUUID))) return without;
        released = true;
        return { ...without, found: without.found.filter((f) => !gone.has(f.virtualUUID)) };
      });
      if (same && container.status?.allocations) {
        try {
          // Applying a status without the allocator's fields removes them (server-side apply);
          // conditional on the version read, so it is the object whose uid was checked.
          const version = container.metadata.resourceVersion;
          await api.applyStatus('WekaContainer', ref, {}, FIELD_MANAGER.allocator, version);
        } catch (err) {
          // Gone: so is its status. Refused: the status is only a view; the ledger is released.
          if (isNotFound(err)) return { ok: true, result: { released } };
          if (kubeFailure(err) === 'transient' || kubeFailure(err) === 'conflict') throw err;
          deps.logger.warn({ container: refText(ref), err }, 'status not cleared');
        }
      }
      if (released) deps.logger.info({ container: refText(ref), node, leftOnDevices: left }, 'released allocation');
      return { ok: true, result: { released } };
    },
  };
}
