// A WekaCluster's lifecycle (`weka-cluster/<uid>`): allocate its port range (through the global
// cluster-ports mutex), create its drive WekaContainers on the nodes its selector matches, form
// the Weka cluster from one of their pods (GUID into status.clusterGUID), and be Ready when every
// container is. Deletion tears down in reverse: containers first (their workflows undo their
// drives), then the ports, then the finalizer.
import {
  ParentClosePolicy,
  condition,
  getExternalWorkflowHandle,
  startChild,
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { WEKA_POD_CONTAINER, type ObjectRef } from '../src/lifecycle/names.js';
import {
  CLUSTER_PORTS_MUTEX_ID,
  WORKFLOW,
  WekaCluster,
  containerWorkflowId,
  deleteRequestedSignal,
  wakeUpSignal,
  type ObjectWorkflowInput,
} from '../src/protocol.js';
import { kube, weka } from './activities.js';
import { ClusterStatus } from './cluster-status.js';
import { Lifecycle, continuedRun, objectState } from './lifecycle.js';
import { installMutexClient } from './mutex-client.js';

const RETRY_WAIT = '30 seconds';

export async function clusterWorkflow(input: ObjectWorkflowInput): Promise<void> {
  const ref: ObjectRef = { namespace: input.namespace, name: input.name };
  const mutex = installMutexClient();
  const status = new ClusterStatus(ref);
  const life = new Lifecycle(input, status);

  let cluster = await kube.readCluster(ref);
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
  async function pause(timeout: string): Promise<void> {
    await life.changed({ wakeUps: true, timeout });
    await life.continueAsNewIfLong();
    cluster = (await kube.readCluster(ref)) ?? cluster;
  }

  /**
   * A run continued from an earlier one whose cluster records its port range (the PortsAllocated
   * condition, written after the allocator wrote status.ports) does not ask the ports mutex again:
   * it would answer with the same ports.
   */
  const portsRecorded =
    continuedRun() && cluster.status.conditions.some((c) => c.type === 'PortsAllocated' && c.status === 'True');

  async function allocatePorts(): Promise<void> {
    for (;;) {
      await status.enter('AllocatingPorts', 'allocating the cluster port range');
      const answer = await mutex.call(CLUSTER_PORTS_MUTEX_ID, 'allocate-cluster-ports', ref);
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
      await status.condition(
        'PortsAllocated',
        'False',
        answer.error?.type ?? 'PortsRefused',
        answer.error?.message ?? 'port allocation refused',
        'Warning',
      );
      await pause(RETRY_WAIT);
    }
  }

  async function placeContainers(): Promise<{ name: string; uid: string }[]> {
    for (;;) {
      await status.enter('Forming', 'finding the nodes the selector matches');
      const nodes = await kube.listSelectedNodes({ nodeSelector: cluster!.spec.nodeSelector ?? {} });
      const count = cluster!.spec.dynamicTemplate?.driveContainers ?? 0;
      if (nodes.length > 0 && count > 0) {
        await status.enter('Forming', `creating ${count} drive containers on ${nodes.length} nodes`);
        return kube.ensureClusterContainers({ ref, nodes });
      }
      const why = count === 0 ? 'dynamicTemplate.driveContainers is not set' : 'no node matches spec.nodeSelector';
      await status.condition(
        'ContainersPlaced',
        'False',
        count === 0 ? 'NoDriveContainers' : 'NoMatchingNodes',
        why,
        'Warning',
      );
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
    signal: typeof wakeUpSignal | typeof deleteRequestedSignal,
  ): Promise<void> {
    for (const m of members) {
      try {
        await getExternalWorkflowHandle(containerWorkflowId(m.uid)).signal(signal);
      } catch {
        // Not running (finished, or not started yet): it reads the state when it runs.
      }
    }
  }

  async function bringUp(): Promise<void> {
    if (!portsRecorded) await allocatePorts();
    const members = await placeContainers();
    await status.condition('ContainersPlaced', 'True', 'ContainersPlaced', `${members.length} drive containers`);
    await startMembers(members);
    if (!status.clusterGUID) {
      const target = { namespace: ref.namespace, pod: members[0]!.name, container: WEKA_POD_CONTAINER };
      await status.enter('Forming', `waiting for ${members[0]!.name} to run, to form the cluster from it`);
      await kube.waitPodRunning(target);
      status.clusterGUID = await weka.formWekaCluster({ ref, target });
      await status.condition('Formed', 'True', 'Formed', `Weka cluster ${status.clusterGUID}`, 'Normal');
    }
    await tellMembers(members, wakeUpSignal);
    for (let delay = 1; ; delay = Math.min(delay * 2, 15)) {
      const now = await kube.clusterMembers(ref);
      const ready = now.filter((m) => m.phase === 'Ready').length;
      if (ready === now.length && now.length > 0) break;
      await status.enter('Forming', `${ready} of ${now.length} drive containers Ready`);
      await pause(`${delay} seconds`);
    }
    await status.condition('Ready', 'True', 'Ready', 'every drive container is Ready');
    await status.enter('Ready', 'ready; waiting for deletion');
  }

  async function teardown(): Promise<void> {
    await status.enter('Deleting', 'deleting the drive containers');
    for (;;) {
      const members = await kube.clusterMembers(ref);
      await kube.deleteClusterContainers(ref);
      await tellMembers(members, deleteRequestedSignal);
      if (members.length === 0) break;
      await status.enter('Deleting', `waiting for ${members.length} drive containers to tear down`);
      await condition(() => false, '2 seconds');
      // A member's teardown may wait long (its pod unreachable): the new run of a cluster being
      // deleted goes straight to this teardown, which starts again from the members that are left.
      await life.continueAsNewIfLong();
    }
    await status.enter('Deleting', 'releasing the port range');
    await mutex.call(CLUSTER_PORTS_MUTEX_ID, 'release-cluster-ports', ref);
    await status.enter('Deleted', 'torn down');
    await kube.removeFinalizer({ kind: 'WekaCluster', ref, uid: input.uid });
  }

  /** Another cluster has the name now: its members and ports are its own; touch nothing. */
  async function replaced(): Promise<void> {
    const message = `an earlier WekaCluster of this name (uid ${input.uid}) was removed before its teardown ran, so nothing of it was torn down`;
    await kube.recordEvent({ kind: 'WekaCluster', ref, type: 'Warning', reason: 'PredecessorNotTornDown', message });
  }

  await life.run({
    deleting: cluster.deleting,
    bringUp,
    objectState: async () => objectState(await kube.readCluster(ref), input.uid),
    teardown,
    replaced,
  });
}
