// Activities that change Weka state by running the Weka CLIs in the container's pod. Each one
// probes first (reads the device header or the cluster's drive list) and acts only if the change
// is not already there, so a retry after a lost answer neither fails nor repeats the change.
import { ApplicationFailure } from '@temporalio/activity';
import type { VirtualDrive } from '../src/allocation/index.js';
import { decodeSharedDrivesAnnotation, SHARED_DRIVES_ANNOTATION } from '../src/annotations/index.js';
import {
  containerIdentityCall,
  containerListCall,
  DRIVE_ALREADY_IN_USE,
  driveAddCall,
  driveListCall,
  findContainerByName,
  findDriveByVirtualUUID,
  joinCalls,
  planJoin,
  planVirtualAdd,
  planVirtualRemove,
  readDriveCall,
  sameUUID,
  virtualAddCall,
  virtualRemoveCall,
  type ContainerIdentity,
  type Plan,
} from '../src/weka/index.js';
import { heartbeat, sleep } from '@temporalio/activity';
import type { ObjectRef } from '../src/api/names.js';
import { joinAddressesOf } from './join-addresses.js';
import type { ActivityDeps } from './deps.js';
import { WekaApi } from './kube/weka-api.js';
import { stderrOf, takeContainerOut, takeDriveOut } from './drive-removal.js';
import type { ClusterDriveAdd, ClusterDriveRef, ExecTargetRef, VirtualDriveOnNode } from './types.js';
import { wekaCli } from './weka-cli.js';
import { identify } from './weka-identity.js';

/** A container of a Weka cluster, to take out of it. */
export interface WekaContainerRef {
  /**
   * Where to run the CLI: the container's own pod, or any pod whose `weka` reaches the same
   * cluster (container IDs name one container of the cluster wherever the command runs).
   */
  target: ExecTargetRef;
  /** status.containerID, as joinCluster returned it. */
  containerId: number;
  /** The name it joined with; when given, a container listed under this ID with another name is a conflict. */
  name?: string;
}

/** How often, and how far apart, a restarted container's identity is read while it joins. */
const JOIN_LOOKS = 30;
const JOIN_LOOK_INTERVAL_MS = 2_000;

function conflict(plan: Plan, what: string): void {
  if (typeof plan === 'object') throw ApplicationFailure.nonRetryable(`${what}: ${plan.conflict}`, 'WekaStateConflict');
}

export function createWekaActivities(deps: ActivityDeps) {
  const api = new WekaApi(deps.kubeConfig);
  const run = wekaCli(deps.exec);

  /** The device that holds a virtual drive's physical drive, from the node's shared-drives annotation. */
  async function devicePathOf(node: string, drive: VirtualDrive): Promise<string> {
    const nodeObject = await api.core.readNode({ name: node });
    const decoded = decodeSharedDrivesAnnotation(nodeObject.metadata?.annotations?.[SHARED_DRIVES_ANNOTATION] ?? '[]');
    if (!decoded.ok)
      throw ApplicationFailure.retryable(`node ${node}: ${decoded.error.message}`, 'MalformedAnnotation');
    const physical = decoded.drives.find((d) => d.physicalUUID === drive.physicalUUID);
    if (!physical)
      throw ApplicationFailure.retryable(
        `node ${node} lists no shared drive ${drive.physicalUUID} (serial ${drive.serial})`,
        'PhysicalDriveMissing',
      );
    return physical.devicePath;
  }

  /** Signs it on its device unless it is there; whether it signed it. */
  async function signVirtualDrive({ target, node, drive, clusterGUID }: VirtualDriveOnNode): Promise<boolean> {
    const devicePath = await devicePathOf(node, drive);
    const request = {
      devicePath,
      virtualUUID: drive.virtualUUID,
      ownerClusterGUID: clusterGUID,
      sizeGiB: drive.capacityGiB,
      expected: { physicalUUID: drive.physicalUUID, serial: drive.serial },
    };
    const info = await run(target, readDriveCall(devicePath));
    const plan = planVirtualAdd(info, request);
    conflict(plan, `signing virtual drive ${drive.virtualUUID} on ${devicePath}`);
    if (plan !== 'run') return false;
    await run(target, virtualAddCall({ ...request, physicalUUID: info.physicalUUID! }));
    return true;
  }

  /**
   * Adds the virtual drive to the container's cluster, in the pool of its type, unless it is one of
   * the container's drives already; Weka names the drive by its virtual UUID.
   */
  async function addDriveToCluster({
    target,
    containerId,
    virtualUUID,
    type,
  }: ClusterDriveAdd): Promise<{ driveUUID: string; added: boolean }> {
    const listed = async () => findDriveByVirtualUUID(await run(target, driveListCall(containerId)), virtualUUID);
    if (await listed()) return { driveUUID: virtualUUID, added: false };
    try {
      await run(target, driveAddCall({ containerId, virtualUUID, type }));
    } catch (err) {
      if (!DRIVE_ALREADY_IN_USE.test(stderrOf(err))) throw err;
      // An earlier attempt added it and its answer was lost; or another container holds it.
      if (!(await listed()))
        throw ApplicationFailure.nonRetryable(
          `adding virtual drive ${virtualUUID} to container ${containerId}: Weka says it is in use, and not by this container`,
          'WekaStateConflict',
        );
    }
    return { driveUUID: virtualUUID, added: true };
  }

  return {
    /**
     * Joins the pod's Weka container to its cluster, unless its agent says it is in it already:
     * given the addresses of containers in the cluster (join-addresses.ts), it is restarted and
     * joins; then its identity gives the cluster's GUID and its container ID. `clusterGUID`, when
     * known (a WekaCluster's), must be the one it is in.
     */
    async joinCluster({
      target,
      ref,
      uid,
      name,
      agentPort,
      clusterGUID,
    }: {
      target: ExecTargetRef;
      ref: ObjectRef;
      uid: string;
      name: string;
      agentPort?: number | undefined;
      clusterGUID?: string | undefined;
    }): Promise<{ clusterGUID: string; containerId: number }> {
      if (agentPort === undefined)
        throw ApplicationFailure.nonRetryable(`${name} has no ports allocated: it cannot join`, 'NoPortsAllocated');
      const askIdentity = () => run(target, containerIdentityCall(name, agentPort));
      const member = (identity: ContainerIdentity) => {
        const plan = planJoin(identity, clusterGUID);
        if (typeof plan === 'object' && 'wait' in plan)
          throw ApplicationFailure.retryable(`${name}: ${plan.wait}`, 'JoinPending');
        conflict(plan, `joining ${name}`);
        return plan === 'already-done' && identity.state === 'member'
          ? { clusterGUID: identity.clusterGUID, containerId: identity.containerId }
          : undefined;
      };
      const joined = member(await askIdentity());
      if (joined) return joined;
      const addresses = await joinAddressesOf(api, ref, uid);
      if ('missing' in addresses) throw ApplicationFailure.retryable(`${name}: ${addresses.missing}`, 'NoJoinAddress');
      for (const call of joinCalls(addresses.joinIps)) await run(target, call);
      // The container restarts and joins: its agent says so once it has.
      for (let look = 0; look < JOIN_LOOKS; look++) {
        const now = member(await askIdentity().catch(() => ({ state: 'unknown', reason: 'restarting' }) as const));
        if (now) return now;
        heartbeat();
        await sleep(JOIN_LOOK_INTERVAL_MS);
      }
      throw ApplicationFailure.retryable(
        `${name} was given ${addresses.joinIps.length} join addresses and restarted, but is not in a cluster yet`,
        'JoinPending',
      );
    },

    /**
     * The ID of the pod's Weka container in the cluster, or null when it is not in it: what a
     * teardown undoes when a join's answer never came back. From its own pod its agent says; from a
     * peer's pod (`peer`), the cluster's container list, by name.
     */
    async findWekaContainer({
      target,
      clusterGUID,
      name,
      agentPort,
    }: {
      target: ExecTargetRef;
      /** Its cluster, when known; unknown (a standalone container's join whose answer was lost), any. */
      clusterGUID?: string | undefined;
      name: string;
      /** Given when `target` is the container's own pod. */
      agentPort?: number | undefined;
    }): Promise<{ containerId: number; clusterGUID: string } | null> {
      if (agentPort !== undefined) {
        const identity = await identify(run, target, name, agentPort);
        if (identity.state !== 'member') return null;
        if (clusterGUID !== undefined && !sameUUID(identity.clusterGUID, clusterGUID)) return null;
        return { containerId: identity.containerId, clusterGUID: identity.clusterGUID };
      }
      if (clusterGUID === undefined) return null;
      const found = findContainerByName(await run(target, containerListCall()), name);
      return found ? { containerId: found.containerId, clusterGUID } : null;
    },

    signVirtualDrive,
    addDriveToCluster,

    /**
     * Signs a virtual drive on its device, then adds it to the container's cluster: one activity,
     * so that each drive costs the workflow one round trip. Each half probes first, so a retry
     * (after a lost answer, or a worker killed between the two) redoes neither.
     */
    /** Signs the drive and adds it to the cluster, each unless done; `changed` when this call did either. */
    async signAndAddVirtualDrive(
      input: VirtualDriveOnNode & { containerId: number },
    ): Promise<{ driveUUID: string; changed: boolean }> {
      const signed = await signVirtualDrive(input);
      const { driveUUID, added } = await addDriveToCluster({
        target: input.target,
        containerId: input.containerId,
        virtualUUID: input.drive.virtualUUID,
        type: input.drive.type,
      });
      return { driveUUID, changed: signed || added };
    },

    /** Deactivates the virtual drive, then removes it once Weka has phased its data out (drive-removal.ts). */
    async removeDriveFromCluster({ target, virtualUUID }: ClusterDriveRef): Promise<void> {
      await takeDriveOut(run, target, virtualUUID);
    },

    /**
     * Takes the container out of its Weka cluster, so that its name can join again (from another
     * node too): deactivated, then removed once INACTIVE (drive-removal.ts). A container no longer
     * listed is done. Its drives must have been removed first: the cluster refuses to remove a
     * container that still has drives, and that refusal is a non-retryable WekaCommandRefused
     * (the container is left inactive).
     */
    async removeWekaContainer({ target, containerId, name }: WekaContainerRef): Promise<void> {
      await takeContainerOut(run, target, { containerId, ...(name === undefined ? {} : { name }) });
    },

    async unsignVirtualDrive({ target, node, drive, clusterGUID }: VirtualDriveOnNode): Promise<void> {
      const devicePath = await devicePathOf(node, drive);
      const request = {
        devicePath,
        virtualUUID: drive.virtualUUID,
        ownerClusterGUID: clusterGUID,
        expected: { physicalUUID: drive.physicalUUID, serial: drive.serial },
      };
      const info = await run(target, readDriveCall(devicePath));
      const plan = planVirtualRemove(info, request);
      conflict(plan, `removing virtual drive ${drive.virtualUUID} from ${devicePath}`);
      if (plan === 'run') await run(target, virtualRemoveCall({ ...request, physicalUUID: info.physicalUUID! }));
    },
  };
}
