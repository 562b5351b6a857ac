// clean-stale-virtual-drives on the real control plane, the simulator's devices and an operator
// process that is SIGKILLed between the passes: of the virtual drives planted on a node beside a
// Ready drive container, those nothing claims (one made for a Weka cluster that does not exist,
// one for the container's cluster that the cluster does not list) are reported, then removed once
// the second pass, after the restart, finds the same set; the one the Weka cluster lists and the
// container's own are kept; the node's books balance and the freed GiB are offered again. On a
// node where no drive container runs, the ssdproxy the search had to run is gone again after it.
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, describe, expect, it } from 'vitest';
import type { SimulatedDevice } from '../../deploy/local/fake-nodes.js';
import { nodeBooks } from '../../src/node/ledger-books.js';
import { eventually } from '../support/async.js';
import { createDriveContainers, isReady, listContainers, TEST_IMAGE } from '../support/containers.js';
import { kubeConfig, removeNodesAdded, uniqueName, uniqueNamespace } from '../support/harness.js';
import { createOperation, readOperation, waitFinished } from '../support/manual-operation.js';
import { podExists, readContainer, sharedDrivesNode, startOperatorProcess } from '../support/operator.js';
import type { OperatorProcess } from '../support/operator-process.js';
import { createWekaCluster, inContainerPod, showDevice, sim } from '../support/simulator.js';
import { eventsOf } from '../support/events.js';
import { recordHistory } from '../support/histories.js';
import { operationWorkflowId } from '../../src/protocol.js';
import { proxyName } from '../../src/api/names.js';

const DEVICE: SimulatedDevice = { path: '/dev/nvme0n1', capacityGiB: 2000, type: 'TLC' };
const DEAD_CLUSTER = '5d1c2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
const ORPHAN = '0b5e6f3c-2f5d-4a8e-9c1b-7d2e4f6a8b90';
const UNLISTED = '1c6f7a4d-3a6e-4b9f-8d2c-8e3f5a7b9c01';
const LISTED = '2d7a8b5e-4b7f-4cab-9e3d-9f4a6b8cad12';

let operator: OperatorProcess | undefined;
afterAll(async () => {
  await operator?.kill();
  await removeNodesAdded();
});

describe('clean-stale-virtual-drives', () => {
  it(
    'reports what nothing claims, survives a SIGKILL between its passes, and removes only that',
    { timeout: 300_000 },
    async () => {
      const env = { WEKA_TASK_QUEUE: uniqueName('stale'), WEKA_OPERATOR_NAMESPACE: await uniqueNamespace('weka-op') };
      operator = await startOperatorProcess(env, 'compiled');
      const selector = { 'weka.test/stale': uniqueName('pool') };
      const node = await sharedDrivesNode([DEVICE], 'stale', selector);
      const guid = await createWekaCluster(node, uniqueName('stale'));
      const kc = kubeConfig();
      const ns = await uniqueNamespace('stale');
      await createDriveContainers(
        kc,
        ns,
        [
          {
            name: 'drive-0',
            spec: { image: TEST_IMAGE, nodeName: node, driveCores: 1, numDrives: 1, driveCapacity: 500 },
          },
        ],
        { clusterGUID: guid },
      );
      const [ready] = await eventually(
        'the drive container to be Ready',
        async () => {
          const all = await listContainers(kc, ns);
          return all.length === 1 && all.every(isReady) ? all : undefined;
        },
        120_000,
      );
      const own = ready!.status!.allocations!.virtualDrives!.map((v) => v.virtualUUID);

      // Planted behind the operator's back: for a cluster that does not exist, for the container's
      // cluster without being added to it, and one that the container's cluster lists as its drive.
      const { physicalUUID } = await showDevice(node, DEVICE.path);
      const plant = (uuid: string, gib: number, owner: string) =>
        sim(
          node,
          '--',
          'weka-sign-drive',
          'virtual',
          'add',
          physicalUUID!,
          '--size',
          String(gib),
          '--owner-cluster-guid',
          owner,
          '--virtual-uuid',
          uuid,
        );
      await plant(ORPHAN, 300, DEAD_CLUSTER);
      await plant(UNLISTED, 200, guid);
      await plant(LISTED, 100, guid);
      await inContainerPod(
        ready!,
        ...['weka', 'cluster', 'drive', 'add', String(ready!.status!.containerID), LISTED, '--pool', 'iu4k'],
      );

      const ref = { namespace: ns, name: 'clean' };
      await createOperation(ref, 'clean-stale-virtual-drives', {
        cleanStaleVirtualDrivesPayload: { nodeSelector: selector, deleteStaleVids: true, secondPassAfterSeconds: 20 },
      });
      const firstPass = await eventually(
        'the first pass to publish the stale set',
        async () => {
          const op = await readOperation(ref);
          return op?.status?.fingerprint ? op : undefined;
        },
        90_000,
      );
      const stale = firstPass.status!.results!.find((r) => r.node === node)!.staleVirtualDrives!;
      expect(stale.map((d) => d.virtualUUID).sort()).toEqual([ORPHAN, UNLISTED].sort());
      expect(firstPass.status!.phase).toBe('Running');

      // A crashed operator between the passes: the workflow resumes on the next one.
      await operator.kill();
      operator = await startOperatorProcess(env, 'compiled');

      const done = await waitFinished(ref, 120_000);
      expect(done.status?.phase, JSON.stringify(done.status?.conditions)).toBe('Succeeded');
      expect(done.status!.fingerprint).toBe(firstPass.status!.fingerprint);
      expect(done.status!.results!.find((r) => r.node === node)!.removed!.sort()).toEqual([ORPHAN, UNLISTED].sort());
      const onDevice = (await showDevice(node, DEVICE.path)).virtualDrives.map((v) => v.virtualUUID);
      expect(onDevice.sort()).toEqual([...own, LISTED].sort());
      const reasons = (await eventsOf(ref)).map((e) => e.reason);
      expect(reasons).toEqual(
        expect.arrayContaining(['StaleVirtualDrivesFound', 'VirtualDrivesKept', 'StaleVirtualDrivesRemoved']),
      );

      // The node's books: the container's 500 GiB and the listed drive's 100 found, the rest free again.
      const annotations = (await kc.makeApiClient(CoreV1Api).readNode({ name: node })).metadata!.annotations!;
      expect(nodeBooks(annotations)).toMatchObject({
        ok: true,
        books: { TLC: { signedGiB: 2000, allocatedGiB: 500, foundGiB: 100, freeGiB: 1400 } },
      });
      expect((await listContainers(kc, ns)).every(isReady)).toBe(true);
      await recordHistory(operationWorkflowId(done.metadata.uid!), 'clean-stale-removed-after-two-passes');
    },
  );

  it('leaves no ssdproxy behind on a node where no drive container runs', { timeout: 240_000 }, async () => {
    const env = { WEKA_TASK_QUEUE: uniqueName('stale'), WEKA_OPERATOR_NAMESPACE: await uniqueNamespace('weka-op') };
    await operator?.kill();
    operator = await startOperatorProcess(env, 'compiled');
    const selector = { 'weka.test/stale': uniqueName('idle') };
    const node = await sharedDrivesNode([DEVICE], 'stale-idle', selector);
    const { physicalUUID } = await showDevice(node, DEVICE.path);
    await sim(
      node,
      '--',
      ...['weka-sign-drive', 'virtual', 'add', physicalUUID!, '--size', '300'],
      ...['--owner-cluster-guid', DEAD_CLUSTER, '--virtual-uuid', ORPHAN],
    );

    const ref = { namespace: await uniqueNamespace('stale-idle'), name: 'clean' };
    await createOperation(ref, 'clean-stale-virtual-drives', {
      cleanStaleVirtualDrivesPayload: { nodeSelector: selector, deleteStaleVids: true, secondPassAfterSeconds: 5 },
    });
    const done = await waitFinished(ref, 120_000);
    expect(done.status?.phase, JSON.stringify(done.status?.conditions)).toBe('Succeeded');
    expect(done.status!.results!.find((r) => r.node === node)!.removed).toEqual([ORPHAN]);
    expect((await showDevice(node, DEVICE.path)).virtualDrives).toEqual([]);

    const proxy = { namespace: env.WEKA_OPERATOR_NAMESPACE, name: proxyName(node) };
    expect(await readContainer(proxy), 'the ssdproxy container').toBeNull();
    expect(await podExists(proxy.namespace, proxy.name), 'the ssdproxy pod').toBe(false);
  });
});
