// A WekaCluster's lifecycle (`weka-cluster/<uid>`): allocate its port range (through the global
// cluster-ports mutex), create its drive WekaContainers on the nodes its selector matches, form
// the Weka cluster from one of their pods (GUID into status.clusterGUID), and be Ready when every
// container is. Deletion tears down in reverse: containers first (their workflows undo their
// drives), then the ports, then the finalizer.
import {
  ParentClosePolicy,
  condition,
  getExternalWorkflowHandle,
  isCancellation,
  startChild,
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { WEKA_POD_CONTAINER, type ObjectRef } from '../src/api/names.js';
import {
  CLUSTER_PORTS_MUTEX_ID,
  WORKFLOW,
  WekaCluster,
  containerWorkflowId,
  deleteRequestedSignal,
  specChangedSignal,
  wakeUpSignal,
  type ObjectWorkflowInput,
} from '../src/protocol.js';
import { memberIndex, planMembers, servingMembersAtWork } from '../src/lifecycle/cluster-layout.js';
import { kube, kubeLocal, weka } from './activities.js';
import { ClusterStatus } from './cluster-status.js';
import { Lifecycle, continuedRun, isContinueAsNew, messageOf, objectState, type Received } from './lifecycle.js';
import { installMutexClient } from './mutex-client.js';
import { provisionDeviceSets, releaseDeviceSets } from './device-sets.js';

const RETRY_WAIT = '30 seconds';
/** How often settled device sets are looked at again. */
const DEVICE_SET_REVIEW_MS = 5 * 60_000;

export async function clusterWorkflow(input: ObjectWorkflowInput): Promise<void> {
  const ref: ObjectRef = { namespace: input.namespace, name: input.name };
  const mutex = installMutexClient();
  const status = new ClusterStatus(ref, input.uid);
  const life = new Lifecycle(input, status);

  let cluster = await kubeLocal.readCluster(ref);
  if (!cluster || cluster.uid !== input.uid) return;
  upsertMemo({ namespace: ref.namespace, name: ref.name, uid: input.uid });
  upsertSearchAttributes([{ key: WekaCluster, value: `${ref.namespace}/${ref.name}` }]);
  status.observedGeneration = cluster.generation;
  status.restoreConditions(cluster.status.conditions);
  if (cluster.status.clusterGUID) status.clusterGUID = cluster.status.clusterGUID;

  /**
   * Waits until a spec change, a wake-up, or the timeout; re-reads the cluster after. A new run
   * (past the history limit) reads it afresh and looks again, as a spec change or a wake-up would.
   */
  async function pause(timeout: string, since?: Received): Promise<void> {
    await life.changed({ wakeUps: true, timeout, ...(since ? { since } : {}) });
    await life.continueAsNewIfLong(() => deviceSetWork ?? Promise.resolve());
    const now = await kubeLocal.readCluster(ref);
    if (now?.uid === input.uid) {
      cluster = now;
      status.observedGeneration = now.generation;
    } else {
      // Gone, or another cluster of the name (this one forced out, its finalizer removed by hand):
      // its teardown, as if the watcher had told of the deletion.
      life.requestTeardown();
    }
  }

  /**
   * A run continued from an earlier one whose cluster records its port range (the PortsAllocated
   * condition, written after the allocator wrote status.ports) does not ask the ports mutex again:
   * it would answer with the same ports.
   */
  const portsRecorded =
    continuedRun() && cluster.status.conditions.some((c) => c.type === 'PortsAllocated' && c.status === 'True');

  async function allocatePorts(): Promise<void> {
    await status.enter('AllocatingPorts', 'allocating the cluster port range');
    for (;;) {
      const answer = await mutex.call(CLUSTER_PORTS_MUTEX_ID, 'allocate-cluster-ports', { ...ref, uid: input.uid });
      if (answer.ok) {
        const ports = answer.result as { basePort: number; portRange: number };
        await status.condition(
          'PortsAllocated',
          'True',
          'PortsAllocated',
          `ports ${ports.basePort}-${ports.basePort + ports.portRange - 1}`,
        );
        return;
      }
      const reason = answer.error?.type ?? 'PortsRefused';
      const message = answer.error?.message ?? 'port allocation refused';
      status.stage('PortsAllocated', 'False', reason, message, 'Warning');
      // Asked again all the same: the range may be freed by another cluster's deletion.
      await status.enter('Refused', `${message}; asking again every ${RETRY_WAIT}`, {
        kind: 'stalled',
        reason,
        message,
      });
      await pause(RETRY_WAIT);
    }
  }

  /** The watcher starts member workflows too; whichever comes first wins, the other is a no-op. */
  async function startMembers(members: { name: string; uid: string }[]): Promise<void> {
    for (const m of members) {
      try {
        await startChild(WORKFLOW.driveContainer, {
          workflowId: containerWorkflowId(m.uid),
          args: [{ namespace: ref.namespace, name: m.name, uid: m.uid }],
          taskQueue: workflowInfo().taskQueue,
          parentClosePolicy: ParentClosePolicy.ABANDON,
        });
      } catch {
        // Already running (started by the watcher): nothing to do.
      }
    }
  }

  async function tellMembers(
    members: { uid: string }[],
    signal: typeof wakeUpSignal | typeof deleteRequestedSignal | typeof specChangedSignal,
  ): Promise<void> {
    for (const m of members) {
      try {
        await getExternalWorkflowHandle(containerWorkflowId(m.uid)).signal(signal);
      } catch {
        // Not running (finished, or not started yet): it reads the state when it runs.
      }
    }
  }

  /**
   * Forms the Weka cluster of the members' containers, from the first one's running pod (or finds
   * it formed).
   */
  async function form(stems: { name: string; uid: string }[]): Promise<void> {
    const target = { namespace: ref.namespace, pod: stems[0]!.name, container: WEKA_POD_CONTAINER };
    await status.enter('Forming', `forming the Weka cluster of ${stems.map((m) => m.name).join(', ')}`);
    status.clusterGUID = await weka.formWekaCluster({ ref, members: stems, target });
    await status.condition('Formed', 'True', 'Formed', `Weka cluster ${status.clusterGUID}`, 'Normal');
  }

  /**
   * One pass of bringing the members to the spec (src/lifecycle/cluster-layout.ts planMembers):
   * replace members whose node is lost, add missing slots, take the highest surplus member away,
   * raise capacities to the template's. Says whether every member the cluster counts on is Ready
   * (`serving`: members going away do not count) and whether nothing was left to do (`settled`).
   */
  async function converge(): Promise<Pass> {
    const spec = cluster!.spec;
    const count = spec.dynamicTemplate?.driveContainers ?? 0;
    if (count === 0) {
      const why = 'dynamicTemplate.driveContainers is not set';
      await status.condition('ContainersPlaced', 'False', 'NoDriveContainers', why, 'Warning');
      return { serving: false, settled: false, step: why };
    }
    const view = await kubeLocal.clusterView({ ref, uid: input.uid });
    deviceSets(view.nodes.filter((n) => n.selected).map((n) => n.name));
    const plan = planMembers({
      cluster: ref.name,
      count,
      template: {
        ...(spec.dynamicTemplate?.containerCapacity !== undefined
          ? { containerCapacity: spec.dynamicTemplate.containerCapacity }
          : {}),
        ...(spec.dynamicTemplate?.numDrives !== undefined ? { numDrives: spec.dynamicTemplate.numDrives } : {}),
      },
      members: view.members,
      nodes: view.nodes,
    });
    for (const r of plan.remove) {
      await kube.removeClusterMember({ ref: { namespace: ref.namespace, name: r.name }, uid: r.uid });
      await tellMembers([r], deleteRequestedSignal);
      if (r.reason === 'NodeLost') await recordReplacement(r, plan, view.members);
    }
    for (const g of plan.grow) {
      const { name, uid, ...capacity } = g;
      await kube.growClusterMember({ ref: { namespace: ref.namespace, name }, uid, capacity });
      await tellMembers([{ uid }], specChangedSignal);
    }
    let members = view.members.map((m) => ({ name: m.name, uid: m.uid }));
    if (plan.create.length > 0) {
      await status.enter(status.phase, `creating ${plan.create.map((c) => `${c.name} on ${c.node}`).join(', ')}`);
      members = await kube.createClusterMembers({ ref, uid: input.uid, create: plan.create });
      await startMembers(members);
    }
    if (plan.unplaced.length > 0) {
      const why = `no selected node is Ready for slot(s) ${plan.unplaced.join(', ')}`;
      await status.condition('ContainersPlaced', 'False', 'NoMatchingNodes', why, 'Warning');
      return { serving: false, settled: false, step: why };
    }
    // A member that waits for a person holds the cluster back until one acts.
    const refusedNames = view.members.filter((m) => plan.serving.includes(m.name) && m.phase === 'Refused');
    const withRefused = (pass: Pass): Pass =>
      refusedNames.length === 0
        ? pass
        : {
            ...pass,
            settled: false,
            refused: `drive containers ${refusedNames.map((m) => m.name).join(', ')} are refused (their Stalled condition says why): ${pass.step}`,
          };
    const placed = `${plan.serving.length} drive containers`;
    if (!status.conditions.some((c) => c.type === 'ContainersPlaced' && c.status === 'True' && c.message === placed))
      await status.condition('ContainersPlaced', 'True', 'ContainersPlaced', placed);
    if (!status.clusterGUID) {
      // Formed of every member that holds its allocation, waits for the cluster and whose pod runs,
      // as Weka forms one of its initial containers: a member still waiting for capacity, or whose
      // pod was evicted, holds nobody up, and joins later through the others.
      const stems: { name: string; uid: string }[] = [];
      for (const m of [...view.members].sort((x, y) => bySlot(x.name, y.name)))
        if (plan.serving.includes(m.name) && m.phase === 'WaitingForCluster')
          if (await kubeLocal.memberPodRunning({ namespace: ref.namespace, name: m.name, uid: m.uid }))
            stems.push({ name: m.name, uid: m.uid });
      const waiting = 'waiting for an allocated member with a running pod, to form the cluster from it';
      if (stems.length === 0) return withRefused({ serving: false, settled: false, step: waiting });
      await form(stems);
    }
    if (plan.create.length > 0 || plan.grow.length > 0 || formedNow()) await tellMembers(members, wakeUpSignal);
    await keepDisruptionBudget(plan.serving.length);
    const phases = new Map(view.members.map((m) => [m.name, m.phase]));
    const ready = plan.serving.filter((n) => phases.get(n) === 'Ready').length;
    const serving = ready === plan.serving.length;
    // A member grows while Ready: the cluster is at work until each has what its template asks.
    const atWork = servingMembersAtWork(view.members, plan.serving);
    const doing = [
      plan.create.length > 0 ? `adding ${plan.create.length}` : '',
      plan.remove.length > 0 ? `taking away ${plan.remove.map((r) => r.name).join(', ')}` : '',
      plan.grow.length > 0 ? `growing ${plan.grow.map((g) => g.name).join(', ')}` : '',
      plan.grow.length === 0 && atWork.length > 0 ? `${atWork.join(', ')} reaching their spec` : '',
    ].filter((x) => x !== '');
    const step = `${ready} of ${plan.serving.length} drive containers Ready${doing.length ? `; ${doing.join('; ')}` : ''}`;
    return withRefused({ serving, settled: doing.length === 0, step });
  }

  /**
   * The spec generation and selected nodes at which every device was signed: nothing to look at
   * until they change, or for DEVICE_SET_REVIEW (a device pod deleted meanwhile is made again then).
   */
  let deviceSetsSettled = '';
  /** The device-set pass under way, if one is. */
  let deviceSetWork: Promise<void> | undefined;
  /**
   * Starts a pass over the device sets unless one is under way or they are settled. It runs beside
   * the members' convergence: a member that already holds its allocation (from drives the node
   * shares anyway, or a quicker node's devices) forms the cluster without waiting for the slowest
   * node's signing, which queues behind that node's other work.
   */
  function deviceSets(selected: string[]): void {
    const key = `${cluster!.generation}/${selected.join(',')}/${Math.floor(Date.now() / DEVICE_SET_REVIEW_MS)}`;
    if (key === deviceSetsSettled || deviceSetWork) return;
    deviceSetWork = provisionInBackground(key).finally(() => {
      deviceSetWork = undefined;
    });
  }

  /** Never rejects: nothing awaits it until the run continues as new. */
  async function provisionInBackground(key: string): Promise<void> {
    try {
      if (await provisionDeviceSets({ ref, uid: input.uid, mutex, status })) deviceSetsSettled = key;
    } catch (err) {
      // Cancelled with the bring-up (the cluster is being deleted), whose own wait ends with it.
      if (isCancellation(err)) return;
      // The members go on without them: a device set's failure is shown, and looked at again next pass.
      await status
        .condition('DeviceSetsReady', 'False', 'StepFailed', messageOf(err), 'Warning')
        .catch(() => undefined);
    }
  }

  let formedBefore = Boolean(status.clusterGUID);
  /** Whether the cluster was formed since the last look: its members then learn its GUID. */
  function formedNow(): boolean {
    const now = Boolean(status.clusterGUID) && !formedBefore;
    formedBefore = Boolean(status.clusterGUID);
    return now;
  }
  const bySlot = (a: string, b: string) => (memberIndex(ref.name, a) ?? 0) - (memberIndex(ref.name, b) ?? 0);

  /** Says on the cluster which member is replaced and what it leaves on its lost node. */
  async function recordReplacement(
    r: { name: string; message: string },
    plan: { create: { name: string; index: number; node: string }[] },
    members: { name: string; node: string; holds: string }[],
  ): Promise<void> {
    const old = members.find((m) => m.name === r.name);
    const by = plan.create.find((c) => c.index === memberIndex(ref.name, r.name));
    const message =
      `member ${r.name} is replaced${by ? ` by ${by.name} on node ${by.node}` : ''}: ${r.message}. ` +
      `It held ${old?.holds ?? 'nothing known'} on node ${old?.node ?? '?'}; its teardown takes it out of the Weka ` +
      'cluster from another member, and the signatures stay on that node until it is back (or are gone with it)';
    await status.condition('MembersReplaced', 'True', 'NodeLost', message, 'Warning');
  }

  /** The member count the cluster's disruption budget was last made for, in this run. */
  let budgetFor: number | undefined;
  /** Keeps the disruption budget at every member but one (src/manifests/disruption-budget.ts). */
  async function keepDisruptionBudget(members: number): Promise<void> {
    if (budgetFor === members) return;
    const done = await kube.ensureClusterDisruptionBudget({ ref, uid: input.uid, members });
    budgetFor = members;
    if (done === 'foreign') {
      const message = `a PodDisruptionBudget named like the cluster's is not the operator's: left as it is, so drains are not held to one member at a time`;
      await status.event('Warning', 'DisruptionBudgetTaken', message);
    }
  }

  /** What one convergence pass found; `refused` says which members wait for a person, if any do. */
  interface Pass {
    serving: boolean;
    settled: boolean;
    step: string;
    refused?: string;
  }

  /** Whether the cluster was Ready once: after that, converging is an update, not a forming. */
  let everReady = status.conditions.some((c) => c.type === 'Ready' && c.status === 'True');

  /**
   * Brings the cluster up, then keeps it as the spec says for as long as it lives: a spec change
   * (more or fewer members, a larger template), a lost node and a member's own changes are each
   * converged on; the cluster is Ready whenever every member it counts on is.
   */
  async function bringUp(): Promise<void> {
    if (!portsRecorded) await allocatePorts();
    for (let delay = 1; ;) {
      let pass: Pass;
      // A member's wake-up that comes while this pass runs calls for another pass at once.
      const received = life.mark();
      try {
        pass = await converge();
      } catch (err) {
        // A step that failed for good (a refused Weka command, a refused write): shown, and the
        // next pass, which reads everything afresh, tries again.
        if (isCancellation(err) || isContinueAsNew(err)) throw err;
        pass = { serving: false, settled: false, step: `a step failed: ${messageOf(err)}; trying again` };
        await status.condition('Converged', 'False', 'StepFailed', pass.step, 'Warning');
      }
      const { serving, settled, step, refused } = pass;
      if (serving && settled && status.conditions.some((c) => c.type === 'Converged' && c.status === 'False'))
        await status.condition('Converged', 'True', 'Converged', 'the members match the spec');
      const readyNow = status.conditions.some((c) => c.type === 'Ready' && c.status === 'True');
      if (serving && !readyNow) await status.condition('Ready', 'True', 'Ready', 'every drive container is Ready');
      if (!serving && readyNow) await status.condition('Ready', 'False', 'MembersNotReady', step);
      if (serving) everReady = true;
      const phase = refused ? 'Refused' : serving && settled ? 'Ready' : everReady ? 'Updating' : 'Forming';
      const shown = refused ?? (phase === 'Ready' ? 'ready; watching members, nodes and the spec' : step);
      const progress = refused ? { kind: 'stalled' as const, reason: 'MembersRefused', message: refused } : undefined;
      if (status.phase !== phase || status.step !== shown) await status.enter(phase, shown, progress);
      delay = serving && settled ? 30 : Math.min(delay * 2, 15);
      await pause(`${delay} seconds`, received);
    }
  }

  async function teardown(): Promise<void> {
    await status.enter('Deleting', 'deleting the drive containers');
    for (;;) {
      const members = await kubeLocal.clusterMembers({ ref, uid: input.uid });
      await kube.deleteClusterContainers({ ref, uid: input.uid });
      await tellMembers(members, deleteRequestedSignal);
      if (members.length === 0) break;
      await status.enter('Deleting', `waiting for ${members.length} drive containers to tear down`);
      await condition(() => false, '2 seconds');
      // A member's teardown may wait long (its pod unreachable): the new run of a cluster being
      // deleted goes straight to this teardown, which starts again from the members that are left.
      await life.continueAsNewIfLong();
    }
    await status.enter('Deleting', 'releasing the port range');
    await mutex.call(CLUSTER_PORTS_MUTEX_ID, 'release-cluster-ports', { ...ref, uid: input.uid });
    for (;;) {
      await status.enter('Deleting', 'releasing the device sets');
      if (await releaseDeviceSets({ ref, uid: input.uid, mutex, status })) break;
      await condition(() => false, RETRY_WAIT);
      await life.continueAsNewIfLong();
    }
    await status.enter('Deleted', 'torn down');
    await kubeLocal.removeFinalizer({ kind: 'WekaCluster', ref, uid: input.uid });
  }

  await life.run({
    deleting: cluster.deleting,
    bringUp,
    objectState: async () => objectState(await kubeLocal.readCluster(ref), input.uid),
    teardown,
  });
}
