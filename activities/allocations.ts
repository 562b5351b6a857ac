// The allocation decisions a node's mutex makes: give containers their virtual drives (one, or
// every allocation queued on the node at once), and release a container's allocation. The
// decisions themselves are pure (src/lifecycle/node-allocations.ts); this reads what they need
// and writes what they decided. Idempotent; refusals are answers (data), not exceptions: only a
// transient failure of the apiserver fails the activity, since the node's mutex waits behind it.
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import { decodeSharedDrivesAnnotation, SHARED_DRIVES_ANNOTATION } from '../src/annotations/index.js';
import type { WekaCluster, WekaContainer } from '../src/api/index.js';
import { FIELD_MANAGER, refText, type ObjectRef } from '../src/lifecycle/names.js';
import {
  clustersToRead,
  containerKey,
  decideNodeAllocations,
  objectKey,
  refusal,
  type AllocationAsk,
  type AllocationOutcome,
  type NodeAllocationDecision,
  type NodeAllocationInput,
  type NodeDrives,
} from '../src/lifecycle/node-allocations.js';
import type { ActivityDeps } from './deps.js';
import { describeKubeError, isNotFound, kubeFailure, orIfMissing, type KubeFailure } from './kube/errors.js';
import { WekaApi } from './kube/weka-api.js';
import type { ContainerOnNode, MutexOutcome } from '../src/protocol.js';

/** Fresh reads per activity attempt before containers that keep changing under us are left to Temporal's retry. */
const CONFLICT_ROUNDS = 5;

export function createAllocationDecisions(deps: ActivityDeps) {
  const api = new WekaApi(deps.kubeConfig);

  async function nodeDrives(node: string): Promise<NodeDrives> {
    const nodeObject = await orIfMissing(api.core.readNode({ name: node }), null);
    if (!nodeObject)
      return {
        ok: false,
        refusal: refusal(
          'NodeNotFound',
          `node ${node} does not exist (any more); the container waits until it is back or its spec changes`,
          true,
        ),
      };
    const text = nodeObject.metadata?.annotations?.[SHARED_DRIVES_ANNOTATION];
    if (text === undefined) {
      const message = `node ${node} has no signed shared drives yet (annotation ${SHARED_DRIVES_ANNOTATION}); sign them with a WekaManualOperation sign-drives with shared: true`;
      return { ok: false, refusal: refusal('NoSharedDrives', message, true) };
    }
    const decoded = decodeSharedDrivesAnnotation(text);
    if (!decoded.ok)
      return { ok: false, refusal: refusal('MalformedAnnotation', `node ${node}: ${decoded.error.message}`, true) };
    return { ok: true, drives: [...decoded.drives] };
  }

  /** One read of the node, of every container on it, and of what the asks need besides. */
  async function readForDecision(node: string, asks: readonly AllocationAsk[]) {
    const [drives, onNode] = await Promise.all([nodeDrives(node), api.listContainersOnNode(node)]);
    const listed = new Map(onNode.map((c) => [containerKey(c), c]));
    // An asking container not listed on the node has gone or moved: read it to say which.
    const notListed = new Map<string, WekaContainer | null>();
    for (const ask of asks)
      if (!listed.has(objectKey(ask)) && !notListed.has(objectKey(ask)))
        notListed.set(objectKey(ask), await api.getContainer(ask));
    const clusterRefs = clustersToRead(asks.map((a) => listed.get(objectKey(a)) ?? notListed.get(objectKey(a))));
    const clusters = new Map<string, WekaCluster | null>(
      await Promise.all(clusterRefs.map(async (ref) => [objectKey(ref), await api.getCluster(ref)] as const)),
    );
    return { node, drives, onNode, notListed, clusters, settings: deps.settings };
  }

  /**
   * The pure decisions. They are deterministic, so one that throws would throw on every retry and
   * hold up the node's mutex for ever: then the first ask is decided alone (the others wait for the
   * next round), and if it throws alone too, the throw is that ask's refusal.
   */
  function decide(
    read: Omit<NodeAllocationInput, 'asks'>,
    asks: readonly AllocationAsk[],
  ): (NodeAllocationDecision | undefined)[] {
    try {
      return decideNodeAllocations({ ...read, asks }, randomUUID);
    } catch (err) {
      const first = asks[0]!;
      deps.logger.error({ container: refText(first), node: read.node, err }, 'the allocator failed');
      if (asks.length > 1) return [...decide(read, [first]), ...asks.slice(1).map(() => undefined)];
      const message = `the allocator failed on ${refText(first)}: ${err instanceof Error ? err.message : String(err)}; this is a bug of the operator, please report it; the container asks again when its spec changes`;
      return [{ outcome: refusal('AllocatorError', message, false) }];
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
    let read: Omit<NodeAllocationInput, 'asks'>;
    try {
      read = await readForDecision(node, asks);
    } catch (err) {
      if (kubeFailure(err) === 'transient') throw err;
      // Refused for good (RBAC, an API this apiserver lacks): nothing can be decided on the node
      // until an administrator acts. Every ask is answered, so the mutex goes on; each asks again.
      deps.logger.warn({ node, err }, 'cannot read the node to allocate');
      const message = `cannot read node ${node} and its WekaContainers to allocate (${describeKubeError(err)}); the container asks again in 30 s`;
      return { outcomes: asks.map(() => refusal('NodeUnreadable', message, true)), conflict: false };
    }
    const decisions = decide(read, asks);
    const final: (AllocationOutcome | undefined)[] = decisions.map((d) =>
      d === undefined || d.write || d.sameAs !== undefined ? undefined : d.outcome,
    );
    let conflict = false;
    /** The first ask whose write failed: every decision after it counted its allocation. */
    let failedAt: number | undefined;
    for (const [i, d] of decisions.entries()) {
      if (!d?.write || !d.outcome.ok) continue;
      const allocation = d.outcome.result;
      try {
        await api.applyStatus(
          'WekaContainer',
          d.write.ref,
          { allocations: { ...allocation, virtualDriveCount: allocation.virtualDrives.length } },
          FIELD_MANAGER.allocator,
          d.write.resourceVersion,
        );
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
          final[i] = writeRefused(d.write.ref, err, failure);
          deps.logger.warn(
            { container: refText(d.write.ref), node, err: describeKubeError(err) },
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
    return { outcomes: final, conflict };
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

    async releaseAllocation({ namespace, name, uid }: ContainerOnNode): Promise<MutexOutcome> {
      const ref = { namespace, name };
      const container = await api.getContainer(ref);
      // Another object of the name (created again since): its allocation is its own.
      if (uid !== undefined && container && container.metadata.uid !== uid) return { ok: true };
      if (container?.status?.allocations) {
        try {
          // Applying a status without the allocator's fields removes them (server-side apply);
          // conditional on the version read, so it is the object whose uid was checked.
          const version = container.metadata.resourceVersion;
          await api.applyStatus('WekaContainer', ref, {}, FIELD_MANAGER.allocator, version);
        } catch (err) {
          // Gone: so is its status, and the allocation with it.
          if (isNotFound(err)) return { ok: true };
          if (kubeFailure(err) === 'transient' || kubeFailure(err) === 'conflict') throw err;
          // Refused for good: an answer, not a failure to retry while the node's mutex waits.
          // The allocation goes when the object does (it lives in its status).
          const message = `the apiserver refused to remove the allocation of ${refText(ref)} from its status (${describeKubeError(err)}); it stays until the object is deleted`;
          deps.logger.warn({ container: refText(ref), err: describeKubeError(err) }, 'release refused');
          return refusal('ReleaseRefused', message, false);
        }
        deps.logger.info({ container: refText(ref) }, 'released allocation');
      }
      return { ok: true };
    },
  };
}
