// block-drives on the real control plane, the simulator and an operator process that is SIGKILLed
// mid-campaign: a physical drive holding virtual drives of two tenants (two Weka clusters, two
// namespaces) fails and is blocked; each tenant gets replacements of the same size on the node's other
// drives, signs and adds them, and only then removes the old ones from its cluster and the device.
// Both end Ready, the drive offers nothing any more, and no drive is over-committed. An unknown
// drive is refused; unblock-drives gives the drive back.
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, describe, expect, it } from 'vitest';
import type { SimulatedDevice } from '../../deploy/local/fake-nodes.js';
import type { WekaContainer } from '../../src/api/index.js';
import { quantityValue } from '../../src/api/quantity.js';
import { operationWorkflowId } from '../../src/protocol.js';
import { eventually } from '../support/async.js';
import { createDriveContainers, isReady, listContainers, TEST_IMAGE } from '../support/containers.js';
import { eventsOf } from '../support/events.js';
import { recordHistory } from '../support/histories.js';
import { kubeConfig, removeNodesAdded, uniqueName, uniqueNamespace } from '../support/harness.js';
import { createOperation, readOperation, waitFinished } from '../support/manual-operation.js';
import { sharedDrivesNode, startOperatorProcess } from '../support/operator.js';
import type { OperatorProcess } from '../support/operator-process.js';
import { createWekaCluster, failDrive, inContainerPod, showDevice } from '../support/simulator.js';

const DEVICES: SimulatedDevice[] = ['nvme0n1', 'nvme1n1', 'nvme2n1'].map((d) => ({
  path: `/dev/${d}`,
  capacityGiB: 1000,
  type: 'TLC',
}));

let operator: OperatorProcess | undefined;
afterAll(async () => {
  await operator?.kill();
  await removeNodesAdded();
});

describe('block-drives', () => {
  it(
    "replaces two tenants' virtual drives on a blocked drive before removing them, through a SIGKILL",
    { timeout: 420_000 },
    async () => {
      const env = { WEKA_TASK_QUEUE: uniqueName('block'), WEKA_OPERATOR_NAMESPACE: await uniqueNamespace('weka-op') };
      operator = await startOperatorProcess(env, 'compiled');
      const node = await sharedDrivesNode(DEVICES, 'block');
      const kc = kubeConfig();
      const core = kc.makeApiClient(CoreV1Api);
      const tenants = [await uniqueNamespace('tenant-a'), await uniqueNamespace('tenant-b')];
      const guids: string[] = [];
      for (const ns of tenants) {
        const guid = await createWekaCluster(node, uniqueName('block'));
        guids.push(guid);
        const spec = { image: TEST_IMAGE, nodeName: node, driveCores: 1, numDrives: 2, driveCapacity: 300 };
        await createDriveContainers(kc, ns, [{ name: 'drive-0', spec }], { clusterGUID: guid });
      }
      const ready = async () => {
        const all = (await Promise.all(tenants.map((ns) => listContainers(kc, ns)))).flat();
        return all.length === 2 && all.every(isReady) ? all : undefined;
      };
      const before = await eventually('both tenants to be Ready', ready, 150_000);
      // The drive that holds a virtual drive of each tenant.
      const holders = before.map((c) => new Set(c.status!.allocations!.virtualDrives!.map((v) => v.physicalUUID)));
      const shared = [...holders[0]!].find((p) => holders[1]!.has(p))!;
      expect(shared).toBeDefined();
      const oldDrives = before.flatMap((c) =>
        c.status!.allocations!.virtualDrives!.filter((v) => v.physicalUUID === shared).map((v) => v.virtualUUID),
      );
      const devices = await Promise.all(DEVICES.map((d) => showDevice(node, d.path)));
      const blockedPath = DEVICES[devices.findIndex((d) => d.physicalUUID === shared)]!.path;

      // Bad input first: an unknown drive is refused and blocks nothing.
      const unknown = { namespace: tenants[0]!, name: 'block-unknown' };
      await createOperation(unknown, 'block-drives', { blockDrivesPayload: { node, serialIDs: ['no-such-serial'] } });
      const refused = await waitFinished(unknown, 60_000);
      expect(refused.status?.phase).toBe('Refused');
      expect(refused.status?.conditions?.find((c) => c.type === 'Accepted')).toMatchObject({
        status: 'False',
        reason: 'UnknownDrive',
      });

      // The drive fails: Weka lists the virtual drives on it INACTIVE, and nothing can be signed there.
      await failDrive(node, shared);
      const ref = { namespace: tenants[0]!, name: 'block' };
      await createOperation(ref, 'block-drives', { blockDrivesPayload: { node, physicalUUIDs: [shared] } });
      await eventually(
        'the block to be accepted',
        async () => (await readOperation(ref))?.status?.conditions?.find((c) => c.type === 'Accepted'),
        90_000,
      );
      // A crashed operator mid-campaign: the containers and the operation resume on the next one.
      await operator.kill();
      operator = await startOperatorProcess(env, 'compiled');

      const done = await waitFinished(ref, 240_000);
      expect(done.status?.phase, JSON.stringify(done.status?.conditions)).toBe('Succeeded');
      const result = done.status?.results?.[0];
      expect(result?.blocked).toEqual([`physical UUID ${shared}`]);
      expect(result?.replacements?.map((r) => r.state)).toEqual(oldDrives.map(() => 'Replaced'));
      expect(result?.replacements?.map((r) => r.virtualUUID).sort()).toEqual([...oldDrives].sort());

      const after = await eventually('both tenants to be Ready on their replacements', ready, 60_000);
      for (const [i, c] of after.entries()) {
        const held = c.status!.allocations!;
        expect(held.virtualDrives).toHaveLength(2);
        expect(held.virtualDrives!.every((v) => v.physicalUUID !== shared && v.capacityGiB === 300)).toBe(true);
        expect(held.replacedVirtualDrives ?? []).toEqual([]);
        const ns = c.metadata.namespace!;
        const drives = await clusterDrives(c, guids[i]!);
        expect(drives.sort()).toEqual(held.virtualDrives!.map((v) => v.virtualUUID).sort());
        const reasons = (await eventsOf({ namespace: ns, name: 'drive-0' })).map((e) => e.reason);
        expect(reasons).toContain('DrivesReplaced');
      }
      // The old drives are off the blocked device; no device holds more than it has.
      expect((await showDevice(node, blockedPath)).virtualDrives).toEqual([]);
      for (const d of DEVICES) {
        const shown = await showDevice(node, d.path);
        expect(shown.virtualDrives.reduce((sum, v) => sum + v.sizeGiB, 0)).toBeLessThanOrEqual(d.capacityGiB);
      }
      const blockedNode = await core.readNode({ name: node });
      expect(blockedNode.metadata?.annotations?.['weka.io/blocked-drives-physical-uuids']).toBe(
        JSON.stringify([shared]),
      );
      expect(quantityValue(blockedNode.status!.allocatable!['weka.io/shared-drives-capacity']!)).toBe(2000);
      await recordHistory(operationWorkflowId(done.metadata.uid!), 'block-drives-replaced');

      // unblock-drives gives the drive back.
      const unblock = { namespace: tenants[0]!, name: 'unblock' };
      await createOperation(unblock, 'unblock-drives', { blockDrivesPayload: { node, physicalUUIDs: [shared] } });
      const unblocked = await waitFinished(unblock, 60_000);
      expect(unblocked.status?.phase).toBe('Succeeded');
      const freed = await core.readNode({ name: node });
      expect(freed.metadata?.annotations?.['weka.io/blocked-drives-physical-uuids']).toBeUndefined();
      expect(quantityValue(freed.status!.allocatable!['weka.io/shared-drives-capacity']!)).toBe(3000);
    },
  );
});

/** The drives the tenant's Weka cluster lists, asked in its container's pod. */
async function clusterDrives(c: WekaContainer, guid: string): Promise<string[]> {
  expect(c.status?.clusterGUID).toBe(guid);
  const out = await inContainerPod(c, 'weka', 'cluster', 'drive', '--json');
  return (JSON.parse(out) as { uuid: string }[]).map((d) => d.uuid);
}
