// The decisions a node's mutex workflow makes, one at a time: allocate for a container, release
// its allocation, ensure the node's ssdproxy, remove the proxy once nothing uses it. Each reads
// the apiserver afresh and is idempotent. Refusals are answers (data), not exceptions.
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import {
  allocateVirtualDrives,
  allocateContainerPorts,
  containerPortBlocks,
  type ContainerDriveClaims,
  type DriveSharingError,
  type PhysicalDrive,
} from '../src/allocation/index.js';
import { decodeSharedDrivesAnnotation, SHARED_DRIVES_ANNOTATION } from '../src/annotations/index.js';
import type { WekaContainer } from '../src/api/index.js';
import { FIELD_MANAGER, MANAGED_BY, MANAGED_BY_LABEL, proxyName, refText } from '../src/lifecycle/names.js';
import { wekaPod } from '../src/lifecycle/pods.js';
import { allocationRequest, usesDriveSharing } from '../src/lifecycle/requests.js';
import type { ActivityDeps } from './deps.js';
import { isAlreadyExists, isConflict, orIfMissing } from './kube/errors.js';
import { deletePod, ensurePod, waitPodRunning } from './kube/pods.js';
import { WekaApi } from './kube/weka-api.js';
import type { ContainerAllocation, ContainerOnNode, MutexActivities, MutexOutcome } from './types.js';

const refused = (type: string, message: string, waitForCapacity: boolean, data: Record<string, unknown> = {}): MutexOutcome => ({
  ok: false,
  error: { ...data, type, message },
  waitForCapacity,
});

export function createNodeDecisions(deps: ActivityDeps): Pick<MutexActivities, 'allocateForContainer' | 'releaseAllocation' | 'ensureProxy' | 'removeProxyIfUnused'> {
  const api = new WekaApi(deps.kubeConfig);
  const podTimeout = deps.podStartTimeoutMs ?? 60_000;

  async function sharedDrives(node: string): Promise<{ drives: PhysicalDrive[] } | MutexOutcome> {
    const nodeObject = await orIfMissing(api.core.readNode({ name: node }), null);
    if (!nodeObject) return refused('NodeNotFound', `node ${node} does not exist (any more); the container waits until it is back or its spec changes`, true);
    const text = nodeObject.metadata?.annotations?.[SHARED_DRIVES_ANNOTATION];
    if (text === undefined) {
      return refused('NoSharedDrives', `node ${node} has no signed shared drives yet (annotation ${SHARED_DRIVES_ANNOTATION}); sign them with a WekaManualOperation sign-drives with shared: true`, true);
    }
    const decoded = decodeSharedDrivesAnnotation(text);
    if (!decoded.ok) return refused('MalformedAnnotation', `node ${node}: ${decoded.error.message}`, true);
    return { drives: [...decoded.drives] };
  }

  return {
    async allocateForContainer({ namespace, name, node }: ContainerOnNode): Promise<MutexOutcome> {
      const ref = { namespace, name };
      const container = await api.getContainer(ref);
      if (!container || container.metadata.deletionTimestamp) return refused('ContainerGone', `${refText(ref)} no longer exists or is being deleted`, false);
      if (container.spec.nodeName !== node) return refused('InvalidObject', `${refText(ref)} is on node ${container.spec.nodeName ?? '(none)'}, not ${node}`, false);
      const existing = container.status?.allocations;
      if (existing?.virtualDrives && existing.virtualDrives.length > 0) {
        // Already allocated (a retry after the answer was lost): the status is the truth.
        return { ok: true, result: existing as ContainerAllocation };
      }
      const found = await sharedDrives(node);
      if ('ok' in found) return found;
      const cluster = container.spec.cluster ? await api.getCluster({ namespace, name: container.spec.cluster }) : null;
      if (container.spec.cluster && !cluster) return refused('ClusterNotFound', `WekaCluster ${namespace}/${container.spec.cluster} does not exist`, true);
      if (!usesDriveSharing(container.spec, cluster?.spec.dynamicTemplate)) {
        return refused('InvalidDriveSharingConfig', `${refText(ref)} sets neither driveCapacity nor containerCapacity (here or in its cluster's dynamicTemplate); exclusive drives are not supported yet`, false);
      }
      const others = (await api.listContainersOnNode(node)).filter((c) => c.metadata.uid !== container.metadata.uid);
      const claimed: ContainerDriveClaims[] = others.map((c) => ({
        container: `${c.metadata.namespace}/${c.metadata.name}`,
        virtualDrives: c.status?.allocations?.virtualDrives ?? [],
      }));
      const result = allocateVirtualDrives(
        { physicalDrives: found.drives, claimed, request: allocationRequest(container.spec, cluster?.spec.dynamicTemplate), settings: deps.settings },
        randomUUID,
      );
      if (!result.ok) return refused(result.error.type, result.error.message, waitsForNode(result.error), { ...result.error });
      const allocation: ContainerAllocation = { virtualDrives: [...result.virtualDrives] };
      const range = cluster?.status?.ports;
      if (range?.basePort !== undefined && range.portRange !== undefined) {
        const taken = others.flatMap((c) => containerPortsOf(c));
        const ports = allocateContainerPorts({ basePort: range.basePort, size: range.portRange }, taken, range);
        if (!ports.ok) return refused(ports.error.type, ports.error.message, true);
        allocation.wekaPort = ports.ports.wekaPort;
        allocation.agentPort = ports.ports.agentPort;
      }
      try {
        await api.applyStatus(
          'WekaContainer',
          ref,
          { allocations: { ...allocation, virtualDriveCount: allocation.virtualDrives.length } },
          FIELD_MANAGER.allocator,
          container.metadata.resourceVersion,
        );
      } catch (err) {
        // The container changed since we read it: decide again from a fresh read.
        if (isConflict(err)) throw ApplicationFailure.retryable(`${refText(ref)} changed while allocating; retrying`, 'AllocationConflict');
        throw err;
      }
      deps.logger.info({ container: refText(ref), node, virtualDrives: allocation.virtualDrives.length }, 'allocated');
      return { ok: true, result: allocation };
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

    async ensureProxy({ node }): Promise<MutexOutcome> {
      const name = proxyName(node);
      const ns = deps.operatorNamespace;
      // A proxy pod for a node that does not exist would never run; say so instead.
      if (!(await orIfMissing(api.core.readNode({ name: node }), null))) {
        return refused('NodeNotFound', `node ${node} does not exist; the container waits until it does or its spec changes`, true);
      }
      try {
        await api.createContainer({
          apiVersion: 'weka.weka.io/v1alpha1',
          kind: 'WekaContainer',
          metadata: { name, namespace: ns, labels: { [MANAGED_BY_LABEL]: MANAGED_BY } },
          spec: { mode: 'ssdproxy', nodeName: node, image: deps.proxyImage },
        } as WekaContainer);
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
      await ensurePod(api.core, wekaPod({ name, namespace: ns, node, image: deps.proxyImage, role: 'ssdproxy', owner: `${ns}/${name}` }));
      await waitPodRunning(api.core, ns, name, podTimeout);
      return { ok: true, result: { namespace: ns, pod: name } };
    },

    async removeProxyIfUnused({ node }): Promise<MutexOutcome> {
      const users = (await api.listContainersOnNode(node)).filter((c) => {
        if (c.spec.mode !== 'drive') return false;
        // A container being deleted whose allocation is already released no longer needs the proxy.
        const released = !(c.status?.allocations?.virtualDrives?.length);
        return !(c.metadata.deletionTimestamp && released);
      });
      if (users.length > 0) return { ok: true, result: { removed: false, users: users.length } };
      const name = proxyName(node);
      await deletePod(api.core, deps.operatorNamespace, name);
      await api.delete('WekaContainer', { namespace: deps.operatorNamespace, name });
      deps.logger.info({ node }, 'removed ssdproxy: no drive container left on the node');
      return { ok: true, result: { removed: true, users: 0 } };
    },
  };
}

/** Fields of an InvalidDriveSharingConfig that describe the node's drives and claims, not the request. */
const NODE_STATE_FIELDS = ['physicalDrives', 'claimed'];

/**
 * Whether the requester should ask again when the node changes. A shortfall, or a problem with
 * the node's drives (none of a type the request needs, a bad entry), can pass once drives are
 * signed or released there; a problem in the request or the settings only with a spec change.
 */
function waitsForNode(error: DriveSharingError): boolean {
  return error.type !== 'InvalidDriveSharingConfig' || NODE_STATE_FIELDS.some((field) => error.field.startsWith(field));
}

function containerPortsOf(c: WekaContainer) {
  const a = c.status?.allocations;
  return a?.wekaPort !== undefined && a.agentPort !== undefined ? containerPortBlocks({ wekaPort: a.wekaPort, agentPort: a.agentPort }) : [];
}
