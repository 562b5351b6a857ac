// A Ready drive container whose pod is lost and whose deletion starts while no worker runs gets
// both signals in the first workflow task of the next worker: the deletion wins, and its pod is
// not made again only to be torn down. That is also what a replay must do with a history whose
// timed-out tasks saw the two signals apart, so the workflow decides the same either way.
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { containerWorkflowId, deleteRequestedSignal, podLostSignal } from '../../src/protocol.js';
import { WEKA_CONTAINERS } from '../support/containers.js';
import { eventsOf } from '../support/events.js';
import { kubeConfig, temporalAddress, temporalNamespace } from '../support/harness.js';
import { startTestOperator, waitGone, type TestOperator, readyStandaloneContainer } from '../support/operator.js';
import { readPod } from '../support/pods.js';

const DEVICES = [{ path: '/dev/nvme0n1', capacityGiB: 3840, type: 'TLC' as const }];
const operators: TestOperator[] = [];
let client: Client;
beforeAll(async () => {
  client = new Client({
    connection: await Connection.connect({ address: temporalAddress() }),
    namespace: temporalNamespace(),
  });
});
afterAll(async () => {
  for (const op of operators) await op.stop().catch(() => undefined);
  await client?.connection.close();
});

describe('a deletion that comes with a lost pod', () => {
  it(
    'tears the container down without making its pod again, both signals in one workflow task',
    { timeout: 240_000 },
    async () => {
      const first = await startTestOperator();
      operators.push(first);
      const { ref, uid } = await readyStandaloneContainer(first, 'deleted-lost', DEVICES);

      // No worker: the pod goes, the deletion starts, and both signals wait in the history.
      await first.stop();
      await kubeConfig()
        .makeApiClient(CoreV1Api)
        .deleteNamespacedPod({ ...ref, gracePeriodSeconds: 0 });
      await kubeConfig()
        .makeApiClient(CustomObjectsApi)
        .deleteNamespacedCustomObject({ ...WEKA_CONTAINERS, ...ref });
      const handle = client.workflow.getHandle(containerWorkflowId(uid));
      await handle.signal(podLostSignal);
      await handle.signal(deleteRequestedSignal);
      const { taskQueue, operatorNamespace } = first.deps;
      operators.push(await startTestOperator({ taskQueue, operatorNamespace }));

      await waitGone(ref, 120_000);
      await handle.result();
      const reasons = (await eventsOf(ref)).map((e) => e.reason);
      expect(reasons).toContain('Allocated'); // its Events are there to read
      expect(reasons).not.toContain('PodLost');
      expect(reasons).not.toContain('PodRecovered');
      expect(await readPod(ref.namespace, ref.name)).toBeNull();
    },
  );
});
