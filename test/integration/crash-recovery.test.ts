// The worker is SIGKILLed while it signs a container's virtual drives and started again: every
// virtual drive ends up signed and added exactly once, per the simulator's log. A node decision
// the killed process was running is retried as soon as the restarted process finds it.
import { Client, Connection } from '@temporalio/client';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/async.js';
import { createContainerObject, createDriveContainers, TEST_IMAGE } from '../support/containers.js';
import {
  kubeConfig,
  startNodeKubelet,
  stopNodeKubelet,
  temporalAddress,
  temporalNamespace,
  uniqueName,
  uniqueNamespace,
} from '../support/harness.js';
import { readContainer, sharedDrivesNode, startOperatorProcess, waitForPhase } from '../support/operator.js';
import type { OperatorProcess } from '../support/operator-process.js';
import { changeCounts, createWekaCluster, sim, simulatorLog } from '../support/simulator.js';
import { containerWorkflowId, nodeMutexId, WORKFLOW, type LifecycleWorkflow } from '../../src/protocol.js';

let operator: OperatorProcess | undefined;
afterAll(async () => {
  await operator?.stop();
});

describe('crash recovery', () => {
  it(
    'signs and adds every virtual drive exactly once when the worker is killed mid-signing',
    { timeout: 240_000 },
    async () => {
      const node = await sharedDrivesNode([
        { path: '/dev/nvme0n1', capacityGiB: 3840, type: 'TLC' },
        { path: '/dev/nvme1n1', capacityGiB: 3840, type: 'TLC' },
      ]);
      const guid = await createWekaCluster(node, 'crash');
      // Slow Weka commands so the kill lands in the middle of signing.
      await sim(node, 'faults', '--latency-ms', '400');
      const operatorNamespace = await uniqueNamespace('weka-operator');
      const env = {
        WEKA_TASK_QUEUE: uniqueName('crash'),
        WEKA_OPERATOR_NAMESPACE: operatorNamespace,
        WEKA_RUN_WATCHER: 'false',
      };
      operator = await startOperatorProcess(env);

      const ns = await uniqueNamespace('crash');
      const ref = { namespace: ns, name: 'drive-0' };
      const created = await createContainerObject(
        kubeConfig(),
        ref,
        { image: 'weka:test', nodeName: node, driveCores: 4, numDrives: 4, driveCapacity: 500 },
        { clusterGUID: guid },
      );
      const connection = await Connection.connect({ address: temporalAddress() });
      try {
        const client = new Client({ connection, namespace: temporalNamespace() });
        const uid = created.metadata.uid!;
        await client.workflow.start<LifecycleWorkflow>(WORKFLOW.driveContainer, {
          taskQueue: env.WEKA_TASK_QUEUE,
          workflowId: containerWorkflowId(uid),
          args: [{ namespace: ns, name: ref.name, uid }],
        });

        await eventually(
          'signing to be under way',
          async () => {
            const adds = changeCounts(await simulatorLog(node), 'virtual-add', 'virtualUUID');
            return adds.size >= 1 && adds.size < 4 ? true : undefined;
          },
          120_000,
        );
        await operator.kill();
        const signedBeforeKill = changeCounts(await simulatorLog(node), 'virtual-add', 'virtualUUID').size;
        expect(signedBeforeKill).toBeLessThan(4);

        const restartedAt = Date.now();
        operator = await startOperatorProcess(env);
        const ready = await waitForPhase(ref, 'Ready', 180_000);
        console.log(
          `after the restart, the container was Ready in ${Date.now() - restartedAt} ms (${signedBeforeKill} of 4 drives were signed before the kill)`,
        );

        const log = await simulatorLog(node);
        const virtualAdds = changeCounts(log, 'virtual-add', 'virtualUUID');
        const driveAdds = changeCounts(log, 'drive-add', 'virtualUUID');
        const drives = ready.status?.allocations?.virtualDrives ?? [];
        expect(drives).toHaveLength(4);
        for (const d of drives) {
          expect(virtualAdds.get(d.virtualUUID), `virtual add of ${d.virtualUUID}`).toBe(1);
          expect(driveAdds.get(d.virtualUUID), `drive add of ${d.virtualUUID}`).toBe(1);
        }
        expect(virtualAdds.size).toBe(4);
        expect([...(ready.status?.addedVirtualDrives ?? [])].sort()).toEqual(drives.map((d) => d.virtualUUID).sort());
        expect((await readContainer(ref))?.status?.containerID).toBeDefined();
      } finally {
        await connection.close();
        await sim(node, 'faults', '--clear');
      }
    },
  );
  it(
    'retries a node decision the killed operator was running as soon as it is back, not at its heartbeat timeout',
    { timeout: 180_000 },
    async () => {
      await operator?.stop();
      const node = await sharedDrivesNode([{ path: '/dev/nvme0n1', capacityGiB: 3840, type: 'TLC' }], 'orphan');
      const guid = await createWekaCluster(node, uniqueName('orphan'));
      // No kubelet: the node's ssdproxy pod stays Pending, and its mutex's ensure-proxy waits for it.
      await stopNodeKubelet(node);
      const operatorNamespace = await uniqueNamespace('weka-operator');
      const env = { WEKA_TASK_QUEUE: uniqueName('orphan'), WEKA_OPERATOR_NAMESPACE: operatorNamespace };
      // Compiled, as the image runs it: it restarts fastest.
      operator = await startOperatorProcess(env, 'compiled');
      const ns = await uniqueNamespace('orphan');
      await createDriveContainers(
        kubeConfig(),
        ns,
        [
          {
            name: 'waits',
            spec: { image: TEST_IMAGE, nodeName: node, driveCores: 1, numDrives: 1, driveCapacity: 500 },
          },
        ],
        { clusterGUID: guid },
      );
      const connection = await Connection.connect({ address: temporalAddress() });
      try {
        const mutex = new Client({ connection, namespace: temporalNamespace() }).workflow.getHandle(nodeMutexId(node));
        const pending = async () => (await mutex.describe()).raw.pendingActivities?.[0];
        await eventually(
          'ensure-proxy to be running',
          async () => ((await pending())?.activityType?.name === 'ensureProxy' ? true : undefined),
          60_000,
        );
        await operator.kill();
        const killedAt = Date.now();
        operator = await startOperatorProcess(env, 'compiled');
        const retried = await eventually(
          'the ensure-proxy attempt of the killed process to end',
          async () => {
            const a = await pending();
            return a && (a.attempt ?? 1) > 1 ? a : undefined;
          },
          60_000,
        );
        // Only a process back before the 5 s heartbeat timeout finds the attempt still started; on a
        // machine too loaded for that, Temporal has retried it already, and nothing is judged.
        const running = operator
          .output()
          .split('\n')
          .find((l) => l.includes('"worker running"'));
        const backAfterMs = JSON.parse(running ?? '{"time":0}').time - killedAt;
        console.log(`the restarted operator's worker ran ${backAfterMs} ms after the kill`);
        if (backAfterMs < 3_500) {
          expect(retried.lastFailure?.message).toMatch(/the operator process \d+@\S+ that ran it is gone/);
          // Logged once the fail call returns, which can be after the retry is already visible.
          await eventually(
            'the restarted operator to log the activity it failed',
            async () =>
              operator?.output().includes('failed an activity a dead operator process left running') ? true : undefined,
            10_000,
          );
        }
      } finally {
        await connection.close();
        await startNodeKubelet(node);
      }
    },
  );
});
