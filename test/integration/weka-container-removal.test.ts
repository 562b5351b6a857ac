// A drive container's teardown removes its Weka container from the cluster, so the same name can
// join again, from another node too (GitOps deletes and re-creates objects under one name).
import { describe, expect, it } from 'vitest';
import { eventually } from '../support/async.js';
import { uniqueNamespace } from '../support/harness.js';
import {
  createDriveContainer,
  deleteDriveContainer,
  sharedDrivesNode,
  useTestOperator,
  waitForPhase,
  waitGone,
} from '../support/operator.js';
import { createWekaCluster, sim, simulatorLog } from '../support/simulator.js';

const op = useTestOperator();

const DEVICES = [{ path: '/dev/nvme0n1', capacityGiB: 7680, type: 'TLC' as const }];
const SPEC = { driveCores: 1, numDrives: 2, driveCapacity: 1000 };

describe('the Weka container of a drive container', () => {
  it('is removed by the teardown, so the same name joins again from another node', { timeout: 240_000 }, async () => {
    const [first, second] = await Promise.all([
      sharedDrivesNode(DEVICES, 'removal'),
      sharedDrivesNode(DEVICES, 'removal'),
    ]);
    const guid = await createWekaCluster(first, 'removal');
    const ref = { namespace: await uniqueNamespace('removal'), name: 'drive-0' };

    const a = await createDriveContainer(op, ref, { ...SPEC, nodeName: first }, guid);
    const ready = await waitForPhase(ref, 'Ready');
    const firstId = ready.status!.containerID!;
    await deleteDriveContainer(op, ref, a.uid);
    await waitGone(ref);
    const log = await simulatorLog(first);
    const removed = log.flatMap((e) => e.changes).filter((c) => c.kind === 'container-remove');
    expect(removed.map((c) => c['containerId'])).toEqual([firstId]);
    // A removed container is no longer listed.
    const listed = JSON.parse(await sim(first, '--', 'weka', 'cluster', 'container', String(firstId), '--json'));
    expect(listed).toEqual([]);

    // The same name, created again on another node, in the same Weka cluster.
    const b = await createDriveContainer(op, ref, { ...SPEC, nodeName: second }, guid);
    const again = await eventually(
      'the re-created container Ready',
      async () => {
        const c = await waitForPhase(ref, 'Ready', 120_000).catch(() => undefined);
        return c?.metadata.uid === b.uid ? c : undefined;
      },
      150_000,
    );
    expect(again.status?.containerID).not.toBe(firstId);
    await deleteDriveContainer(op, ref, b.uid);
    await waitGone(ref);
  });
});
