// The operator against Temporal as production runs it: the Temporal server itself on PostgreSQL,
// its frontend requiring mutual TLS (test/support/production-temporal.ts), set up as
// docs/production.md says. A client without a certificate is refused; the compiled operator,
// given its certificate the standard way (TEMPORAL_TLS_* variables), runs a drive container's
// whole lifecycle through it, and the workflows are found by the operator's search attributes in
// SQL visibility.
import { Connection } from '@temporalio/client';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatedDevice } from '../../deploy/local/fake-nodes.js';
import { containerWorkflowId, nodeMutexId } from '../../src/protocol.js';
import { eventually } from '../support/async.js';
import { createDriveContainers, deleteContainers, isReady, listContainers, TEST_IMAGE } from '../support/containers.js';
import { kubeConfig, removeNodesAdded, uniqueName, uniqueNamespace } from '../support/harness.js';
import { sharedDrivesNode, startOperatorProcess } from '../support/operator.js';
import type { OperatorProcess } from '../support/operator-process.js';
import { startProductionTemporal, type ProductionTemporal } from '../support/production-temporal.js';
import { createWekaCluster } from '../support/simulator.js';

const DEVICE: SimulatedDevice = { path: '/dev/nvme0n1', capacityGiB: 2000, type: 'TLC' };

let server: ProductionTemporal | undefined;
let operator: OperatorProcess | undefined;
beforeAll(async () => {
  server = await startProductionTemporal();
}, 900_000);
afterAll(async () => {
  await operator?.kill();
  await server?.stop();
  await removeNodesAdded();
});

describe('Temporal on PostgreSQL with mutual TLS', () => {
  it('refuses a client that shows no certificate, and serves one that shows the CA-signed one', async () => {
    const t = server!;
    const withoutCertificate = async () => {
      const connection = await Connection.connect({
        address: t.address,
        connectTimeout: 5_000,
        tls: { serverNameOverride: t.tls.serverName, serverRootCACertificate: await readFile(t.tls.serverCaCert) },
      });
      await connection.close();
    };
    // The frontend ends the TLS handshake: the client never gets a connection.
    await expect(withoutCertificate()).rejects.toThrow('Failed to connect before the deadline');
    const connection = await t.connect();
    try {
      expect((await connection.workflowService.getSystemInfo({})).serverVersion).toBe('1.29.1');
    } finally {
      await connection.close();
    }
  });

  it(
    'runs a drive container from creation to deletion, its workflows found by their search attributes',
    { timeout: 300_000 },
    async () => {
      const t = server!;
      operator = await startOperatorProcess(
        {
          WEKA_TASK_QUEUE: uniqueName('prod-temporal'),
          WEKA_OPERATOR_NAMESPACE: await uniqueNamespace('weka-op'),
          TEMPORAL_ADDRESS: t.address,
          TEMPORAL_NAMESPACE: t.namespace,
          TEMPORAL_TLS_SERVER_NAME: t.tls.serverName,
          TEMPORAL_TLS_SERVER_CA_CERT_PATH: t.tls.serverCaCert,
          TEMPORAL_TLS_CLIENT_CERT_PATH: t.tls.clientCert,
          TEMPORAL_TLS_CLIENT_KEY_PATH: t.tls.clientKey,
        },
        'compiled',
      );
      expect(operator.output()).toContain('"tls":true');

      const node = await sharedDrivesNode([DEVICE], 'prod-temporal');
      const guid = await createWekaCluster(node, uniqueName('prod-temporal'));
      const kc = kubeConfig();
      const ns = await uniqueNamespace('prod-temporal');
      const spec = { image: TEST_IMAGE, nodeName: node, driveCores: 1, numDrives: 1, driveCapacity: 500 };
      await createDriveContainers(kc, ns, [{ name: 'drive-0', spec }], { clusterGUID: guid });
      const [ready] = await eventually(
        'the drive container to be Ready',
        async () => {
          const all = await listContainers(kc, ns);
          return all.length === 1 && all.every(isReady) ? all : undefined;
        },
        150_000,
      );
      const uid = ready!.metadata.uid!;

      const connection = await t.connect();
      try {
        const found = await eventually(
          "the node's workflows in visibility",
          async () => {
            const ids: string[] = [];
            const listed = connection.workflowService.listWorkflowExecutions({
              namespace: t.namespace,
              query: `WekaNode = '${node}'`,
            });
            for (const e of (await listed).executions ?? []) ids.push(e.execution?.workflowId ?? '');
            return ids.includes(containerWorkflowId(uid)) && ids.includes(nodeMutexId(node)) ? ids : undefined;
          },
          60_000,
        );
        expect(found).toEqual(expect.arrayContaining([containerWorkflowId(uid), nodeMutexId(node)]));

        await deleteContainers(kc, [{ namespace: ns, name: 'drive-0' }]);
        await eventually(
          'the drive container to be gone',
          async () => ((await listContainers(kc, ns)).length === 0 ? true : undefined),
          120_000,
        );
        const closed = await eventually(
          "the container's workflow to be closed in visibility",
          async () => {
            const listed = await connection.workflowService.listWorkflowExecutions({
              namespace: t.namespace,
              query: `WorkflowId = '${containerWorkflowId(uid)}' AND ExecutionStatus = 'Completed'`,
            });
            return (listed.executions ?? []).length === 1 ? listed.executions : undefined;
          },
          60_000,
        );
        expect(closed).toHaveLength(1);
      } finally {
        await connection.close();
      }
      // The watcher's own visibility queries (the sweeps at its start) ran without a refusal.
      const output = operator.output();
      expect(output).not.toContain('could not look for workflows whose objects went');
      expect(output).not.toContain('"level":50');
    },
  );
});
