// migrate-to-drive-sharing on the real control plane, the simulator's Weka cluster and an operator
// process that is SIGKILLed mid-campaign: a WekaCluster of two members on whole drives moves member
// by member to virtual drives of the same size, carved from the very drives it held (signed for the
// ssdproxy once the member left), and ends Ready with every drive in Weka. A cluster that shares
// drives already, and one that does not exist, are refused.
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { createActivities } from '../../activities/index.js';
import { afterAll, describe, expect, it } from 'vitest';
import type { SimulatedDevice } from '../../deploy/local/fake-nodes.js';
import { operationWorkflowId } from '../../src/protocol.js';
import { eventually } from '../support/async.js';
import { POOL_LABEL, readCluster, SMALL_MEMBER } from '../support/clusters.js';
import { createWekaClusterObject, listContainers, WEKA_CLUSTERS } from '../support/containers.js';
import { eventsOf } from '../support/events.js';
import {
  addNode,
  kubeConfig,
  removeNodesAdded,
  temporalAddress,
  temporalNamespace,
  uniqueName,
  uniqueNamespace,
} from '../support/harness.js';
import { recordHistory } from '../support/histories.js';
import { createOperation, readOperation, waitFinished } from '../support/manual-operation.js';
import { startOperatorProcess, testOperatorDeps } from '../support/operator.js';
import type { OperatorProcess } from '../support/operator-process.js';
import { inContainerPod, showDevice } from '../support/simulator.js';

const GIB = 1000;
const DEVICES: SimulatedDevice[] = ['nvme0n1', 'nvme1n1'].map((d) => ({
  path: `/dev/${d}`,
  capacityGiB: GIB,
  type: 'TLC',
}));

let operator: OperatorProcess | undefined;
afterAll(async () => {
  await operator?.kill();
  await removeNodesAdded();
});

describe('migrate-to-drive-sharing', () => {
  it('takes a WekaCluster created again under the name of the one it moves for a cluster gone', async () => {
    const connection = await Connection.connect({ address: temporalAddress() });
    try {
      const deps = testOperatorDeps(new Client({ connection, namespace: temporalNamespace() }), 'weka-op-unused');
      const acts = createActivities(deps);
      const ref = { namespace: await uniqueNamespace('migrate-renamed'), name: 'stores' };
      const selector = { [POOL_LABEL]: uniqueName('none') };
      const clusterUid = await createWekaClusterObject(kubeConfig(), ref, selector, SMALL_MEMBER);
      const asked = { cluster: ref, clusterUid, slot: 0, uid: 'member-uid' };
      // The apiserver answers 429 while its cache of a just-made resource fills: Temporal retries, here eventually.
      expect(await eventually('a first answer', () => acts.slotState(asked))).toEqual({ leaving: false });

      await kubeConfig()
        .makeApiClient(CustomObjectsApi)
        .deleteNamespacedCustomObject({ ...WEKA_CLUSTERS, ...ref });
      await eventually('the WekaCluster to be gone', async () =>
        (await readCluster(ref.namespace, ref.name)) ? undefined : true,
      );
      expect(await acts.slotState(asked)).toEqual({ leaving: false, clusterGone: true });
      await createWekaClusterObject(kubeConfig(), ref, selector, SMALL_MEMBER);
      expect(await acts.slotState(asked)).toEqual({ leaving: false, clusterGone: true });
    } finally {
      await connection.close();
    }
  });

  it(
    'moves a whole-drive cluster member by member onto virtual drives of the same size, through a SIGKILL',
    { timeout: 480_000 },
    async () => {
      const env = { WEKA_TASK_QUEUE: uniqueName('migrate'), WEKA_OPERATOR_NAMESPACE: await uniqueNamespace('weka-op') };
      operator = await startOperatorProcess(env, 'compiled');
      const pool = uniqueName('migrate');
      const nodes = [uniqueName('migrate'), uniqueName('migrate')].sort();
      for (const name of nodes)
        await addNode({
          name,
          labels: { [POOL_LABEL]: pool },
          devices: DEVICES.map((d, i) => ({ ...d, serial: `${name}-W${i}` })),
        });
      const ns = await uniqueNamespace('migrate');
      const sign = { namespace: ns, name: 'sign-whole' };
      await createOperation(sign, 'sign-drives', {
        signDrivesPayload: { type: 'all-not-root', nodeSelector: { [POOL_LABEL]: pool }, shared: false },
      });
      expect((await waitFinished(sign, 120_000)).status?.phase).toBe('Succeeded');

      const kc = kubeConfig();
      const ref = { namespace: ns, name: 'stores' };
      await createWekaClusterObject(
        kc,
        ref,
        { [POOL_LABEL]: pool },
        { driveContainers: 2, driveCores: 1, numDrives: 2 },
      );
      await eventually(
        'the whole-drive cluster Ready',
        async () => (await readCluster(ns, ref.name))?.status?.phase === 'Ready' || undefined,
        240_000,
      );
      const before = await listContainers(kc, ns);
      expect(before.map((m) => m.status?.allocations?.drives?.length)).toEqual([2, 2]);

      // Bad input first: a cluster that does not exist, and one that shares drives already.
      const missing = { namespace: ns, name: 'migrate-missing' };
      await createOperation(missing, 'migrate-to-drive-sharing', { migrateToDriveSharingPayload: { cluster: 'nope' } });
      const shares = { namespace: ns, name: 'shares' };
      await createWekaClusterObject(
        kc,
        shares,
        { [POOL_LABEL]: uniqueName('none') },
        {
          driveContainers: 1,
          ...SMALL_MEMBER,
        },
      );
      const sharing = { namespace: ns, name: 'migrate-sharing' };
      await createOperation(sharing, 'migrate-to-drive-sharing', {
        migrateToDriveSharingPayload: { cluster: shares.name },
      });
      for (const [r, reason] of [
        [missing, 'ClusterNotFound'],
        [sharing, 'NotWholeDrive'],
      ] as const) {
        const done = await waitFinished(r, 60_000);
        expect(done.status?.phase).toBe('Refused');
        expect(done.status?.conditions?.find((c) => c.type === 'Accepted')).toMatchObject({ status: 'False', reason });
      }

      const op = { namespace: ns, name: 'migrate' };
      await createOperation(op, 'migrate-to-drive-sharing', { migrateToDriveSharingPayload: { cluster: ref.name } });
      await eventually(
        'the first member to be leaving',
        async () =>
          (await readOperation(op))?.status?.results?.some(
            (r) => r.migration === 'Draining' || r.migration === 'Signing',
          )
            ? true
            : undefined,
        120_000,
      );
      // A crashed operator mid-campaign: the campaign, the members and the cluster resume on the next one.
      await operator.kill();
      operator = await startOperatorProcess(env, 'compiled');

      const done = await waitFinished(op, 360_000);
      expect(done.status?.phase, JSON.stringify(done.status?.conditions)).toBe('Succeeded');
      expect(done.status?.results?.map((r) => r.migration)).toEqual(['Done', 'Done']);
      const cluster = await readCluster(ns, ref.name);
      expect(cluster?.status?.phase).toBe('Ready');
      expect(cluster?.status?.driveSharing).toMatchObject({ driveCapacity: GIB, operation: `${ns}/${op.name}` });

      const after = await eventually(
        'two members on virtual drives, Ready',
        async () => {
          const all = (await listContainers(kc, ns)).filter((m) => m.spec.cluster === ref.name);
          return all.length === 2 && all.every((m) => m.status?.phase === 'Ready') ? all : undefined;
        },
        60_000,
      );
      const core = kc.makeApiClient(CoreV1Api);
      for (const m of after) {
        expect(m.spec).toMatchObject({ numDrives: 2, driveCapacity: GIB });
        const held = m.status!.allocations!;
        expect(held.drives ?? []).toEqual([]);
        expect(held.virtualDrives!.map((v) => v.capacityGiB)).toEqual([GIB, GIB]);
        // Carved from the drives the node's member held whole, now signed for the ssdproxy.
        expect(held.virtualDrives!.map((v) => v.serial).sort()).toEqual(
          DEVICES.map((_, i) => `${m.spec.nodeName}-W${i}`),
        );
        for (const d of DEVICES) {
          const shown = await showDevice(m.spec.nodeName!, d.path);
          expect(shown.signature).toBe('proxy');
          expect(shown.virtualDrives.reduce((sum, v) => sum + v.sizeGiB, 0)).toBeLessThanOrEqual(GIB);
        }
        const listed = JSON.parse(await inContainerPod(m, 'weka', 'cluster', 'drive', '--json')) as {
          uuid: string;
          status: string;
        }[];
        const mine = held.virtualDrives!.map((v) => v.virtualUUID);
        expect(listed.filter((d) => mine.includes(d.uuid)).map((d) => d.status)).toEqual(['ACTIVE', 'ACTIVE']);
        const node = await core.readNode({ name: m.spec.nodeName! });
        expect(node.metadata?.annotations?.['weka.io/weka-drives'] ?? '[]').toBe('[]');
      }
      // The whole drives left Weka: only the new members' virtual drives are listed.
      const all = JSON.parse(await inContainerPod(after[0]!, 'weka', 'cluster', 'drive', '--json')) as unknown[];
      expect(all).toHaveLength(4);
      const reasons = (await eventsOf(op)).map((e) => e.reason);
      expect(reasons.filter((r) => r === 'MemberMigrated')).toHaveLength(2);
      await recordHistory(operationWorkflowId(done.metadata.uid!), 'migrate-to-drive-sharing');

      // A second campaign finds nothing left to move.
      const again = { namespace: ns, name: 'migrate-again' };
      await createOperation(again, 'migrate-to-drive-sharing', { migrateToDriveSharingPayload: { cluster: ref.name } });
      const refused = await waitFinished(again, 60_000);
      expect(refused.status?.conditions?.find((c) => c.type === 'Accepted')).toMatchObject({
        status: 'False',
        reason: 'AlreadyMigrated',
      });
    },
  );
});
