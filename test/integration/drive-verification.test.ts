// The drive verification on the real control plane, the simulator and an operator process: a
// Ready drive container whose virtual drives are taken away behind the operator's back (one
// removed from its Weka cluster, one removed from the cluster and from the node's device, as a
// re-imaged disk would) has them signed and added again within the verification's period, and is
// Ready again.
import { afterAll, describe, expect, it } from 'vitest';
import type { SimulatedDevice } from '../../deploy/local/fake-nodes.js';
import { eventually } from '../support/async.js';
import { createDriveContainers, isReady, listContainers, TEST_IMAGE } from '../support/containers.js';
import { eventsOf } from '../support/events.js';
import { kubeConfig, removeNodesAdded, uniqueName, uniqueNamespace } from '../support/harness.js';
import { sharedDrivesNode, startOperatorProcess } from '../support/operator.js';
import type { OperatorProcess } from '../support/operator-process.js';
import { createWekaCluster, inContainerPod, showDevice, sim } from '../support/simulator.js';
import { recordHistory } from '../support/histories.js';
import { driveVerificationWorkflowId } from '../../src/protocol.js';

const DEVICE: SimulatedDevice = { path: '/dev/nvme0n1', capacityGiB: 2000, type: 'TLC' };

let operator: OperatorProcess | undefined;
afterAll(async () => {
  await operator?.kill();
  await removeNodesAdded();
});

describe('the drive verification', () => {
  it("restores virtual drives removed behind the operator's back within its period", { timeout: 240_000 }, async () => {
    const env = {
      WEKA_TASK_QUEUE: uniqueName('verify'),
      WEKA_OPERATOR_NAMESPACE: await uniqueNamespace('weka-op'),
      WEKA_DRIVE_VERIFICATION_SECONDS: '10',
    };
    operator = await startOperatorProcess(env, 'compiled');
    const node = await sharedDrivesNode([DEVICE], 'verify');
    const guid = await createWekaCluster(node, uniqueName('verify'));
    const kc = kubeConfig();
    const ns = await uniqueNamespace('verify');
    await createDriveContainers(
      kc,
      ns,
      [
        {
          name: 'drive-0',
          spec: { image: TEST_IMAGE, nodeName: node, driveCores: 1, numDrives: 2, driveCapacity: 600 },
        },
      ],
      { clusterGUID: guid },
    );
    const readyOne = async () => {
      const all = await listContainers(kc, ns);
      return all.length === 1 && all.every(isReady) ? all[0] : undefined;
    };
    const ready = await eventually('the drive container to be Ready', readyOne, 120_000);
    const [a, b] = ready.status!.allocations!.virtualDrives!.map((v) => v.virtualUUID);
    const inPod = (...args: string[]) => inContainerPod(ready, ...args);
    const clusterDrives = async () =>
      (JSON.parse(await inPod('weka', 'cluster', 'drive', '--json')) as { uuid: string }[]).map((d) => d.uuid);
    const onDevice = async () => (await showDevice(node, DEVICE.path)).virtualDrives.map((v) => v.virtualUUID);

    // Behind the operator's back: both out of the Weka cluster, and b off the device too.
    for (const uuid of [a!, b!]) {
      await inPod('weka', 'cluster', 'drive', 'deactivate', uuid, '-f');
      await inPod('weka', 'cluster', 'drive', 'remove', uuid, '-f');
    }
    const { physicalUUID } = await showDevice(node, DEVICE.path);
    await sim(node, '--', 'weka-sign-drive', 'virtual', 'remove', physicalUUID!, '--virtual-uuid', b!);
    expect(await onDevice()).not.toContain(b);
    expect(await clusterDrives()).not.toContain(a);

    const restored = await eventually(
      'the DrivesRestored Event',
      async () => (await eventsOf({ namespace: ns, name: 'drive-0' })).find((e) => e.reason === 'DrivesRestored'),
      90_000,
    );
    expect(restored.message).toContain('2 drives were missing and were added again');
    const reasons = (await eventsOf({ namespace: ns, name: 'drive-0' })).map((e) => e.reason);
    expect(reasons).toContain('DrivesMissing');
    expect((await clusterDrives()).sort()).toEqual([a!, b!].sort());
    expect(await onDevice()).toEqual(expect.arrayContaining([a!, b!]));
    await eventually('the container to be Ready again', readyOne, 60_000);
    await recordHistory(driveVerificationWorkflowId(env.WEKA_TASK_QUEUE), 'drive-verification-sweeps');
  });
});
