// The operator's production path to the Weka tools: typed calls, run through the Kubernetes exec
// API into a pod on a fake node, reach that node's simulator. Each change happens exactly once,
// even when a command crashes after its effect and is retried behind its idempotency probe.
import { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { KubeExecTransport } from '../../activities/exec/kube-exec.js';
import type { ExecTarget } from '../../activities/exec/transport.js';
import {
  WekaCommandFailed,
  WekaCommandRefused,
  clusterCreateCall,
  completeCall,
  containerIdentityCall,
  containerDeactivateCall,
  containerRemoveCall,
  containerStatusCall,
  driveAddCall,
  driveDeactivateCall,
  driveListCall,
  driveRemoveCall,
  driveShowCall,
  findDriveByVirtualUUID,
  nextDriveRemovalStep,
  planVirtualAdd,
  planVirtualRemove,
  readDriveCall,
  signProxyCall,
  virtualAddCall,
  virtualRemoveCall,
  type WekaCall,
} from '../../src/weka/index.js';
import { eventually } from '../support/async.js';
import {
  addNode,
  kubeConfig,
  startNodeKubelet,
  stopNodeKubelet,
  uniqueName,
  uniqueNamespace,
} from '../support/harness.js';
import { sim, simulatorLog } from '../support/simulator.js';

/** A pod on `node` whose container `weka` runs, as the operator's drive pods do. */
async function runningPod(node: string, prefix: string): Promise<ExecTarget> {
  const ns = await uniqueNamespace(prefix);
  const core = kubeConfig().makeApiClient(CoreV1Api);
  await core.createNamespacedPod({
    namespace: ns,
    body: {
      metadata: { name: 'drive' },
      spec: {
        nodeName: node,
        containers: [
          {
            name: 'weka',
            image: 'weka/weka-in-container:4.4',
            // What the image sets its Weka container up from, as the operator's drive pods carry it.
            env: [
              { name: 'NAME', value: `${ns}_drive` },
              { name: 'PORT', value: '35000' },
              { name: 'AGENT_PORT', value: '35300' },
            ],
          },
        ],
      },
    },
  });
  await eventually('pod Running', async () =>
    (await core.readNamespacedPod({ namespace: ns, name: 'drive' })).status?.phase === 'Running' ? true : undefined,
  );
  return { namespace: ns, pod: 'drive', container: 'weka' };
}

type Run = <T>(call: WekaCall<T>) => Promise<T>;

/** A new Weka cluster of the pod's Weka container: its GUID, and the container's ID in it. */
async function joinNewCluster(run: Run, pod: ExecTarget) {
  const name = `${pod.namespace}_drive`;
  const core = kubeConfig().makeApiClient(CoreV1Api);
  const ip = (await core.readNamespacedPod({ namespace: pod.namespace, name: pod.pod })).status!.podIP!;
  // Its exec environment, which sets its Weka container up, is written once the pod has its IP.
  await eventually('the pod to run a Weka container, a stem', async () =>
    (await run(containerIdentityCall(name, 35300)).catch(() => undefined))?.state === 'stem' ? true : undefined,
  );
  await run(clusterCreateCall([{ ip, port: 35000 }]));
  const identity = await run(containerIdentityCall(name, 35300));
  if (identity.state !== 'member') throw new Error(`not in the cluster it created: ${JSON.stringify(identity)}`);
  return { cluster: { guid: identity.clusterGUID }, containerId: identity.containerId };
}

describe('Weka CLI calls through Kubernetes exec', () => {
  it('signs a device for proxy, adds and removes a virtual drive, each exactly once', async () => {
    const node = uniqueName('weka-node');
    const device = '/dev/nvme0n1';
    await addNode({ name: node, devices: [{ path: device, capacityGiB: 3840, type: 'TLC' }] });
    const pod = await runningPod(node, 'weka-exec');
    const transport = KubeExecTransport.fromKubeConfig(kubeConfig());
    const run: Run = async (call) => completeCall(call, await transport.run(pod, call.argv, { timeoutMs: 20_000 }));

    expect((await run(readDriveCall(device))).signature).toBe('none');
    await run(signProxyCall(device));
    const signed = await run(readDriveCall(device));
    expect(signed).toMatchObject({ signature: 'proxy', capacityGiB: 3840, type: 'TLC', virtualDrives: [] });

    const { cluster, containerId } = await joinNewCluster(run, pod);
    const virtualUUID = '4f1c2d3e-0000-4000-8000-00000000000a';
    const add = { devicePath: device, virtualUUID, ownerClusterGUID: cluster.guid, sizeGiB: 1000 };

    // The first attempt changes the device header, then "crashes": its answer is lost.
    await sim(node, 'faults', '--fail-after-effect-rate', '1');
    await expect(run(virtualAddCall({ ...add, physicalUUID: signed.physicalUUID! }))).rejects.toBeInstanceOf(
      WekaCommandFailed,
    );
    await sim(node, 'faults', '--clear');
    // The retry probes first, finds the effect, and does not sign again.
    expect(planVirtualAdd(await run(readDriveCall(device)), add)).toBe('already-done');

    expect(findDriveByVirtualUUID(await run(driveListCall(containerId)), virtualUUID)).toBeUndefined();
    await run(driveAddCall({ containerId, virtualUUID, type: 'TLC' }));
    const [drive] = await run(driveShowCall(virtualUUID));
    expect(findDriveByVirtualUUID(await run(driveListCall(containerId)), virtualUUID)).toEqual(drive);
    expect(drive).toMatchObject({ uuid: virtualUUID, devicePath: device, status: 'ACTIVE' });
    // Weka removes only a drive whose data it has phased out: deactivated first.
    await expect(run(driveRemoveCall(virtualUUID))).rejects.toBeInstanceOf(WekaCommandRefused);
    await run(driveDeactivateCall(virtualUUID));
    expect(nextDriveRemovalStep(await run(driveShowCall(virtualUUID)), virtualUUID)).toBe('remove');
    await run(driveRemoveCall(virtualUUID));
    expect(nextDriveRemovalStep(await run(driveShowCall(virtualUUID)), virtualUUID)).toBe('already-done');

    const remove = { devicePath: device, virtualUUID, ownerClusterGUID: cluster.guid };
    expect(planVirtualRemove(await run(readDriveCall(device)), remove)).toBe('run');
    await run(virtualRemoveCall({ ...remove, physicalUUID: signed.physicalUUID! }));
    const after = await run(readDriveCall(device));
    expect(after.virtualDrives).toEqual([]);
    expect(planVirtualRemove(after, remove)).toBe('already-done');

    const changes = (await simulatorLog(node))
      .flatMap((e) => e.changes.map((c) => c.kind))
      .filter((k) => !k.startsWith('faults'));
    expect(changes).toEqual([
      'device-init',
      'sign-proxy',
      'cluster-create',
      'container-add',
      'virtual-add',
      'drive-add',
      'drive-deactivate',
      'drive-remove',
      'virtual-remove',
    ]);
  });

  it(
    'reports a command cut short by a kubelet stop as one that may have run, never as a success',
    { timeout: 120_000 },
    async () => {
      const node = uniqueName('weka-node');
      await addNode({ name: node, devices: [{ path: '/dev/nvme0n1', capacityGiB: 3840, type: 'TLC' }] });
      const pod = await runningPod(node, 'weka-exec-cut');
      const transport = KubeExecTransport.fromKubeConfig(kubeConfig());
      const run: Run = async (call) => completeCall(call, await transport.run(pod, call.argv, { timeoutMs: 20_000 }));
      const { containerId } = await joinNewCluster(run, pod);
      await run(containerDeactivateCall(containerId));

      // The remove sleeps 3 s in the simulator before it runs; the node's kubelet stops once it has
      // reached the node. The apiserver then reports the exec as a success with no output.
      await sim(node, 'faults', '--latency-ms', '3000', '--latency-for', 'weka cluster container remove');
      const remove = transport.run(pod, containerRemoveCall(containerId).argv, { timeoutMs: 20_000 });
      const outcome = remove.then(
        (result) => ({ result }),
        (error: unknown) => ({ error }),
      );
      const waiting = async () => (await sim(node, 'faults', '--waiting')).trim();
      await eventually('the remove to reach the node', async () => expect(await waiting()).toContain('remove'));
      await stopNodeKubelet(node);
      expect(await outcome).toMatchObject({ error: { kind: 'dropped', commandMayHaveRun: true } });

      // A kubelet's stop does not stop what runs in the pod: the remove finishes on the node, and
      // only the caller's probe can tell it did.
      await eventually('the remove to finish on the node', async () => expect(await waiting()).toBe(''));
      await startNodeKubelet(node);
      await sim(node, 'faults', '--clear');
      expect(await run(containerStatusCall(containerId))).toEqual([]);
    },
  );

  it('refuses a physical UUID with shell metacharacters before anything runs', async () => {
    expect(() =>
      virtualAddCall({
        physicalUUID: '4f1c2d3e-0000-4000-8000-00000000000d; rm -rf /',
        virtualUUID: '4f1c2d3e-0000-4000-8000-00000000000b',
        ownerClusterGUID: '4f1c2d3e-0000-4000-8000-00000000000c',
        sizeGiB: 10,
      }),
    ).toThrow(/physical UUID/i);
  });
});
