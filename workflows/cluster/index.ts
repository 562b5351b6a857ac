// A WekaCluster's lifecycle (`weka-cluster/<uid>`): allocate its port range (through the global
// cluster-ports mutex), create its drive WekaContainers on the nodes its selector matches, form
// the Weka cluster from one of their pods (GUID into status.clusterGUID), and be Ready when every
// container is. Deletion tears down in reverse: containers first (their workflows undo their
// drives), then the ports, then the device sets, then the finalizer.
//
// The steps share one ClusterRun (./run.ts): the cluster as last read, its status and lifecycle.
import type { ObjectWorkflowInput } from '../../src/protocol.js';
import { allocatePorts, keepConverged } from './bring-up.js';
import { clusterState, openRun } from './run.js';
import { deleteMembers, releaseEveryDeviceSet, releasePorts, removeFinalizer } from './teardown.js';

export async function clusterWorkflow(input: ObjectWorkflowInput): Promise<void> {
  const run = await openRun(input);
  if (!run) return;

  await run.life.run({
    deleting: run.cluster.deleting,
    bringUp: async () => {
      if (!run.portsRecorded) await allocatePorts(run);
      // Creates the members, forms the Weka cluster, is Ready, and waits for changes: for good.
      await keepConverged(run);
    },
    objectState: () => clusterState(run),
    teardown: async () => {
      await deleteMembers(run);
      await releasePorts(run);
      await releaseEveryDeviceSet(run);
      await removeFinalizer(run);
    },
  });
}
