// rotate-ssdproxy on the real control plane, the simulator's Weka cluster and an operator process
// that is SIGKILLed mid-campaign: with a drive container of one Weka cluster on each of two nodes,
// the campaign waits (never failing) while the cluster rebuilds, and refuses a second campaign
// meanwhile; after the restart and once the cluster is healthy, it runs both proxies from the new
// image while the containers stay Ready, and a rotated proxy's lost pod is made again from the new
// image. A campaign to an image that cannot be pulled stops at the
// first node, saying why, and leaves the other node's proxy alone. A rotation retried after it
// changed the proxy still reports the image the proxy ran before.
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { createActivities } from '../../activities/index.js';
import { afterAll, describe, expect, it } from 'vitest';
import type { SimulatedDevice } from '../../deploy/local/fake-nodes.js';
import type { WekaContainer } from '../../src/api/index.js';
import { proxyName } from '../../src/api/names.js';
import { eventually } from '../support/async.js';
import { createDriveContainers, isReady, listContainers, TEST_IMAGE, WEKA_API } from '../support/containers.js';
import { eventsOf } from '../support/events.js';
import {
  kubeConfig,
  removeNodesAdded,
  temporalAddress,
  temporalNamespace,
  uniqueName,
  uniqueNamespace,
} from '../support/harness.js';
import { createOperation, readOperation, waitFinished } from '../support/manual-operation.js';
import { sharedDrivesNode, startOperatorProcess, TEST_ALLOWED_IMAGES, testOperatorDeps } from '../support/operator.js';
import type { OperatorProcess } from '../support/operator-process.js';
import { clearClusterHealth, createWekaCluster, setClusterHealth } from '../support/simulator.js';
import { recordHistory } from '../support/histories.js';
import { healthyClustersWorkflowId, operationWorkflowId } from '../../src/protocol.js';

const DEVICE: SimulatedDevice = { path: '/dev/nvme0n1', capacityGiB: 2000, type: 'TLC' };
const NEW_IMAGE = 'quay.io/weka.io/weka-in-container:4.4.10.200';
const UNPULLABLE = 'unpullable.invalid/weka-in-container:4.4.10.201';

let operator: OperatorProcess | undefined;
afterAll(async () => {
  await operator?.kill();
  await removeNodesAdded();
});

describe('rotate-ssdproxy', () => {
  it(
    'waits for a healthy cluster, survives a SIGKILL, rotates node by node, and stops at a proxy that does not run',
    { timeout: 420_000 },
    async () => {
      const operatorNamespace = await uniqueNamespace('weka-op');
      const env = {
        WEKA_TASK_QUEUE: uniqueName('rotate'),
        WEKA_OPERATOR_NAMESPACE: operatorNamespace,
        WEKA_ALLOWED_IMAGES: [...TEST_ALLOWED_IMAGES, 'unpullable.invalid/'].join(','),
      };
      operator = await startOperatorProcess(env, 'compiled');
      const selector = { 'weka.test/rotate': uniqueName('pool') };
      const nodes = [
        await sharedDrivesNode([DEVICE], 'rotate', selector),
        await sharedDrivesNode([DEVICE], 'rotate', selector),
      ].sort();
      const guid = await createWekaCluster(nodes[0]!, uniqueName('rotate'));
      const kc = kubeConfig();
      const core = kc.makeApiClient(CoreV1Api);
      const ns = await uniqueNamespace('rotate');
      await createDriveContainers(
        kc,
        ns,
        nodes.map((nodeName, i) => ({
          name: `drive-${i}`,
          spec: { image: TEST_IMAGE, nodeName, driveCores: 1, numDrives: 1, driveCapacity: 500 },
        })),
        { clusterGUID: guid },
      );
      const allReady = async () => {
        const all = await listContainers(kc, ns);
        return all.length === 2 && all.every(isReady) ? all : undefined;
      };
      await eventually('the drive containers to be Ready', allReady, 120_000);
      const proxyImage = async (node: string) => {
        const pod = await core.readNamespacedPod({ namespace: operatorNamespace, name: proxyName(node) });
        return pod.spec!.containers[0]!.image!;
      };
      const oldImage = await proxyImage(nodes[0]!);
      expect(await proxyImage(nodes[1]!)).toBe(oldImage);

      await setClusterHealth(nodes[0]!, guid, { status: 'REBUILDING', movingData: true, progressPercent: 40 });
      const ref = { namespace: ns, name: 'rotate' };
      await createOperation(ref, 'rotate-ssdproxy', {
        rotateSsdProxyPayload: { targetImage: NEW_IMAGE, nodeSelector: selector },
      });
      const waiting = await eventually(
        'the first node to wait for its cluster',
        async () => {
          const op = await readOperation(ref);
          return op?.status?.results?.find((r) => r.node === nodes[0] && r.rotation === 'Waiting');
        },
        90_000,
      );
      expect(waiting.waitingFor).toContain('status is REBUILDING');
      expect(waiting.waitingFor).toContain('a rebuild is moving data (40% done)');
      expect(await proxyImage(nodes[0]!)).toBe(oldImage);

      // One campaign at a time: a second one is refused, and changes nothing.
      const second = { namespace: ns, name: 'rotate-again' };
      await createOperation(second, 'rotate-ssdproxy', { rotateSsdProxyPayload: { targetImage: NEW_IMAGE } });
      const refused = await waitFinished(second);
      expect(refused.status?.phase).toBe('Refused');
      expect(refused.status?.conditions?.find((c) => c.type === 'Accepted')).toMatchObject({
        status: 'False',
        reason: 'AnotherCampaignRunning',
      });

      // A crashed operator mid-campaign: the workflow resumes on the next one, still waiting.
      await operator.kill();
      operator = await startOperatorProcess(env, 'compiled');
      expect((await readOperation(ref))?.status?.phase).toBe('Running');
      await clearClusterHealth(nodes[0]!, guid);

      const done = await waitFinished(ref, 180_000);
      expect(done.status?.phase, JSON.stringify(done.status?.conditions)).toBe('Succeeded');
      expect(done.status?.results).toEqual(
        nodes.map((node) => ({ node, rotation: 'Done', proxyImage: NEW_IMAGE, previousProxyImage: oldImage })),
      );
      for (const node of nodes) {
        expect(await proxyImage(node)).toBe(NEW_IMAGE);
        const proxy = (await kc.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
          ...WEKA_API,
          plural: 'wekacontainers',
          namespace: operatorNamespace,
          name: proxyName(node),
        })) as WekaContainer;
        expect(proxy.spec.image).toBe(NEW_IMAGE);
      }
      expect((await allReady())?.length).toBe(2);
      const reasons = (await eventsOf(ref)).map((e) => e.reason);
      expect(reasons.filter((r) => r === 'SsdProxyRotated')).toHaveLength(2);
      expect(reasons).toContain('WaitingForHealthyClusters');
      await recordHistory(operationWorkflowId(done.metadata.uid!), 'rotate-ssdproxy-waited-then-rotated');
      const wait = healthyClustersWorkflowId(done.metadata.uid!, nodes[0]!);
      await recordHistory(wait, 'healthy-clusters-after-rotation');

      // A rotated proxy whose pod is lost is made again from its new image, not the operator's default.
      await core.deleteNamespacedPod({ namespace: operatorNamespace, name: proxyName(nodes[1]!) });
      await eventually(
        'the lost proxy pod to run again',
        async () => {
          const pod = await core.readNamespacedPod({ namespace: operatorNamespace, name: proxyName(nodes[1]!) });
          return pod.status?.phase === 'Running' && !pod.metadata?.deletionTimestamp ? pod : undefined;
        },
        90_000,
      );
      expect(await proxyImage(nodes[1]!)).toBe(NEW_IMAGE);

      // An image that cannot be pulled: the first node's new proxy never runs, and the campaign stops there.
      const broken = { namespace: ns, name: 'rotate-broken' };
      await createOperation(broken, 'rotate-ssdproxy', {
        rotateSsdProxyPayload: { targetImage: UNPULLABLE, nodeSelector: selector },
      });
      const failed = await waitFinished(broken, 150_000);
      expect(failed.status?.phase).toBe('Failed');
      const succeeded = failed.status?.conditions?.find((c) => c.type === 'Succeeded');
      expect(succeeded).toMatchObject({ status: 'False', reason: 'ProxyNotRunning' });
      expect(succeeded?.message).toContain('ErrImagePull');
      expect(failed.status?.results?.map((r) => r.rotation)).toEqual(['Failed', 'Pending']);
      expect(await proxyImage(nodes[1]!)).toBe(NEW_IMAGE);
    },
  );

  it('reports the image a proxy ran before when its restart is retried after it changed the proxy', async () => {
    const connection = await Connection.connect({ address: temporalAddress() });
    try {
      const deps = testOperatorDeps(
        new Client({ connection, namespace: temporalNamespace() }),
        await uniqueNamespace('weka-op'),
      );
      const acts = createActivities(deps);
      const node = await sharedDrivesNode([DEVICE], 'rotate-retry');
      expect(await acts.ensureProxy({ node })).toMatchObject({ ok: true });

      expect(await acts.planProxyRotation({ uid: 'campaign-1' })).toMatchObject({ ok: true });
      const rotated = { ok: true, result: { rotated: true, previousImage: deps.proxyImage } };
      expect(await acts.rotateProxy({ node, image: NEW_IMAGE })).toEqual(rotated);
      // The same request again, as Temporal retries an attempt whose answer was lost.
      expect(await acts.rotateProxy({ node, image: NEW_IMAGE })).toEqual(rotated);

      // A later campaign to the same image: the proxy ran it already.
      expect(await acts.planProxyRotation({ uid: 'campaign-2' })).toMatchObject({ ok: true });
      expect(await acts.rotateProxy({ node, image: NEW_IMAGE })).toEqual({
        ok: true,
        result: { rotated: true, previousImage: NEW_IMAGE },
      });
    } finally {
      await connection.close();
    }
  });
});
