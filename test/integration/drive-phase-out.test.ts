// A drive leaves its Weka cluster as Weka asks: deactivated, then removed once Weka has moved its
// data to the cluster's other drives (INACTIVE). While that takes, the teardown says so on the
// object and waits; it never removes a drive that is still phasing out. The simulator deactivates
// at once, so here an exec transport in front of it shows every deactivated drive as still phasing
// out until the test lets it finish (the status real Weka shows meanwhile is in no source: any
// status but ACTIVE and INACTIVE means wait, as the reference reads it).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeExecTransport } from '../../activities/exec/kube-exec.js';
import type { Condition } from '../../src/api/index.js';
import type { ObjectRef } from '../../src/api/names.js';
import { eventually } from '../support/async.js';
import { kubeConfig, removeNode } from '../support/harness.js';
import { eventsOf } from '../support/events.js';
import {
  createDriveContainer,
  deleteDriveContainer,
  readContainer,
  sharedDrivesNode,
  startTestOperator,
  waitForPhase,
  waitGone,
  type TestOperator,
  readyStandaloneContainer,
} from '../support/operator.js';
import { changeCounts, simulatorLog } from '../support/simulator.js';
import { PhaseOutTransport } from '../support/phase-out-transport.js';

/** The DrivesPhasingOut condition once the teardown says it waits, as `what` names that wait. */
function phasingOut(ref: ObjectRef, what: string): Promise<Condition> {
  return eventually(
    what,
    async () => {
      const c = await readContainer(ref);
      return c?.status?.conditions?.find((x: Condition) => x.type === 'DrivesPhasingOut' && x.status === 'True');
    },
    120_000,
  );
}

const DEVICES = [{ path: '/dev/nvme0n1', capacityGiB: 3840, type: 'TLC' as const }];
let op: TestOperator;
let exec: PhaseOutTransport;
beforeAll(async () => {
  exec = new PhaseOutTransport(KubeExecTransport.fromKubeConfig(kubeConfig()));
  op = await startTestOperator({ exec });
});
afterAll(async () => {
  await op?.stop();
});

describe('a drive taken out of its Weka cluster', () => {
  it(
    'is deactivated, waited for while Weka phases its data out (said on the object), and removed only once INACTIVE',
    { timeout: 300_000 },
    async () => {
      const { node, ref, uid, ready } = await readyStandaloneContainer(op, 'phase-out', DEVICES);
      const drives = ready.status?.addedVirtualDrives ?? [];
      expect(drives.length).toBeGreaterThan(0);

      await deleteDriveContainer(op, ref, uid);
      const waiting = await phasingOut(ref, 'the teardown to say it waits for the phase-out');
      expect(waiting.reason).toBe('PhasingOut');
      expect(waiting.message).toContain('never forcing it');
      expect(waiting.message).toContain('PHASING_OUT');

      // Deactivated, and not removed while it phases out; the container keeps its drives and capacity.
      const log = await simulatorLog(node);
      const deactivated = [...changeCounts(log, 'drive-deactivate', 'virtualUUID').keys()];
      expect(deactivated.length).toBeGreaterThan(0);
      expect(changeCounts(log, 'drive-remove', 'virtualUUID').size).toBe(0);
      expect((await readContainer(ref))?.metadata.deletionTimestamp).toBeDefined();

      exec.holding = false;
      await waitGone(ref, 120_000);
      const after = await simulatorLog(node);
      for (const d of drives) {
        expect(changeCounts(after, 'drive-deactivate', 'virtualUUID').get(d)).toBe(1);
        expect(changeCounts(after, 'drive-remove', 'virtualUUID').get(d)).toBe(1);
      }
      // Each drive was removed after it was deactivated.
      const changes = after.flatMap((e) => e.changes);
      const at = (kind: string, d: string) => changes.findIndex((c) => c.kind === kind && c['virtualUUID'] === d);
      for (const d of drives) expect(at('drive-remove', d)).toBeGreaterThan(at('drive-deactivate', d));
    },
  );
});

describe('a container taken out of its Weka cluster', () => {
  it(
    'is deactivated, waited for while DEACTIVATING (said on the object), and removed only once INACTIVE',
    { timeout: 300_000 },
    async () => {
      exec.holding = false;
      exec.holdingContainers = true;
      const { node, ref, uid, ready } = await readyStandaloneContainer(op, 'deactivating', DEVICES);
      const containerId = ready.status?.containerID;
      expect(containerId).toBeDefined();

      await deleteDriveContainer(op, ref, uid);
      const waiting = await phasingOut(ref, 'the teardown to say it waits for the container to deactivate');
      expect(waiting.message).toContain(`container ${containerId} is DEACTIVATING`);
      const log = await simulatorLog(node);
      const kinds = log.flatMap((e) => e.changes.map((c) => c.kind));
      expect(kinds).toContain('container-deactivate');
      expect(kinds).not.toContain('container-remove');

      exec.holdingContainers = false;
      await waitGone(ref, 120_000);
      const changes = (await simulatorLog(node)).flatMap((e) => e.changes);
      const at = (kind: string) => changes.findIndex((c) => c.kind === kind && c['containerId'] === containerId);
      expect(changes.filter((c) => c.kind === 'container-remove' && c['containerId'] === containerId)).toHaveLength(1);
      expect(at('container-remove')).toBeGreaterThan(at('container-deactivate'));
    },
  );
});

describe('a container whose node is gone, taken out of its Weka cluster by another member', () => {
  it(
    'waits while Weka phases its drives out (said on the object), then removes them and the container from the peer',
    { timeout: 300_000 },
    async () => {
      exec.holding = false;
      exec.holdingContainers = false;
      const { node, guid, ref, uid, ready } = await readyStandaloneContainer(op, 'gone-node', DEVICES);
      const drives = ready.status?.addedVirtualDrives ?? [];
      const containerId = ready.status?.containerID;
      expect(drives.length).toBeGreaterThan(0);
      // Another member of the same Weka cluster, on a node that stays: where the removal runs.
      const peerNode = await sharedDrivesNode(DEVICES, 'gone-peer');
      const peer = { namespace: ref.namespace, name: 'peer' };
      const spec = { nodeName: peerNode, driveCores: 1, containerCapacity: 1000, driveTypesRatio: { tlc: 1, qlc: 0 } };
      const { uid: peerUid } = await createDriveContainer(op, peer, spec, guid);
      await waitForPhase(peer, 'Ready', 120_000);

      exec.holding = true;
      await removeNode(node);
      await deleteDriveContainer(op, ref, uid);
      const waiting = await phasingOut(ref, 'the teardown to say it waits for the phase-out');
      expect(waiting.message).toContain('PHASING_OUT');
      expect((await readContainer(ref))?.metadata.deletionTimestamp).toBeDefined();

      exec.holding = false;
      await waitGone(ref, 120_000);
      const changes = (await simulatorLog(peerNode)).flatMap((e) => e.changes);
      for (const d of drives) {
        const at = (kind: string) => changes.findIndex((c) => c.kind === kind && c['virtualUUID'] === d);
        expect(at('drive-remove'), `${d} removed from the peer`).toBeGreaterThan(at('drive-deactivate'));
      }
      expect(changes.some((c) => c.kind === 'container-remove' && c['containerId'] === containerId)).toBe(true);
      // Nothing is said to be left in the cluster: the peer took it all out.
      const events = await eventsOf(ref);
      expect(events.map((e) => e.reason)).toContain('LeftClusterViaPeer');
      expect(events.filter((e) => e.reason === 'NodeGone').map((e) => e.message ?? '')).not.toContainEqual(
        expect.stringContaining('may remain'),
      );

      await deleteDriveContainer(op, peer, peerUid);
      await waitGone(peer, 120_000);
    },
  );
});
