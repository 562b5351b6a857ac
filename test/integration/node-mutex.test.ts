// Twenty drive containers ask one node for more than it has, all at once. The node's mutex
// decides one at a time: no physical drive is over-committed, the losers see a clear refusal,
// and they succeed as soon as capacity is released.
import { describe, expect, it } from 'vitest';
import type { WekaContainer } from '../../src/api/index.js';
import { eventually } from '../support/async.js';
import { uniqueNamespace } from '../support/harness.js';
import {
  createDriveContainer,
  deleteDriveContainer,
  readContainer,
  sharedDrivesNode,
  useTestOperator,
  waitGone,
} from '../support/operator.js';
import { createWekaCluster, showDevice } from '../support/simulator.js';

const op = useTestOperator();

const DEVICES = [
  { path: '/dev/nvme0n1', capacityGiB: 3840, type: 'TLC' as const },
  { path: '/dev/nvme1n1', capacityGiB: 3840, type: 'TLC' as const },
];

function refusal(c: WekaContainer | null): string | undefined {
  const cond = c?.status?.conditions?.find((x) => x.type === 'Allocated');
  return cond?.status === 'False' ? cond.reason : undefined;
}

describe('per-node mutex under contention', () => {
  it(
    'never over-commits a drive, refuses the losers clearly, and serves them once capacity is released',
    { timeout: 300_000 },
    async () => {
      const node = await sharedDrivesNode(DEVICES, 'crowded');
      const guid = await createWekaCluster(node, 'crowd');
      const ns = await uniqueNamespace('crowd');
      // 700 GiB each: five fit on a 3840 GiB drive (340 GiB left, under the 384 GiB minimum),
      // so exactly ten of the twenty fit on the node.
      const refs = Array.from({ length: 20 }, (_, i) => ({ namespace: ns, name: `drive-${i}` }));
      const created = await Promise.all(
        refs.map((ref) =>
          createDriveContainer(
            op,
            ref,
            { nodeName: node, driveCores: 1, containerCapacity: 700, driveTypesRatio: { tlc: 1, qlc: 0 } },
            guid,
          ),
        ),
      );
      const uids = new Map(refs.map((r, i) => [r.name, created[i]!.uid]));

      const settled = await eventually(
        'ten Ready and ten refused',
        async () => {
          const all = await Promise.all(refs.map((r) => readContainer(r)));
          const ready = all.filter((c) => c?.status?.phase === 'Ready');
          const refused = all.filter((c) => refusal(c) !== undefined);
          return ready.length === 10 && refused.length === 10 ? { ready, refused } : undefined;
        },
        240_000,
      );
      for (const c of settled.refused) expect(refusal(c)).toBe('InsufficientDriveCapacity');
      for (const c of settled.refused) {
        expect(c!.status?.conditions?.find((x) => x.type === 'Allocated')?.message).toMatch(/TLC/);
        expect(c!.status?.allocations?.virtualDrives ?? []).toEqual([]);
      }
      for (const d of DEVICES) {
        const info = await showDevice(node, d.path);
        expect(info.virtualDrives.reduce((s, v) => s + v.sizeGiB, 0)).toBeLessThanOrEqual(info.capacityGiB);
      }

      // Free three slots: three waiters get them, told by the node's release, well before the 30 s retry.
      const released = settled.ready.slice(0, 3).map((c) => ({ namespace: ns, name: c!.metadata.name! }));
      await Promise.all(released.map((r) => deleteDriveContainer(op, r, uids.get(r.name)!)));
      await Promise.all(released.map((r) => waitGone(r)));
      const waiters = settled.refused.map((c) => ({ namespace: ns, name: c!.metadata.name! }));
      const startedWaiting = Date.now();
      await eventually(
        'three of the refused containers to become Ready',
        async () => {
          const states = await Promise.all(waiters.map((r) => readContainer(r)));
          return states.filter((c) => c?.status?.phase === 'Ready').length === 3 ? true : undefined;
        },
        120_000,
      );
      console.log(`released capacity was taken by waiters within ${Date.now() - startedWaiting} ms`);
      for (const d of DEVICES) {
        const info = await showDevice(node, d.path);
        expect(info.virtualDrives.reduce((s, v) => s + v.sizeGiB, 0)).toBeLessThanOrEqual(info.capacityGiB);
      }

      const remaining = refs.filter((r) => !released.some((x) => x.name === r.name));
      await Promise.all(remaining.map((r) => deleteDriveContainer(op, r, uids.get(r.name)!)));
      await Promise.all(remaining.map((r) => waitGone(r, 180_000)));
      for (const d of DEVICES) expect((await showDevice(node, d.path)).virtualDrives).toEqual([]);
    },
  );
});
