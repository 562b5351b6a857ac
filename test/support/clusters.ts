// WekaClusters for integration tests: created with the finalizer and their workflow started by
// the test (no watcher runs), on the nodes that carry a pool label.
import { CustomObjectsApi } from '@kubernetes/client-node';
import type { WorkflowHandle } from '@temporalio/client';
import type { WekaCluster } from '../../src/api/index.js';
import { FINALIZER } from '../../src/lifecycle/names.js';
import { clusterWorkflowId, WORKFLOW, type LifecycleWorkflow } from '../../src/protocol.js';
import { readObject, WEKA_CLUSTERS } from './containers.js';
import { kubeConfig } from './harness.js';
import type { TestOperator } from './operator.js';

export { WEKA_CLUSTERS };

/** The label the tests' clusters select their nodes by. */
export const POOL_LABEL = 'weka.weka.io/pool';

/** A cluster of `driveContainers` members of 2200 GiB (1:1 TLC:QLC, one core) on the pool's nodes. */
export async function createTestCluster(
  op: TestOperator,
  o: { namespace: string; name: string; pool: string; driveContainers: number },
): Promise<{ cluster: WekaCluster; workflow: WorkflowHandle<LifecycleWorkflow> }> {
  const cluster = (await kubeConfig()
    .makeApiClient(CustomObjectsApi)
    .createNamespacedCustomObject({
      ...WEKA_CLUSTERS,
      namespace: o.namespace,
      body: {
        apiVersion: 'weka.weka.io/v1alpha1',
        kind: 'WekaCluster',
        metadata: { name: o.name, finalizers: [FINALIZER] },
        spec: {
          image: 'quay.io/weka.io/weka-in-container:test',
          nodeSelector: { [POOL_LABEL]: o.pool },
          dynamicTemplate: {
            driveContainers: o.driveContainers,
            driveCores: 1,
            containerCapacity: 2200,
            driveTypesRatio: { tlc: 1, qlc: 1 },
          },
        },
      },
    })) as WekaCluster;
  const uid = cluster.metadata.uid!;
  const workflow = await op.client.workflow.start<LifecycleWorkflow>(WORKFLOW.cluster, {
    taskQueue: op.deps.taskQueue,
    workflowId: clusterWorkflowId(uid),
    args: [{ namespace: o.namespace, name: o.name, uid }],
  });
  return { cluster, workflow };
}

export async function readCluster(namespace: string, name: string): Promise<WekaCluster | null> {
  return readObject<WekaCluster>(kubeConfig(), WEKA_CLUSTERS, { namespace, name });
}
