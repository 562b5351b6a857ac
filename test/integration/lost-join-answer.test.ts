// A join whose answer never came back is still undone by the teardown. The chaos engine found it:
// the operator joined a drive container to its Weka cluster, Temporal was cut from the operator
// before the activity's answer was recorded, and the object was deleted before a retry learnt the
// container id; the teardown trusted what the workflow knew (no container id), skipped the Weka
// side, and left the container in the cluster. Here the lost answer is made deterministic: the
// pod's Weka container is in the cluster (as the unrecorded attempt left it) while every Weka
// command on the node fails, so no retry can learn its id before the deletion.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wekaContainerName } from '../../src/api/names.js';
import { specChangedSignal } from '../../src/protocol.js';
import { eventually } from '../support/async.js';
import { patchContainerSpec } from '../support/containers.js';
import { kubeConfig, uniqueName, uniqueNamespace } from '../support/harness.js';
import {
  createDriveContainer,
  deleteDriveContainer,
  readContainer,
  sharedDrivesNode,
  startTestOperator,
  waitForPhase,
  waitGone,
  type TestOperator,
} from '../support/operator.js';
import { clusterContainers, createWekaCluster, joinIpsOf, sim } from '../support/simulator.js';

let op: TestOperator;
beforeAll(async () => {
  op = await startTestOperator();
});
afterAll(async () => {
  await op?.stop();
});

const DEVICES = [{ path: '/dev/nvme0n1', capacityGiB: 7680, type: 'TLC' as const }];
const SPEC = { driveCores: 1, numDrives: 1, driveCapacity: 1000 };

describe('a join whose answer was lost', () => {
  it('is undone by the teardown: the Weka container of the name leaves the cluster', { timeout: 240_000 }, async () => {
    const node = await sharedDrivesNode(DEVICES, 'lost-join');
    const guid = await createWekaCluster(node, uniqueName('lost-join'));
    const ref = { namespace: await uniqueNamespace('lost-join'), name: 'drive-0' };
    const name = wekaContainerName(ref.namespace, ref.name);
    const members = async () => (await clusterContainers(guid)).filter((m) => m.name === name);

    // No spec.joinIps yet: the container is allocated and waits for them.
    const { uid, handle } = await createDriveContainer(op, ref, { ...SPEC, nodeName: node });
    const waiting = await waitForPhase(ref, 'WaitingForCluster', 120_000);
    const { wekaPort, agentPort } = waiting.status!.allocations!;
    // The attempt whose answer was lost: its pod's Weka container joined the cluster, as the
    // operator's join (join-ips, apply, restart) makes it.
    const joinIps = await joinIpsOf(guid);
    const pod = ['--in-pod', '--weka-name', name, '--weka-port', String(wekaPort), '--agent-port', String(agentPort)];
    await sim(node, ...pod, '--', 'weka', 'local', 'resources', 'join-ips', ...joinIps);
    await sim(node, ...pod, '--', 'weka', 'local', 'resources', 'apply', '-f');
    await sim(node, ...pod, '--', 'weka', 'local', 'restart', '--force');
    expect(await members()).toHaveLength(1);
    // Every Weka command on the node fails from now on, so no attempt learns the container's id.
    await sim(node, 'faults', '--fail-rate', '1');
    await patchContainerSpec(kubeConfig(), ref, { joinIps });
    await handle.signal(specChangedSignal);
    await eventually(
      'the join to be tried and fail',
      async () => {
        const c = await readContainer(ref);
        return c?.status?.phase === 'Signing' && c.status.containerID === undefined ? true : undefined;
      },
      60_000,
    );

    await deleteDriveContainer(op, ref, uid);
    await eventually(
      'the teardown to start',
      async () => ((await readContainer(ref))?.status?.phase === 'Deleting' ? true : undefined),
      60_000,
    );
    await sim(node, 'faults', '--clear');
    await waitGone(ref, 180_000);
    expect(await members()).toEqual([]);
  });
});
