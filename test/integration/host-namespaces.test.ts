// Which of the host a pod's commands see: the operator reads a node's disks and mounts with
// `nsenter --target 1 -- lsblk` before it signs one (src/weka/block-devices.ts), and only in a pod
// that shares the host's PID namespace is PID 1 the host's. The ssdproxy, where that read runs, is
// such a pod; a drive container's is not, and sees the disks but none of the host's mounts.
import { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { KubeExecTransport } from '../../activities/exec/kube-exec.js';
import type { SimulatedDevice } from '../../deploy/local/fake-nodes.js';
import { wekaPod } from '../../src/manifests/pods.js';
import { completeCall, listBlockDevicesCall, type BlockDevice } from '../../src/weka/index.js';
import { eventually } from '../support/async.js';
import { addNode, kubeConfig, uniqueName, uniqueNamespace } from '../support/harness.js';

const ROOT: SimulatedDevice = {
  path: '/dev/sda',
  capacityGiB: 480,
  type: 'TLC',
  partitions: [
    { name: '/dev/sda1', fstype: 'vfat', mountpoint: '/boot/efi' },
    { name: '/dev/sda2', fstype: 'ext4', mountpoint: '/' },
  ],
};

/** Every device and partition lsblk listed, with its mountpoint. */
const mounts = (devices: readonly BlockDevice[]): Array<[string, string | null]> =>
  devices.flatMap((d) => [[d.path, d.mountpoint] as [string, string | null], ...mounts(d.children)]);

describe("the host's mounts from the operator's pods", () => {
  it("the ssdproxy's pod sees the host's root disk mounted at /; a drive container's pod sees the disk but no mount", async () => {
    const node = uniqueName('host-view');
    await addNode({ name: node, devices: [ROOT, { path: '/dev/nvme0n1', capacityGiB: 3840, type: 'TLC' }] });
    const namespace = await uniqueNamespace('host-view');
    const core = kubeConfig().makeApiClient(CoreV1Api);
    const exec = KubeExecTransport.fromKubeConfig(kubeConfig());
    const image = 'weka/weka-in-container:4.4';
    const common = { namespace, node, image, owner: `${namespace}/${node}` };
    for (const [name, role] of [
      ['proxy', 'ssdproxy'],
      ['drive', 'drive'],
    ] as const)
      await core.createNamespacedPod({ namespace, body: wekaPod({ ...common, name, role }) as never });
    const lsblk = async (pod: string) =>
      eventually(`lsblk in pod ${pod}`, async () => {
        const running = (await core.readNamespacedPod({ namespace, name: pod })).status?.phase === 'Running';
        if (!running) return undefined;
        const call = listBlockDevicesCall();
        return completeCall(call, await exec.run({ namespace, pod, container: 'weka' }, call.argv));
      });

    const fromProxy = mounts(await lsblk('proxy'));
    expect(fromProxy).toContainEqual(['/dev/sda2', '/']);
    expect(fromProxy).toContainEqual(['/dev/sda1', '/boot/efi']);
    const fromDrive = mounts(await lsblk('drive'));
    expect(fromDrive.map(([path]) => path).sort()).toEqual(fromProxy.map(([path]) => path).sort());
    expect(fromDrive.filter(([, mountpoint]) => mountpoint !== null)).toEqual([]);
  });
});
