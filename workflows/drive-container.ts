// The drive container's lifecycle (`weka-container/<uid>`), for WekaContainers of mode drive:
// ensure the node's proxy, allocate virtual drives and ports (through the node's mutex), run the
// pod on those ports, wait for the cluster GUID, join on them, sign and add every virtual drive,
// then stay Ready until deletion, growing in place (new virtual drives beside the ones it holds,
// on the same ports) when its spec asks for more, and making its pod (or its node's proxy pod)
// again when the watcher tells it one was lost, then checking its membership and drives. The
// object's deletion (never a cancel alone: workflows/lifecycle.ts) tears it all down in reverse, in
// a scope that cannot be cancelled. Every step is idempotent, so a restart redoes nothing.
import { condition, isCancellation, setHandler, upsertMemo, upsertSearchAttributes } from '@temporalio/workflow';
import type { ContainerAllocation, ContainerSnapshot, ExecTargetRef } from '../activities/types.js';
import { WEKA_PORT_BLOCK_SIZE } from '../src/allocation/ports.js';
import {
  TEARDOWN_WITHOUT_POD_ANNOTATION,
  WEKA_POD_CONTAINER,
  wekaContainerName,
  type ObjectRef,
} from '../src/api/names.js';
import { QUEUED_CONDITION } from '../src/operator/bring-up-admission.js';
import { podRefusalReason } from '../src/manifests/pods.js';
import { phaseOutReport } from '../src/lifecycle/phase-out.js';
import { needsAPerson } from '../src/lifecycle/standard-conditions.js';
import { DRIVE_PHASING_OUT } from '../src/weka/errors.js';
import {
  WekaCluster,
  WekaContainer,
  WekaNode,
  WekaPhase,
  nodeMutexId,
  podLostSignal,
  type MutexError,
  type ObjectWorkflowInput,
} from '../src/protocol.js';
import { inPod, kube, kubeLocal, weka } from './activities.js';
import { ContainerStatus } from './container-status.js';
import { Lifecycle, continuedRun, failureType, isContinueAsNew, messageOf, objectState } from './lifecycle.js';
import { ANSWER_NOT_IN_LEDGER, inLedger, releaseUntilOutOfLedger } from './ledger-checked.js';
import { installMutexClient } from './mutex-client.js';
import { finishVanishedTeardown, recordLeftInCluster, removeDrivesThroughProxy } from './teardown-from-node.js';

/** On a drive container whose teardown waits for Weka to phase its drives' data out. */
const PHASING_OUT_CONDITION = 'DrivesPhasingOut';

/** The recorded phases of a container that may have tried to join its Weka cluster. */
const MAY_HAVE_JOINED = new Set(['Signing', 'AddingDrives', 'Ready', 'Error', 'Refused', 'Deleting']);

/** A step that failed for good is tried again after this long, then twice as long each time, up to the max. */
const ERROR_RETRY_FIRST_S = 30;
/** The wait before a bring-up whose pod was found gone runs again (and makes it again). */
const POD_GONE_RETRY_S = 1;
const ERROR_RETRY_MAX_S = 600;

/** The Placed condition's reason while the named node does not exist. */
const NODE_NOT_FOUND = 'NodeNotFound';

/** The Ready condition's reason while a lost pod is made again and the container checked in it. */
const POD_LOST = 'PodLost';

/** A pod that cannot be made because its namespace is being deleted (activities/kube/pods.ts). */
const NAMESPACE_TERMINATING = 'NamespaceTerminating';

/** A refused allocation is asked again after a release on the node, a spec change, or this long. */
const CAPACITY_RETRY = '30 seconds';

/** The mutex's answer to an allocate: what the container holds, and why a growth it asks for waits, if it does. */
interface Granted {
  allocation: ContainerAllocation;
  pending?: { error: MutexError; waitForCapacity: boolean };
}

/** Virtual drives and whole drives alike. */
const drivesOf = (a: ContainerAllocation): number => a.virtualDrives.length + (a.drives?.length ?? 0);
const gibOf = (a: ContainerAllocation): number => a.virtualDrives.reduce((sum, d) => sum + d.capacityGiB, 0);
/** Whole drives (exclusive) or virtual drives (shared), as a status message says it. */
const drivesText = (a: ContainerAllocation): string =>
  a.drives?.length ? `${a.drives.length} whole drives` : `${a.virtualDrives.length} virtual drives, ${gibOf(a)} GiB`;
const portsText = (a: ContainerAllocation): string =>
  a.wekaPort === undefined
    ? 'no ports'
    : `ports ${a.wekaPort}-${a.wekaPort + WEKA_PORT_BLOCK_SIZE - 1}, agent port ${a.agentPort ?? '?'}`;

export async function driveContainerWorkflow(input: ObjectWorkflowInput): Promise<void> {
  const ref: ObjectRef = { namespace: input.namespace, name: input.name };
  const mutex = installMutexClient();
  const status = new ContainerStatus(ref, input.uid);
  const life = new Lifecycle(input, status);

  let snapshot = await kubeLocal.readContainer(ref);
  if (!snapshot || snapshot.uid !== input.uid) {
    // Deleted before we started, or another object now; or a teardown continued as new whose
    // object was removed meanwhile, which finishes from what it carried.
    const teardown = input.teardown;
    if (teardown) await finishVanishedTeardown({ ...input, teardown }, mutex);
    return;
  }
  // spec.nodeName may be set after creation (once): the container waits for it (waitForNode).
  let node = snapshot.spec.nodeName ?? '';
  /** A WekaCluster's member: its cluster waits on its phases (waitForClusterGUID, Ready). */
  const memberOfCluster = Boolean(snapshot.spec.cluster);
  // The recorded phase until the workflow enters another: a new run does not show a step it left.
  status.phase = snapshot.status.phase ?? status.phase;
  upsertMemo({ namespace: ref.namespace, name: ref.name, uid: input.uid });
  upsertSearchAttributes([
    { key: WekaContainer, value: `${ref.namespace}/${ref.name}` },
    { key: WekaNode, value: node },
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

  let target: ExecTargetRef = { namespace: ref.namespace, pod: ref.name, container: WEKA_POD_CONTAINER };
  /** What the node's mutex gave (the status only shows it: anyone who may write it can edit it). */
  let allocation: ContainerAllocation | undefined;
  let clusterGUID: string | undefined;
  /**
   * A run continued from an earlier one (past its history limit while it waited, or after a refused
   * teardown) whose object records that it got past the proxy (Allocating) or the pod too
   * (WaitingForCluster) resumes after them: the earlier run ensured them, and a run that had not
   * been interrupted would not look at them again.
   */
  let resumePastProxy =
    continuedRun() && ['Allocating', 'WaitingForCluster', 'Ready'].includes(snapshot.status.phase ?? '');
  let resumePastPod = continuedRun() && ['WaitingForCluster', 'Ready'].includes(snapshot.status.phase ?? '');
  /** Whole drives for its exclusive use, no ssdproxy: it sets no shared capacity (a member carries its template's). */
  const wholeDrives = snapshot.spec.driveCapacity === undefined && snapshot.spec.containerCapacity === undefined;

  /**
   * Whether a join may have reached the Weka cluster although its container id is not known: its
   * answer can be lost (Temporal cut from the worker, the object deleted before a retry learnt it).
   * A new run knows it from the recorded phase.
   */
  let joinTried = MAY_HAVE_JOINED.has(snapshot.status.phase ?? '');

  /**
   * Whether the named node was not found and has not been since: nothing was asked of its mutex,
   * so a teardown has nothing to release there. A new run knows it from the Placed condition.
   */
  let nodeMissing = snapshot.status.conditions.some(
    (c) => c.type === 'Placed' && c.status === 'False' && c.reason === NODE_NOT_FOUND,
  );

  /** Lost pods the watcher told of (podLostSignal); a Ready container looks at its pods at each. */
  let podLosses = 0;
  setHandler(podLostSignal, () => void podLosses++);
  /**
   * Whether its pod was found lost and made again: the next pass checks its Weka membership and
   * every drive instead of skipping the ones the status records as added. A new run knows it from
   * the Ready condition's reason, which stays PodLost until that check is done.
   */
  let recheck = continuedRun() && snapshot.status.conditions.some((c) => c.type === 'Ready' && c.reason === POD_LOST);

  /** This container's allocation request, and requests about the node's proxy, to the node's mutex. */
  const allocationCall = () =>
    mutex.call(nodeMutexId(node), 'allocate', { namespace: ref.namespace, name: ref.name, node, uid: input.uid }, node);
  const proxyCall = (kind: 'ensure-proxy' | 'remove-proxy-if-unused') =>
    mutex.call(nodeMutexId(node), kind, { node }, node);

  /**
   * Waits until a node is named and exists. A name no Node has (yet: nodes register after the
   * objects that name them, in a fresh cluster) is looked at again every 30 s, without asking
   * that node's mutex anything, so a made-up name starts no mutex.
   */
  async function waitForNode(): Promise<void> {
    for (;;) {
      const changes = life.specChanges;
      if (node && (await kubeLocal.nodeExists(node))) break;
      if (node) nodeMissing = true;
      const why = node
        ? `node ${node} does not exist: the container waits until a Node of that name registers (spec.nodeName cannot change: delete the container to give up)`
        : 'spec.nodeName is not set: the container waits until a node is named (it cannot change once set)';
      status.stage('Placed', 'False', node ? NODE_NOT_FOUND : 'NoNodeName', why, 'Warning');
      // A node registers on its own; a name only a person can give.
      if (node)
        await status.enter('Pending', `waiting for node ${node} to exist`, {
          kind: 'working',
          reason: NODE_NOT_FOUND,
          message: why,
        });
      else await status.enter('Refused', why, { kind: 'stalled', reason: 'NoNodeName', message: why });
      if (node) await condition(() => life.specChanges > changes, CAPACITY_RETRY);
      else await condition(() => life.specChanges > changes);
      await life.continueAsNewIfLong();
      const fresh = await kubeLocal.readContainer(ref);
      if (fresh) {
        snapshot = fresh;
        status.observedGeneration = fresh.generation;
        node = fresh.spec.nodeName ?? '';
      }
    }
    nodeMissing = false;
    upsertSearchAttributes([{ key: WekaNode, value: node }]);
    status.stage('Placed', 'True', 'NodeNamed', `on node ${node}`);
  }

  async function ensureProxy(): Promise<void> {
    await status.enter('Pending', "ensuring the node's ssdproxy");
    for (;;) {
      const answer = await proxyCall('ensure-proxy');
      if (answer.ok) return;
      const error = answer.error ?? { type: 'ProxyFailed', message: 'ensuring the proxy failed' };
      await status.condition('ProxyReady', 'False', error.type, error.message, 'Warning');
      await condition(() => false, CAPACITY_RETRY);
      await life.continueAsNewIfLong();
    }
  }

  /**
   * Asks the node's mutex for the allocation the spec asks for: a first one, or, once the container
   * holds one, the same grown if the spec asks for more. A container that holds drives keeps them
   * whatever the answer: a growth that does not fit (or any refusal) comes back as pending.
   */
  async function allocate(): Promise<Granted> {
    for (;;) {
      if (!allocation && status.phase !== 'Ready') await status.enter('Allocating', `allocating on node ${node}`);
      const releases = mutex.releases();
      const changes = life.specChanges;
      const answer = await allocationCall();
      const waitForCapacity = answer.waitForCapacity === true;
      if (answer.ok && !(await inLedger(node, input.uid, answer.result as ContainerAllocation))) {
        const message = `an answer to its allocation request gave what node ${node}'s ledger does not hold for it (a forged or misdelivered mutexResponse): ignored, and asked again`;
        await status.event('Warning', ANSWER_NOT_IN_LEDGER, message);
        await life.continueAsNewIfLong();
        continue;
      }
      if (answer.ok) {
        const result = answer.result as ContainerAllocation;
        const what = `${drivesText(result)} on node ${node}; ${portsText(result)}`;
        status.stage('Allocated', 'True', 'Allocated', what, 'Normal');
        return { allocation: result, ...(answer.error ? { pending: { error: answer.error, waitForCapacity } } : {}) };
      }
      const error = answer.error ?? { type: 'AllocationFailed', message: 'allocation failed' };
      if (allocation) return { allocation, pending: { error, waitForCapacity } };
      status.stage('Allocated', 'False', error.type, error.message, 'Warning');
      if (answer.waitForCapacity) {
        await status.enter('Allocating', `waiting for capacity on node ${node}: ${error.message}`, {
          kind: 'working',
          reason: error.type,
          message: error.message,
        });
        await condition(() => mutex.releases() > releases || life.specChanges > changes, CAPACITY_RETRY);
      } else {
        const why = `refused until the spec changes: ${error.message}`;
        await status.enter('Refused', why, { kind: 'stalled', reason: error.type, message: error.message });
        await condition(() => life.specChanges > changes);
      }
      // A new run reads the object afresh and asks again, as a release or a spec change would make this one do.
      await life.continueAsNewIfLong();
      const fresh = await kubeLocal.readContainer(ref);
      if (fresh) {
        snapshot = fresh;
        status.observedGeneration = fresh.generation;
      }
    }
  }

  /**
   * Makes the pod and waits for it to run. A pod the apiserver refuses (its namespace's quota was
   * used up after the node's mutex checked it) or the scheduler cannot place (its node has not the
   * room the scheduler counts) is shown, and tried again every 30 s or at a spec change; the
   * container keeps what it was given meanwhile.
   */
  async function startPod(alloc: ContainerAllocation): Promise<void> {
    for (;;) {
      await status.enter('Pending', `starting the pod on ${portsText(alloc)}`);
      const changes = life.specChanges;
      const failure = await kube
        .startContainerPod(ref)
        .then((t) => {
          target = t;
          return undefined;
        })
        .catch((err: unknown) => {
          const type = failureType(err);
          if (type === 'PodRefused' || type === 'PodUnschedulable') return { type, message: messageOf(err) };
          throw err;
        });
      if (failure === undefined) {
        for (const [type, reason] of [
          ['PodCreated', 'Created'],
          ['PodScheduled', 'Scheduled'],
        ] as const)
          if (status.conditions.some((c) => c.type === type && c.status === 'False'))
            status.stage(type, 'True', reason, `its pod runs on node ${node}`, 'Normal');
        return;
      }
      const [type, reason] =
        failure.type === 'PodRefused'
          ? ['PodCreated', podRefusalReason(failure.message)]
          : ['PodScheduled', 'Unschedulable'];
      status.stage(type, 'False', reason, `${failure.message}; tried again in 30 s`, 'Warning');
      await status.enter('Pending', `waiting for the pod (${reason}): ${failure.message}`, {
        kind: 'working',
        reason,
        message: failure.message,
      });
      await condition(() => life.specChanges > changes, CAPACITY_RETRY);
      await life.continueAsNewIfLong();
    }
  }

  async function waitForClusterGUID(): Promise<string> {
    if (status.phase !== 'Ready') await status.enter('WaitingForCluster', 'waiting for the cluster GUID');
    for (let delaySeconds = 1; ; delaySeconds = Math.min(delaySeconds * 2, 30)) {
      // The cluster's wake-up (it has formed) may come while the GUID is read: not missed.
      const received = life.mark();
      const guid = await kubeLocal.readClusterGUID(ref);
      if (guid) return guid;
      // The cluster forms from the first member waiting for it: told now, it need not wait for its next look.
      if (delaySeconds === 1 && memberOfCluster) await kubeLocal.wakeMemberCluster(ref);
      // A long wait (the cluster forms from a member whose pod runs): a pod that ended meanwhile
      // (evicted) is made again, so that this member can be the one, and can join later.
      if (delaySeconds === 30) target = await kube.ensureContainerPod(ref);
      await life.changed({ wakeUps: true, timeout: `${delaySeconds} seconds`, since: received });
      await life.continueAsNewIfLong();
    }
  }

  /** A standalone container joins through spec.joinIps: until a person lists some, it waits. */
  async function waitForJoinIps(): Promise<void> {
    for (let waited = false; ; waited = true) {
      const changes = life.specChanges;
      if ((await kubeLocal.readJoinIps(ref)).length > 0) {
        // A pod that ended while the container waited (evicted) is made again, to join from.
        if (waited) target = await kube.ensureContainerPod(ref);
        return;
      }
      const why =
        'spec.joinIps lists no address (ip:port) of a container of the Weka cluster to join: the container waits until it does';
      await status.enter('WaitingForCluster', why, { kind: 'stalled', reason: 'NoJoinIps', message: why });
      // The watcher signals the spec change; a look now and then covers a signal it could not send.
      await condition(() => life.specChanges > changes, '1 minute');
      await life.continueAsNewIfLong();
    }
  }

  /** Takes a virtual drive out of what the status records as added. */
  function forgetVirtualDrive(virtualUUID: string): void {
    status.addedVirtualDrives = status.addedVirtualDrives.filter((u) => u !== virtualUUID);
    status.addedDrives = status.addedDrives.filter((d) => d.virtualUUID !== virtualUUID);
  }

  /** Takes a whole drive out of what the status records as added. */
  function forgetWholeDrive(serial: string): void {
    status.addedDrives = status.addedDrives.filter((d) => d.serial !== serial || d.virtualUUID !== undefined);
  }

  /**
   * Joins the cluster and signs and adds every virtual drive the container does not have yet; with
   * `recheck` (its pod was made again), asks the cluster and the devices about every one of them,
   * so that whatever they lost meanwhile is joined or added again. Returns how many drives were
   * added (or found missing and added again).
   */
  async function signAndAdd(alloc: ContainerAllocation, known: string | undefined, recheck = false): Promise<number> {
    if (status.containerID === undefined || known === undefined || recheck) {
      await status.enter(
        'Signing',
        known ? `joining cluster ${known}` : 'joining its Weka cluster through spec.joinIps',
      );
      joinTried = true;
      const joined = await weka.joinCluster({
        target,
        ref,
        uid: input.uid,
        name: wekaContainerName(ref.namespace, ref.name),
        agentPort: alloc.agentPort,
        clusterGUID: known,
      });
      status.containerID = joined.containerId;
      status.clusterGUID = joined.clusterGUID;
      clusterGUID = joined.clusterGUID;
    }
    const containerId = status.containerID;
    const guid = status.clusterGUID ?? known!;
    if (alloc.drives?.length) return addWholeDrives(alloc.drives, containerId, guid, recheck);
    const count = alloc.virtualDrives.length;
    let added = 0;
    for (const [i, drive] of alloc.virtualDrives.entries()) {
      if (!recheck && status.addedVirtualDrives.includes(drive.virtualUUID)) continue;
      const doing = recheck ? 'checking' : 'signing';
      await status.enter(
        recheck ? status.phase : 'AddingDrives',
        `${doing} virtual drive ${i + 1} of ${count} (${drive.capacityGiB} GiB on ${drive.serial}) and adding it to the cluster`,
      );
      const { driveUUID } = await weka.signAndAddVirtualDrive({ target, node, drive, clusterGUID: guid, containerId });
      const entry = { uuid: driveUUID, virtualUUID: drive.virtualUUID, serial: drive.serial };
      if (!status.addedDrives.some((d) => d.uuid === driveUUID)) added++;
      forgetVirtualDrive(drive.virtualUUID);
      status.addedVirtualDrives = [...status.addedVirtualDrives, drive.virtualUUID];
      status.addedDrives = [...status.addedDrives, entry];
    }
    const what = `${count} virtual drives signed and added to cluster ${guid}`;
    status.stage('DrivesAdded', 'True', 'DrivesAdded', what, 'Normal');
    return added;
  }

  async function addWholeDrives(
    serials: readonly string[],
    containerId: number,
    guid: string,
    recheck: boolean,
  ): Promise<number> {
    let added = 0;
    for (const [i, serial] of serials.entries()) {
      if (!recheck && status.addedDrives.some((d) => d.serial === serial && d.virtualUUID === undefined)) continue;
      await status.enter(
        recheck ? status.phase : 'AddingDrives',
        `${recheck ? 'checking' : 'adding'} whole drive ${i + 1} of ${serials.length} (serial ${serial}) in the cluster`,
      );
      const { driveUUID } = await weka.addWholeDriveToCluster({ target, node, serial, containerId });
      if (!status.addedDrives.some((d) => d.uuid === driveUUID)) added++;
      forgetWholeDrive(serial);
      status.addedDrives = [...status.addedDrives, { uuid: driveUUID, serial }];
    }
    const what = `${serials.length} whole drives added to cluster ${guid}`;
    status.stage('DrivesAdded', 'True', 'DrivesAdded', what, 'Normal');
    return added;
  }

  /**
   * After the watcher told of a lost pod: whether the container's pod, or its node's proxy pod,
   * is lost indeed (the signal may be about a pod the container already made again). A lost one
   * takes Ready away, with the PodLost reason and Event, until the next pass made it again.
   */
  async function podsLost(): Promise<boolean> {
    const lost = await kubeLocal.lostPods({ ref, uid: input.uid, node, proxy: !wholeDrives });
    if (lost.length === 0) return false;
    recheck = true;
    const message =
      `${lost.join('; ')}: making it again on the same ports (${allocation ? portsText(allocation) : 'none given'}), ` +
      'then checking its Weka membership and drives';
    status.stage('Ready', 'False', POD_LOST, message);
    await status.event('Warning', POD_LOST, message);
    await status.enter('Pending', 'a pod was lost: making it again');
    // Its cluster is not Ready while a member is not: told now, not at the cluster's next look.
    if (memberOfCluster) await kubeLocal.wakeMemberCluster(ref);
    return true;
  }

  async function bringUp(): Promise<void> {
    await waitForNode();
    if (resumePastProxy || wholeDrives) resumePastProxy = false;
    else await ensureProxy();
    await status.publish();
    // Asked every run: the node's ledger answers with what it gave before, if it did.
    let podEnsured = false;
    for (;;) {
      const seen = { changes: life.specChanges, releases: mutex.releases(), podLosses };
      const granted = await allocate();
      const grew = allocation !== undefined && drivesOf(granted.allocation) > drivesOf(allocation);
      allocation = granted.allocation;
      status.allocation = allocation;
      // After the first allocation: the pod's environment carries the ports, and a pod's
      // environment never changes once it is made (a growth keeps the ports).
      if (!podEnsured) {
        podEnsured = true;
        if (resumePastPod) resumePastPod = false;
        else {
          // A lost proxy pod is made again by the node's mutex, as for the container's first pod.
          if (recheck && !wholeDrives) await ensureProxy();
          await startPod(allocation);
        }
      }
      await status.publish();
      // A member joins the cluster its WekaCluster formed; a standalone container learns its
      // cluster's GUID when it joins through spec.joinIps.
      if (memberOfCluster) clusterGUID ??= await waitForClusterGUID();
      else if (status.containerID === undefined) await waitForJoinIps();
      const readded = await signAndAdd(allocation, clusterGUID, recheck);
      if (recheck) {
        recheck = false;
        const drives = readded > 0 ? `${readded} drives were missing and were added again` : 'every drive in place';
        const message = `its pod runs again on the same ports; checked in Weka cluster ${clusterGUID}: container ${status.containerID ?? '?'}, ${drives}`;
        await status.event('Normal', 'PodRecovered', message);
      }
      status.stage('Ready', 'True', 'Ready', `all its ${drivesText(allocation)} are in the cluster`);
      await showGrowth(allocation, granted.pending, grew);
      // Ready, and usable, until the spec changes: then it grows if the spec asks for more.
      const waiting = granted.pending?.waitForCapacity === true;
      const becameReady = status.phase !== 'Ready';
      const growth = granted.pending?.error;
      await status.enter(
        'Ready',
        granted.pending
          ? `ready with ${gibOf(allocation)} GiB; growing waits for ${waiting ? 'capacity on the node' : 'a spec change'}`
          : 'ready; waiting for a spec change or deletion',
        // Serving, but not yet what the spec asks: at work while capacity may come, else stalled.
        growth && { kind: waiting ? 'working' : 'stalled', reason: growth.type, message: growth.message },
      );
      // Its cluster is Ready once its last member is: told now, not at the cluster's next look.
      if (becameReady && memberOfCluster) await kubeLocal.wakeMemberCluster(ref);
      // A deletion that comes with a lost pod wins: the pod is not made again for a teardown. It
      // must win however the two signals were split between workflow tasks, so that a replay
      // (which delivers together what a timed-out task saw apart) takes the same path.
      const podLost = () => podLosses > seen.podLosses && !life.deleteRequested;
      if (waiting)
        await condition(
          () => life.specChanges > seen.changes || mutex.releases() > seen.releases || podLost(),
          CAPACITY_RETRY,
        );
      else await condition(() => life.specChanges > seen.changes || podLost());
      if (podLost() && (await podsLost())) podEnsured = false;
      await life.continueAsNewIfLong();
      const fresh = await kubeLocal.readContainer(ref);
      if (fresh) status.observedGeneration = fresh.generation;
    }
  }

  /**
   * The Grown condition: once the spec asks for more than the container holds, whether it got it.
   * A growth that waits never touches what the container holds: its drives stay in the cluster.
   */
  async function showGrowth(alloc: ContainerAllocation, pending: Granted['pending'], grew: boolean): Promise<void> {
    const holds = drivesText(alloc);
    if (pending) {
      const when = pending.waitForCapacity
        ? 'asks again when capacity is released on the node, its spec changes, or in 30 s'
        : 'asks again when its spec changes';
      const message = `growing as the spec asks does not fit yet: ${pending.error.message}; the container keeps using its ${holds}, and ${when}`;
      status.stage('Grown', 'False', pending.error.type, message, 'Warning');
    } else if (grew || status.conditions.some((c) => c.type === 'Grown' && c.status === 'False')) {
      status.stage('Grown', 'True', 'Grown', `holds what its spec asks for: ${holds}`, 'Normal');
    }
  }

  /**
   * A failure the activity's retries could not fix (a refusal by a Weka tool, a state conflict,
   * output that does not parse) is shown, and the container waits instead of failing with
   * resources held: for a spec change, its deletion, or a while. What looked final can have been a
   * glitch (a tool killed mid-print by a kubelet restart), so the step is tried again after
   * ERROR_RETRY_FIRST_S, then less and less often; every step is idempotent. A Weka command that
   * found the pod gone (deleted after it ran) is tried again at once the first time, as the bring-up
   * makes the pod again before it.
   */
  async function bringUpUntilFixed(): Promise<void> {
    let podWasGone = false;
    for (let retryS = ERROR_RETRY_FIRST_S; ;) {
      try {
        return await bringUp();
      } catch (err) {
        if (isCancellation(err) || isContinueAsNew(err)) throw err;
        const type = failureType(err);
        const podGone = type === 'ExecPodMissing';
        const atOnce = podGone && !podWasGone;
        podWasGone = podGone;
        const waitS = atOnce ? POD_GONE_RETRY_S : retryS;
        if (!atOnce) retryS = Math.min(retryS * 2, ERROR_RETRY_MAX_S);
        const changes = life.specChanges;
        const failure = `${status.step}: ${messageOf(err)}`;
        status.stage('Ready', 'False', 'StepFailed', failure, 'Warning');
        // Tried again all the same: what a person must fix may be fixed outside the spec.
        const person = needsAPerson(type);
        await status.enter(
          person ? 'Refused' : 'Error',
          `failed while ${status.step}; trying again in ${waitS} s, or at a spec change, or deletion`,
          person ? { kind: 'stalled', reason: type ?? 'StepFailed', message: failure } : undefined,
        );
        await condition(() => life.specChanges > changes, `${waitS} seconds`);
        await life.continueAsNewIfLong();
      }
    }
  }

  async function teardown(): Promise<void> {
    await status.enter('Deleting', 'tearing down');
    if (!node) return finish('never placed on a node: nothing to undo');
    if (nodeMissing && !(await kubeLocal.nodeExists(node)))
      return finish(`node ${node} never existed while the container lived: nothing to undo`);
    // Read by name: what is found is this container's only while it has this uid.
    const read: ContainerSnapshot | null = await kubeLocal.readContainer(ref);
    const current = read?.uid === input.uid ? read : null;
    // What the node's ledger gave this uid, never what the status names: a forged status must not
    // make this teardown remove another container's drives.
    const alloc = (await kubeLocal.readNodeAllocation({ node, uid: input.uid })) ?? allocation;
    const guid =
      clusterGUID ??
      current?.status.clusterGUID ??
      (status.containerID !== undefined && current ? ((await kubeLocal.readClusterGUID(ref)) ?? undefined) : undefined);
    // A vanished node takes its devices and the container's pod with it: nothing can be undone
    // from there. Say what is left behind instead of retrying forever, and go on.
    const nodeGone = !(await kubeLocal.nodeExists(node));
    // Weka state exists only once the container tried to join its cluster (after its allocation);
    // undo it from the pod, finding the container by name if its id is not known. A standalone
    // container whose join's answer was lost knows no GUID: its pod's Weka container says it.
    const joined = alloc && (guid || !memberOfCluster) && (status.containerID !== undefined || joinTried);
    // A new run that finds the object gone (its finalizer removed by hand) finishes from these.
    life.carry({ teardown: { node, ...(guid ? { clusterGUID: guid } : {}), joined: Boolean(joined) } });
    if (nodeGone && alloc && guid) {
      const left = joined && !(await leaveClusterViaPeer(alloc, guid));
      const uuids = alloc.drives?.length
        ? `the cluster claims of whole drives ${alloc.drives.join(', ')}`
        : `the signatures of virtual drives ${alloc.virtualDrives.map((d) => d.virtualUUID).join(', ')}`;
      const message =
        `node ${node} no longer exists, and with it ${uuids} on its devices` +
        (left
          ? `; they may remain in Weka cluster ${guid} (container ${status.containerID ?? wekaContainerName(ref.namespace, ref.name)}), as no other member's pod could remove them: remove them with 'weka cluster drive remove' from another member`
          : '');
      await status.condition('Ready', 'False', 'NodeGone', message, 'Warning');
    }
    const undone = !nodeGone && joined ? await undoInPod(alloc, guid) : 'done';
    // Even when the ledger held nothing at the read above: an allocation the mutex was deciding
    // when the deletion came is written after that read, and this release, queued behind that
    // decision, takes it out again.
    await status.enter('Deleting', 'releasing the allocation');
    await releaseUntilOutOfLedger({
      mutex,
      node,
      container: { ...ref, uid: input.uid },
      warn: (message) => status.event('Warning', ANSWER_NOT_IN_LEDGER, message),
      between: () => life.continueAsNewIfLong(),
    });
    await status.enter('Deleting', 'deleting the pod');
    await kube.deleteContainerPod({ ...ref, uid: input.uid, force: undone === 'abandoned' });
    if (undone === 'abandoned') {
      // The proxy pod is on the same unreachable node: it stays until a later teardown finds it unused.
      return finish(`torn down without the pod (${TEARDOWN_WITHOUT_POD_ANNOTATION}); see the TeardownWithoutPod Event`);
    }
    await status.enter('Deleting', "removing the node's proxy if no drive container is left");
    await proxyCall('remove-proxy-if-unused');
    await finish('torn down: no virtual drive, allocation or pod is left');
  }

  /**
   * Removes the virtual drives from the cluster and the devices, then the container from the Weka
   * cluster, in the container's pod. When the
   * pod cannot be reached (its node is down but still exists), says so on the object and tries
   * again with a growing pause, until it succeeds or a person who checked the node sets the
   * TEARDOWN_WITHOUT_POD_ANNOTATION: then it records what may be left and gives up ('abandoned').
   */
  async function undoInPod(alloc: ContainerAllocation, known: string | undefined): Promise<'done' | 'abandoned'> {
    let guid = known;
    /** Passes in a row that reached the pod but a Weka command failed (a transient failure of the tool). */
    let toolFailures = 0;
    let leftViaPeer = false;
    for (let pause = 10; ;) {
      const now = await kubeLocal.readContainer(ref);
      // Its finalizer was removed by hand: the pod found by its name is no longer surely its own.
      if (now?.uid !== input.uid) return guid ? undoFromTheNode(alloc, guid, 'vanished') : 'done';
      if (now.annotations[TEARDOWN_WITHOUT_POD_ANNOTATION] === 'true') {
        const left = [
          ...alloc.virtualDrives.map(
            (d) => `${d.virtualUUID} (${d.capacityGiB} GiB on physical drive ${d.serial}, ${d.physicalUUID})`,
          ),
          ...(alloc.drives ?? []).map((serial) => `whole drive ${serial}`),
        ].join(', ');
        const message =
          `torn down without reaching the pod, as ${TEARDOWN_WITHOUT_POD_ANNOTATION} asked: these drives may ` +
          `remain signed on node ${node}'s devices and in Weka cluster ${guid} (container ${status.containerID ?? wekaContainerName(ref.namespace, ref.name)}): ${left}`;
        await status.condition('TeardownBlocked', 'True', 'TeardownWithoutPod', message);
        await status.event('Warning', 'TeardownWithoutPod', message);
        return 'abandoned';
      }
      try {
        await status.enter('Deleting', 'removing the virtual drives from the cluster and the devices');
        target = await inPod.startContainerPod(ref);
        if (status.containerID === undefined) {
          const name = wekaContainerName(ref.namespace, ref.name);
          const found = await inPod.findWekaContainer({ target, clusterGUID: guid, name, agentPort: alloc.agentPort });
          if (found !== null) {
            status.containerID = found.containerId;
            guid ??= found.clusterGUID;
          }
        }
        const containerId = status.containerID;
        // In no cluster and none known: its join never got an answer, so nothing was signed either.
        if (guid === undefined) return 'done';
        for (const drive of alloc.virtualDrives) {
          // Without a Weka container, no drive was added: only signatures can be left.
          if (containerId !== undefined)
            await inPod.removeDriveFromCluster({ target, containerId, virtualUUID: drive.virtualUUID });
          forgetVirtualDrive(drive.virtualUUID);
          await inPod.unsignVirtualDrive({ target, node, drive, clusterGUID: guid });
          await status.publish();
        }
        for (const serial of alloc.drives ?? []) {
          if (containerId !== undefined) await inPod.removeWholeDriveFromCluster({ target, node, serial, containerId });
          forgetWholeDrive(serial);
          // Signed again, the drive carries no cluster's claim: the next container can be given it.
          await inPod.releaseWholeDrive({ target, node, serial, clusterGUID: guid });
          await status.publish();
        }
        // Its drives are gone, so Weka lets the container leave; the name can then join again. A
        // cluster whose last container leaves is gone with it: Weka has no command to destroy one.
        if (containerId !== undefined) {
          await status.enter('Deleting', `removing container ${containerId} from the Weka cluster`);
          await removeWekaContainer(target, containerId);
        }
        if (status.conditions.some((c) => c.type === 'TeardownBlocked')) {
          await status.condition('TeardownBlocked', 'False', 'PodReached', 'the pod was reached again');
        }
        await phasedOut();
        return 'done';
      } catch (err) {
        const type = failureType(err);
        if (type === NAMESPACE_TERMINATING) return guid ? undoFromTheNode(alloc, guid, 'namespace') : 'done';
        if (await waitedForPhaseOut(err)) continue;
        // The pod answered and a Weka command failed after its retries: soon again, a few times,
        // before it is shown as blocked (each pass redoes only what is left).
        if (type === 'WekaCommandFailed' && ++toolFailures < 3) {
          await status.enter('Deleting', `a Weka command failed (${messageOf(err)}); trying again in 5 s`);
          await condition(() => false, '5 seconds');
          continue;
        }
        toolFailures = 0;
        // Its node is down: the cluster must stop counting on the container at once. Another
        // member takes it out; the signatures on the node's devices wait for the node.
        if (!leftViaPeer && guid && !(await kubeLocal.nodeReady(node)))
          leftViaPeer = await leaveClusterViaPeer(alloc, guid);
        const message =
          `cannot remove the virtual drives in pod ${ref.namespace}/${ref.name} on node ${node}: ${messageOf(err)}; ` +
          `trying again in ${pause} s. If the node is down for good, set the annotation ` +
          `${TEARDOWN_WITHOUT_POD_ANNOTATION}=true to finish without it (what may remain is then recorded)`;
        await status.condition('TeardownBlocked', 'True', 'PodUnreachable', message, 'Warning');
        await status.enter('Deleting', `waiting ${pause} s to reach the pod again`);
        await condition(() => false, `${pause} seconds`);
        pause = Math.min(pause * 2, 300);
        // The new run of an object being deleted goes straight to the teardown, which starts again
        // from the status: the allocation, the container id, the drives still added.
        await life.continueAsNewIfLong();
      }
    }
  }

  /** When this run first found a drive still phasing out, and whether it warned that it is slow. */
  let phaseOut: { startedMs: number; warned: boolean } | undefined;

  /**
   * When `err` says Weka is still moving a deactivated drive's (or container's) data to the rest of
   * the cluster: says so on the object, waits 15 s and returns true, never forcing it. False for
   * any other error.
   */
  async function waitedForPhaseOut(err: unknown): Promise<boolean> {
    if (failureType(err) !== DRIVE_PHASING_OUT) return false;
    phaseOut ??= { startedMs: Date.now(), warned: false };
    const report = phaseOutReport({ what: messageOf(err), nowMs: Date.now(), ...phaseOut });
    await status.condition(PHASING_OUT_CONDITION, 'True', 'PhasingOut', report.message);
    if (report.warn) {
      phaseOut.warned = true;
      await status.event('Warning', 'PhaseOutSlow', report.message);
    }
    await status.enter('Deleting', 'waiting 15 s for Weka to phase the drives out');
    await condition(() => false, '15 seconds');
    // A new run starts the wait's clock again: it warns later, never sooner.
    await life.continueAsNewIfLong();
    return true;
  }

  async function phasedOut(): Promise<void> {
    if (phaseOut) await status.condition(PHASING_OUT_CONDITION, 'False', 'PhasedOut', 'Weka phased the drives out');
  }

  /**
   * The teardown of a container that cannot use its own pod: its namespace is being deleted and
   * its pod is gone (nothing can be made there again, neither a pod nor an Event), or its object
   * vanished mid-teardown (its finalizer removed by hand: the pod of its name may be a successor's).
   * Takes the container out of its Weka cluster from another member's pod where one still runs;
   * removes its virtual drives from the devices (and gives its whole drives back) from its node's
   * ssdproxy pod, which lives in the operator's namespace, so that its capacity is free for the
   * node's other tenants; records on the Node what may remain in the Weka cluster. A proxy that
   * cannot be reached is shown and tried again with a growing pause.
   */
  async function undoFromTheNode(
    alloc: ContainerAllocation,
    guid: string,
    why: 'namespace' | 'vanished',
  ): Promise<'done'> {
    const because =
      why === 'namespace'
        ? 'its namespace is being deleted and its pod is gone'
        : 'its object was removed before its teardown ended (its finalizer removed by hand)';
    const left = (status.containerID !== undefined || joinTried) && !(await leaveClusterViaPeer(alloc, guid));
    const o = { ref, uid: input.uid, node, guid, alloc, mutex };
    await status.enter('Deleting', `${because}: removing its drives through the node's ssdproxy`);
    await removeDrivesThroughProxy({
      ...o,
      blocked: async (error, pauseS) => {
        const message = `${because}, and node ${node}'s ssdproxy cannot remove its drives: ${error}; trying again in ${pauseS} s`;
        await status.condition('TeardownBlocked', 'True', 'ProxyUnreachable', message);
      },
      between: () => life.continueAsNewIfLong(),
      removedVirtual: forgetVirtualDrive,
      removedWhole: forgetWholeDrive,
    });
    await status.publish();
    if (left)
      await recordLeftInCluster({
        ...o,
        because,
        ...(status.containerID !== undefined ? { containerId: status.containerID } : {}),
      });
    return 'done';
  }

  /**
   * Removes the container from its Weka cluster. Weka refuses while it still holds drives: drives
   * this object never added (an earlier object of its name that was never torn down joined under
   * the same name). That refusal leaves the container in the cluster and says so; it never holds
   * up the deletion.
   */
  async function removeWekaContainer(target: ExecTargetRef, containerId: number): Promise<void> {
    try {
      await inPod.removeWekaContainer({ target, containerId, name: wekaContainerName(ref.namespace, ref.name) });
    } catch (err) {
      if (failureType(err) !== 'WekaCommandRefused') throw err;
      const message = `container ${containerId} stays in its Weka cluster: ${messageOf(err)}`;
      await status.event('Warning', 'WekaContainerLeft', message);
    }
  }

  /**
   * Takes the container's drives, then the container, out of its Weka cluster from another
   * member's pod (of its WekaCluster, or else any drive container joined to the same Weka cluster,
   * in any namespace): for a container whose node is lost or whose own pod is gone for good, so
   * that the cluster stops counting on it; while Weka phases its drives' data out, waits (said on
   * the object), as its own pod would. False when no other member's pod can be reached (or a
   * command failed): the caller says what may remain.
   */
  async function leaveClusterViaPeer(alloc: ContainerAllocation, guid: string): Promise<boolean> {
    for (;;) {
      try {
        return await leaveClusterViaPeerOnce(alloc, guid);
      } catch (err) {
        if (isCancellation(err) || isContinueAsNew(err)) throw err;
        if (await waitedForPhaseOut(err)) continue;
        return false;
      }
    }
  }

  async function leaveClusterViaPeerOnce(alloc: ContainerAllocation, guid: string): Promise<boolean> {
    const cluster = snapshot?.spec.cluster;
    const peer = await kube.findPeerPod({
      namespace: ref.namespace,
      cluster,
      clusterGUID: guid,
      exceptUid: input.uid,
    });
    if (!peer) return false;
    await status.enter(
      'Deleting',
      `taking the container out of Weka cluster ${guid} from member ${peer.namespace}/${peer.pod}`,
    );
    const name = wekaContainerName(ref.namespace, ref.name);
    const containerId =
      status.containerID ?? (await inPod.findWekaContainer({ target: peer, clusterGUID: guid, name }))?.containerId;
    if (containerId !== undefined) {
      for (const drive of alloc.virtualDrives)
        await inPod.removeDriveFromCluster({ target: peer, containerId, virtualUUID: drive.virtualUUID });
      for (const serial of alloc.drives ?? [])
        await inPod.removeWholeDriveFromCluster({ target: peer, node, serial, containerId });
      await inPod.removeWekaContainer({ target: peer, containerId, name });
    }
    status.addedVirtualDrives = [];
    status.addedDrives = [];
    status.containerID = undefined;
    await status.publish();
    const message = `its own pod cannot: member ${peer.namespace}/${peer.pod} took container ${containerId ?? name} and its drives out of Weka cluster ${guid}`;
    await status.event('Normal', 'LeftClusterViaPeer', message);
    await phasedOut();
    return true;
  }

  async function finish(message: string): Promise<void> {
    status.containerID = undefined;
    status.allocation = undefined;
    await status.condition('Ready', 'False', 'Deleted', message);
    await status.enter('Deleted', 'torn down');
    await kubeLocal.removeFinalizer({ kind: 'WekaContainer', ref, uid: input.uid });
  }

  await life.run({
    deleting: snapshot.deleting,
    bringUp: bringUpUntilFixed,
    objectState: async () => objectState(await kubeLocal.readContainer(ref), input.uid),
    teardown,
  });
}
