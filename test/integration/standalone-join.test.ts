// A standalone drive container joins an existing Weka cluster from its spec (spec.joinIps, the
// pod's JOIN_IPS), never from a status someone writes: its Weka container's identity gives the
// cluster's GUID and its container ID, which the operator writes to the status.
import { describe, expect, it } from 'vitest';
import { wekaContainerName } from '../../src/api/names.js';
import { specChangedSignal } from '../../src/protocol.js';
import { eventually } from '../support/async.js';
import { patchContainerSpec } from '../support/containers.js';
import { kubeConfig, uniqueName, uniqueNamespace } from '../support/harness.js';
import {
  createDriveContainer,
  deleteDriveContainer,
  readContainer,
  sharedDrivesNode,
  useTestOperator,
  waitForPhase,
  waitGone,
} from '../support/operator.js';
import { readPod } from '../support/pods.js';
import { clusterContainers, createWekaCluster, joinIpsOf, simulatorLog } from '../support/simulator.js';

const op = useTestOperator();

const DEVICES = [{ path: '/dev/nvme0n1', capacityGiB: 7680, type: 'TLC' as const }];
const SPEC = { driveCores: 1, numDrives: 1, driveCapacity: 1000 };

describe('a standalone drive container', () => {
  it(
    'joins through the addresses its spec lists, which its pod carries as JOIN_IPS',
    { timeout: 180_000 },
    async () => {
      const node = await sharedDrivesNode(DEVICES, 'join-spec');
      const guid = await createWekaCluster(node, uniqueName('join-spec'));
      const ref = { namespace: await uniqueNamespace('join-spec'), name: 'drive-0' };
      const joinIps = await joinIpsOf(guid);
      const { uid } = await createDriveContainer(op, ref, { ...SPEC, nodeName: node }, guid);
      const ready = await waitForPhase(ref, 'Ready', 120_000);

      const pod = await readPod(ref.namespace, ref.name);
      const env = new Map((pod?.spec?.containers[0]?.env ?? []).map((e) => [e.name, e.value]));
      expect(env.get('JOIN_IPS')).toBe(joinIps.join(','));
      expect(ready.status?.clusterGUID).toBe(guid);
      const [member] = (await clusterContainers(guid)).filter(
        (c) => c.name === wekaContainerName(ref.namespace, ref.name),
      );
      expect(ready.status?.containerID).toBe(member?.containerId);
      // Its image joined it at set-up: the operator had nothing to give it.
      const given = (await simulatorLog(node)).flatMap((e) => e.changes).filter((c) => c.kind === 'join-ips');
      expect(given).toEqual([]);

      await deleteDriveContainer(op, ref, uid);
      await waitGone(ref, 120_000);
      expect((await clusterContainers(guid)).map((c) => c.name)).not.toContain(
        wekaContainerName(ref.namespace, ref.name),
      );
    },
  );

  it('without spec.joinIps waits, stalled, and joins once a person lists some', { timeout: 180_000 }, async () => {
    const node = await sharedDrivesNode(DEVICES, 'join-later');
    const guid = await createWekaCluster(node, uniqueName('join-later'));
    const ref = { namespace: await uniqueNamespace('join-later'), name: 'drive-0' };
    const { uid, handle } = await createDriveContainer(op, ref, { ...SPEC, nodeName: node });
    const waiting = await eventually(
      `${ref.name} to wait for spec.joinIps`,
      async () => {
        const c = await readContainer(ref);
        const stalled = c?.status?.conditions?.find((x) => x.type === 'Stalled');
        return c?.status?.phase === 'WaitingForCluster' && stalled?.status === 'True' ? c : undefined;
      },
      120_000,
    );
    expect(waiting.status?.conditions?.find((x) => x.type === 'Stalled')?.reason).toBe('NoJoinIps');
    expect(waiting.status?.clusterGUID).toBeUndefined();

    await patchContainerSpec(kubeConfig(), ref, { joinIps: await joinIpsOf(guid) });
    await handle.signal(specChangedSignal);
    const ready = await waitForPhase(ref, 'Ready', 120_000);
    expect(ready.status?.clusterGUID).toBe(guid);
    // Its pod was made before the spec listed them: the operator gave them to its Weka container.
    const given = (await simulatorLog(node)).flatMap((e) => e.changes).filter((c) => c.kind === 'join-ips');
    expect(given).toEqual([expect.objectContaining({ name: wekaContainerName(ref.namespace, ref.name) })]);

    await deleteDriveContainer(op, ref, uid);
    await waitGone(ref, 120_000);
  });
});
