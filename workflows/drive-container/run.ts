// The state one run of a drive container's workflow keeps, read from its object when the run
// starts: every step takes it, and what one step learns (its node, its allocation, its pod, its
// cluster) the next reads from it. A new run (continued as new) rebuilds it from the object.
import { setHandler, upsertMemo, upsertSearchAttributes } from '@temporalio/workflow';
import type { ContainerAllocation, ContainerSnapshot, ExecTargetRef } from '../../activities/types.js';
import { WEKA_PORT_BLOCK_SIZE } from '../../src/allocation/ports.js';
import { setsDriveSharing } from '../../src/api/schemas/capacity.js';
import { WEKA_POD_CONTAINER, type ObjectRef } from '../../src/api/names.js';
import { QUEUED_CONDITION } from '../../src/operator/bring-up-admission.js';
import {
  WekaCluster,
  WekaContainer,
  WekaNode,
  WekaPhase,
  nodeMutexId,
  podLostSignal,
  drivesMissingSignal,
  drivesBlockedSignal,
  type MutexResponse,
  type ObjectWorkflowInput,
} from '../../src/protocol.js';
import { kubeLocal } from '../activities.js';
import { Lifecycle, continuedRun } from '../lifecycle.js';
import { installMutexClient, type MutexClient } from '../mutex-client.js';
import { ContainerStatus } from './status.js';
import { finishVanishedTeardown } from './teardown-from-node.js';

/** The recorded phases of a container that may have tried to join its Weka cluster. */
const MAY_HAVE_JOINED = new Set(['Signing', 'AddingDrives', 'Ready', 'Error', 'Refused', 'Deleting']);

/** The Placed condition's reason while the named node does not exist. */
export const NODE_NOT_FOUND = 'NodeNotFound';

/** The Ready condition's reason while a lost pod is made again and the container checked in it. */
export const POD_LOST = 'PodLost';

/** The Ready condition's reason while virtual drives the drive verification found missing are signed and added again. */
export const DRIVES_MISSING = 'DrivesMissing';

/** A refused allocation (or a missing node, an unmade pod) is asked again after a release, a spec change, or this long. */
export const CAPACITY_RETRY = '30 seconds';

export class ContainerRun {
  readonly ref: ObjectRef;
  readonly mutex: MutexClient = installMutexClient();
  readonly status: ContainerStatus;
  readonly life: Lifecycle;
  /** The object as last read. */
  snapshot!: ContainerSnapshot;
  /** spec.nodeName, which may be set after creation (once): the container waits for it. */
  node = '';
  /** A WekaCluster's member: its cluster waits on its phases (the cluster GUID, Ready). */
  memberOfCluster = false;
  /** Whole drives for its exclusive use, no ssdproxy: it sets no shared capacity (a member carries its template's). */
  wholeDrives = false;
  /** The pod's container its Weka commands run in. */
  target: ExecTargetRef;
  /** What the node's mutex gave (the status only shows it: anyone who may write it can edit it). */
  allocation: ContainerAllocation | undefined;
  clusterGUID: string | undefined;
  /**
   * A run continued from an earlier one (past its history limit while it waited, or after a refused
   * teardown) whose object records that it got past the proxy (Allocating) or the pod too
   * (WaitingForCluster) resumes after them: the earlier run ensured them, and a run that had not
   * been interrupted would not look at them again.
   */
  resumePastProxy = false;
  resumePastPod = false;
  /**
   * Whether a join may have reached the Weka cluster although its container id is not known: its
   * answer can be lost (Temporal cut from the worker, the object deleted before a retry learnt it).
   * A new run knows it from the recorded phase.
   */
  joinTried = false;
  /**
   * Whether the named node was not found and has not been since: nothing was asked of its mutex,
   * so a teardown has nothing to release there. A new run knows it from the Placed condition.
   */
  nodeMissing = false;
  /** Lost pods the watcher told of (podLostSignal); a Ready container looks at its pods at each. */
  podLosses = 0;
  /**
   * Whether its pod was found lost and made again: the next pass checks its Weka membership and
   * every drive instead of skipping the ones the status records as added. A new run knows it from
   * the Ready condition's reason, which stays PodLost until that check is done.
   */
  recheck = false;
  /** Times the drive verification told of missing virtual drives (drivesMissingSignal), and the latest list. */
  drivesMissing = 0;
  missingDrives: string[] = [];
  /** Times a block-drives operation told of blocked drives it holds (drivesBlockedSignal). */
  drivesBlocked = 0;
  /** When this run first found a drive still phasing out, and whether it warned that it is slow. */
  phaseOut: { startedMs: number; warned: boolean } | undefined;

  constructor(readonly input: ObjectWorkflowInput) {
    this.ref = { namespace: input.namespace, name: input.name };
    this.status = new ContainerStatus(this.ref, input.uid);
    this.life = new Lifecycle(input, this.status);
    this.target = { namespace: this.ref.namespace, pod: this.ref.name, container: WEKA_POD_CONTAINER };
  }

  get uid(): string {
    return this.input.uid;
  }

  /** This container's allocation request to the node's mutex. */
  allocationCall(): Promise<MutexResponse> {
    const { node, ref } = this;
    return this.mutex.call(nodeMutexId(node), 'allocate', { ...ref, node, uid: this.uid }, node);
  }

  /** A request about the node's proxy to the node's mutex. */
  proxyCall(kind: 'ensure-proxy' | 'remove-proxy-if-unused'): Promise<MutexResponse> {
    return this.mutex.call(nodeMutexId(this.node), kind, { node: this.node }, this.node);
  }

  /** Reads the object again (when it still exists), for the generation the status reports. */
  async reread(): Promise<ContainerSnapshot | null> {
    const fresh = await kubeLocal.readContainer(this.ref);
    if (fresh) {
      this.snapshot = fresh;
      this.status.observedGeneration = fresh.generation;
    }
    return fresh;
  }
}

/**
 * Starts a run from the object; null when it is deleted already, or another object of its name
 * (a teardown continued as new whose object was removed meanwhile finishes from what it carried).
 */
export async function openRun(input: ObjectWorkflowInput): Promise<ContainerRun | null> {
  const run = new ContainerRun(input);
  const { ref, status } = run;
  const snapshot = await kubeLocal.readContainer(ref);
  if (!snapshot || snapshot.uid !== input.uid) {
    const teardown = input.teardown;
    if (teardown) await finishVanishedTeardown({ ...input, teardown }, run.mutex);
    return null;
  }
  run.snapshot = snapshot;
  run.node = snapshot.spec.nodeName ?? '';
  run.memberOfCluster = Boolean(snapshot.spec.cluster);
  // The recorded phase until the workflow enters another: a new run does not show a step it left.
  status.phase = snapshot.status.phase ?? status.phase;
  upsertMemo({ namespace: ref.namespace, name: ref.name, uid: input.uid });
  upsertSearchAttributes([
    { key: WekaContainer, value: `${ref.namespace}/${ref.name}` },
    { key: WekaNode, value: run.node },
    { key: WekaCluster, value: snapshot.spec.cluster ? `${ref.namespace}/${snapshot.spec.cluster}` : '' },
    { key: WekaPhase, value: status.phase },
  ]);
  status.addedVirtualDrives = [...snapshot.status.addedVirtualDrives];
  status.addedDrives = [...snapshot.status.addedDrives];
  // The watcher's Queued condition is the watcher's alone: applied back by the workflow, it
  // would outlive the watcher's removal of it.
  status.restoreConditions(snapshot.status.conditions.filter((c) => c.type !== QUEUED_CONDITION));
  status.containerID = snapshot.status.containerID;
  status.clusterGUID = snapshot.status.clusterGUID;
  status.observedGeneration = snapshot.generation;

  const phase = snapshot.status.phase ?? '';
  const conditions = snapshot.status.conditions;
  run.resumePastProxy = continuedRun() && ['Allocating', 'WaitingForCluster', 'Ready'].includes(phase);
  run.resumePastPod = continuedRun() && ['WaitingForCluster', 'Ready'].includes(phase);
  run.wholeDrives = !setsDriveSharing(snapshot.spec);
  run.joinTried = MAY_HAVE_JOINED.has(phase);
  run.nodeMissing = conditions.some((c) => c.type === 'Placed' && c.status === 'False' && c.reason === NODE_NOT_FOUND);
  setHandler(podLostSignal, () => void run.podLosses++);
  setHandler(drivesBlockedSignal, () => void run.drivesBlocked++);
  setHandler(drivesMissingSignal, ({ missing }) => {
    run.missingDrives = missing;
    run.drivesMissing++;
  });
  run.recheck =
    continuedRun() &&
    conditions.some((c) => c.type === 'Ready' && (c.reason === POD_LOST || c.reason === DRIVES_MISSING));
  return run;
}

/** Virtual drives and whole drives alike. */
export const drivesOf = (a: ContainerAllocation): number => a.virtualDrives.length + (a.drives?.length ?? 0);
export const gibOf = (a: ContainerAllocation): number => a.virtualDrives.reduce((sum, d) => sum + d.capacityGiB, 0);
/** Whole drives (exclusive) or virtual drives (shared), as a status message says it. */
export const drivesText = (a: ContainerAllocation): string =>
  a.drives?.length ? `${a.drives.length} whole drives` : `${a.virtualDrives.length} virtual drives, ${gibOf(a)} GiB`;
export const portsText = (a: ContainerAllocation): string =>
  a.wekaPort === undefined
    ? 'no ports'
    : `ports ${a.wekaPort}-${a.wekaPort + WEKA_PORT_BLOCK_SIZE - 1}, agent port ${a.agentPort ?? '?'}`;

/** Takes a virtual drive out of what the status records as added. */
export function forgetVirtualDrive(run: ContainerRun, virtualUUID: string): void {
  const { status } = run;
  status.addedVirtualDrives = status.addedVirtualDrives.filter((u) => u !== virtualUUID);
  status.addedDrives = status.addedDrives.filter((d) => d.virtualUUID !== virtualUUID);
}

/** Takes a whole drive out of what the status records as added. */
export function forgetWholeDrive(run: ContainerRun, serial: string): void {
  const { status } = run;
  status.addedDrives = status.addedDrives.filter((d) => d.serial !== serial || d.virtualUUID !== undefined);
}
