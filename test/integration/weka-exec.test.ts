// The operator's production path to the Weka tools: typed calls, run through the Kubernetes exec
// API into a pod on a fake node, reach that node's simulator. Each change happens exactly once,
// even when a command crashes after its effect and is retried behind its idempotency probe.
import { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { KubeExecTransport } from '../../activities/exec/kube-exec.js';
import type { ExecTarget } from '../../activities/exec/transport.js';
import {
  WekaCommandFailed,
  clusterCreateCall,
  completeCall,
  containerAddCall,
  driveAddCall,
  driveListCall,
  driveRemoveCall,
  findDriveByVirtualUUID,
  planDriveAdd,
  planSignProxy,
  planVirtualAdd,
  planVirtualRemove,
  showDriveCall,
  signProxyCall,
  virtualAddCall,
  virtualRemoveCall,
  type WekaCall,
} from '../../src/weka/index.js';
import { eventually } from '../support/async.js';
import { addNode, kubeConfig, uniqueName, uniqueNamespace } from '../support/harness.js';
import { sim, simulatorLog } from '../support/simulator.js';

describe('Weka CLI calls through Kubernetes exec', () => {
  it('signs a device for proxy, adds and removes a virtual drive, each exactly once', async () => {
    const node = uniqueName('weka-node');
    const device = '/dev/nvme0n1';
    await addNode({ name: node, devices: [{ path: device, capacityGiB: 3840, type: 'TLC' }] });
    const ns = await uniqueNamespace('weka-exec');
    const core = kubeConfig().makeApiClient(CoreV1Api);
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'drive' },
        spec: { nodeName: node, containers: [{ name: 'weka', image: 'weka/weka-in-container:4.4' }] },
      },
    });
    await eventually('pod Running', async () =>
      (await core.readNamespacedPod({ namespace: ns, name: 'drive' })).status?.phase === 'Running' ? true : undefined,
    );

    const transport = KubeExecTransport.fromKubeConfig(kubeConfig());
    const pod: ExecTarget = { namespace: ns, pod: 'drive', container: 'weka' };
    const run = async <T>(call: WekaCall<T>): Promise<T> =>
      completeCall(call, await transport.run(pod, call.argv, { timeoutMs: 20_000 }));

    expect(planSignProxy(await run(showDriveCall(device)))).toBe('run');
    await run(signProxyCall(device));
    const signed = await run(showDriveCall(device));
    expect(signed).toMatchObject({ signature: 'proxy', capacityGiB: 3840, type: 'TLC', virtualDrives: [] });
    expect(planSignProxy(signed)).toBe('already-done');

    const cluster = await run(clusterCreateCall(uniqueName('tenant')));
    const { containerId } = await run(
      containerAddCall({
        clusterGUID: cluster.guid,
        name: `${ns}_drive`,
        hostname: node,
        basePort: 35000,
        agentPort: 35300,
      }),
    );
    const virtualUUID = '4f1c2d3e-0000-4000-8000-00000000000a';
    const add = { devicePath: device, virtualUUID, ownerClusterGUID: cluster.guid, sizeGiB: 1000 };

    // The first attempt changes the device header, then "crashes": its answer is lost.
    await sim(node, 'faults', '--fail-after-effect-rate', '1');
    await expect(run(virtualAddCall(add))).rejects.toBeInstanceOf(WekaCommandFailed);
    await sim(node, 'faults', '--clear');
    // The retry probes first, finds the effect, and does not sign again.
    expect(planVirtualAdd(await run(showDriveCall(device)), add)).toBe('already-done');

    expect(planDriveAdd(await run(driveListCall(containerId)), { containerId, virtualUUID })).toBe('run');
    const drive = await run(driveAddCall({ containerId, virtualUUID }));
    expect(findDriveByVirtualUUID(await run(driveListCall(containerId)), virtualUUID)).toEqual(drive);
    await run(driveRemoveCall(drive.driveUUID));

    const remove = { devicePath: device, virtualUUID, ownerClusterGUID: cluster.guid };
    expect(planVirtualRemove(await run(showDriveCall(device)), remove)).toBe('run');
    await run(virtualRemoveCall(remove));
    const after = await run(showDriveCall(device));
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
      'drive-remove',
      'virtual-remove',
    ]);
  });

  it('refuses a device path with shell metacharacters before anything runs', async () => {
    expect(() =>
      virtualAddCall({
        devicePath: '/dev/nvme0n1; rm -rf /',
        virtualUUID: '4f1c2d3e-0000-4000-8000-00000000000b',
        ownerClusterGUID: '4f1c2d3e-0000-4000-8000-00000000000c',
        sizeGiB: 10,
      }),
    ).toThrow(/device path/i);
  });
});
