// The allocation decisions a node's mutex makes: give containers their virtual drives (one, or
// every allocation queued on the node at once), and release a container's allocation. The
// decisions themselves are pure (src/lifecycle/node-allocations.ts); this reads what they need
// and writes what they decided. Idempotent; refusals are answers (data), not exceptions.
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import { decodeSharedDrivesAnnotation, SHARED_DRIVES_ANNOTATION } from '../src/annotations/index.js';
import type { WekaCluster, WekaContainer } from '../src/api/index.js';
import { FIELD_MANAGER, refText } from '../src/lifecycle/names.js';
import {
  clustersToRead,
  containerKey,
  decideNodeAllocations,
  objectKey,
  refusal,
  type AllocationAsk,
  type AllocationOutcome,
  type NodeDrives,
} from '../src/lifecycle/node-allocations.js';
import type { ActivityDeps } from './deps.js';
import { isConflict, orIfMissing } from './kube/errors.js';
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

  /**
   * One round: one read of the node and of every container on it, the decisions for the pending
   * asks, then their writes one by one in arrival order, each conditional on the version read. A
   * conflict (that container changed since the read) ends the round there: the decisions after it
   * counted its allocation, so they are made again from a fresh read. Returns the final outcomes.
   */
  async function allocationRound(
    node: string,
    asks: readonly AllocationAsk[],
  ): Promise<(AllocationOutcome | undefined)[]> {
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

    const decisions = decideNodeAllocations(
      { node, drives, onNode, asks, notListed, clusters, settings: deps.settings },
      randomUUID,
    );
    const final: (AllocationOutcome | undefined)[] = decisions.map((d) =>
      d.write || d.sameAs !== undefined ? undefined : d.outcome,
    );
    for (const [i, d] of decisions.entries()) {
      if (!d.write || !d.outcome.ok) continue;
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
        if (!isConflict(err)) throw err;
        deps.logger.info(
          { container: refText(d.write.ref), node },
          'container changed while allocating; deciding again from a fresh read',
        );
        break;
      }
      deps.logger.info(
        { container: refText(d.write.ref), node, virtualDrives: allocation.virtualDrives.length },
        'allocated',
      );
      final[i] = d.outcome;
    }
    for (const [i, d] of decisions.entries()) if (d.sameAs !== undefined) final[i] = final[d.sameAs];
    return final;
  }

  /** Decides every ask, in order, as if one after the other; answers in the same order. */
  async function allocateAll(node: string, asks: readonly AllocationAsk[]): Promise<MutexOutcome[]> {
    const outcomes: (AllocationOutcome | undefined)[] = asks.map(() => undefined);
    for (let round = 1; outcomes.some((o) => o === undefined); round++) {
      const pending = asks.map((_, i) => i).filter((i) => outcomes[i] === undefined);
      if (round > CONFLICT_ROUNDS) {
        const changing = [...new Set(pending.map((i) => refText(asks[i]!)))].join(', ');
        throw ApplicationFailure.retryable(
          `${changing} changed while allocating, ${CONFLICT_ROUNDS} reads in a row; retrying`,
          'AllocationConflict',
        );
      }
      const decided = await allocationRound(
        node,
        pending.map((i) => asks[i]!),
      );
      pending.forEach((index, j) => (outcomes[index] = decided[j]));
    }
    return outcomes as MutexOutcome[];
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

    async releaseAllocation({ namespace, name }: ContainerOnNode): Promise<MutexOutcome> {
      const ref = { namespace, name };
      const container = await api.getContainer(ref);
      if (container?.status?.allocations) {
        // Applying a status without the allocator's fields removes them (server-side apply).
        await api.applyStatus('WekaContainer', ref, {}, FIELD_MANAGER.allocator);
        deps.logger.info({ container: refText(ref) }, 'released allocation');
      }
      return { ok: true };
    },
  };
}
