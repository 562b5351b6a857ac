// NVMe device names are not stable across reboots: after one, the path a node's shared drive was
// recorded under may answer with another drive. Signing a virtual drive there would write it onto
// the wrong drive's header (a drive the ledger did not give, possibly full). The operator checks
// that the device at the path is still the recorded drive (physical UUID and serial) and refuses,
// naming both, until the node's drives are published again.
import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { encodeSharedDrivesAnnotation, SHARED_DRIVES_ANNOTATION } from '../../src/annotations/index.js';
import type { PhysicalDrive } from '../../src/allocation/index.js';
import { eventually } from '../support/async.js';
import { kubeConfig, uniqueName, uniqueNamespace } from '../support/harness.js';
import {
  createDriveContainer,
  deleteDriveContainer,
  readContainer,
  sharedDrivesNode,
  sharedDrivesOf,
  useTestOperator,
  waitForPhase,
  waitGone,
} from '../support/operator.js';
import { createWekaCluster, showDevice } from '../support/simulator.js';
import { POOL_LABEL } from '../support/clusters.js';
import { deleteOperation, startSignDrivesOperation, waitFinished } from '../support/manual-operation.js';

const DEVICES = [
  { path: '/dev/nvme0n1', capacityGiB: 1000, type: 'TLC' as const },
  { path: '/dev/nvme1n1', capacityGiB: 1000, type: 'TLC' as const },
];
const op = useTestOperator();

const core = () => kubeConfig().makeApiClient(CoreV1Api);

async function writeSharedDrives(node: string, drives: readonly PhysicalDrive[]): Promise<void> {
  await core().patchNode(
    {
      name: node,
      body: { metadata: { annotations: { [SHARED_DRIVES_ANNOTATION]: encodeSharedDrivesAnnotation(drives) } } },
    },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

describe('a node whose device names changed since its drives were shared', () => {
  it(
    'refuses to sign on the drive now at a recorded path, naming both drives, and signs once the drives are published again',
    { timeout: 300_000 },
    async () => {
      const pool = uniqueName('pool');
      const node = await sharedDrivesNode(DEVICES, 'renamed', { [POOL_LABEL]: pool });
      const guid = await createWekaCluster(node, uniqueName('renamed'));
      const recorded = await sharedDrivesOf(node);
      expect(recorded).toHaveLength(2);
      // As after a reboot that swapped the two names: each recorded path now answers with the other drive.
      const [a, b] = recorded as [PhysicalDrive, PhysicalDrive];
      await writeSharedDrives(node, [
        { ...a, devicePath: b.devicePath },
        { ...b, devicePath: a.devicePath },
      ]);

      const ref = { namespace: await uniqueNamespace('renamed'), name: 'drive-0' };
      const { uid } = await createDriveContainer(
        op,
        ref,
        { nodeName: node, driveCores: 1, containerCapacity: 1200, driveTypesRatio: { tlc: 1, qlc: 0 } },
        guid,
      );
      const refused = await eventually(
        'the signing refused',
        async () => {
          const c = await readContainer(ref);
          const ready = c?.status?.conditions?.find((x) => x.type === 'Ready');
          return ready?.reason === 'StepFailed' ? ready : undefined;
        },
        120_000,
      );
      expect(refused.message).toMatch(
        /is now physical drive \S+ \(serial \S+\), not physical drive \S+ \(serial \S+\)/,
      );
      expect(refused.message).toContain('the device names changed');
      // Nothing was signed on either drive.
      for (const d of DEVICES) expect((await showDevice(node, d.path)).virtualDrives).toEqual([]);

      // The node's drives published again, as docs/production.md says: a sign-drives operation
      // naming them reads every header and records each drive under its path now.
      const sign = { namespace: ref.namespace, name: 'publish-again' };
      const { uid: signUid } = await startSignDrivesOperation(op, sign, {
        type: 'device-paths',
        shared: true,
        nodeSelector: { [POOL_LABEL]: pool },
        devicePaths: DEVICES.map((d) => d.path),
      });
      await waitFinished(sign);
      const published = await sharedDrivesOf(node);
      for (const d of recorded)
        expect(published.find((p) => p.physicalUUID === d.physicalUUID)?.devicePath).toBe(d.devicePath);
      const ready = await waitForPhase(ref, 'Ready', 180_000);
      for (const vd of ready.status?.allocations?.virtualDrives ?? []) {
        const path = recorded.find((d) => d.physicalUUID === vd.physicalUUID)!.devicePath;
        const shown = await showDevice(node, path);
        expect(shown.physicalUUID).toBe(vd.physicalUUID);
        expect(shown.virtualDrives.map((v) => v.virtualUUID)).toContain(vd.virtualUUID);
      }
      await deleteDriveContainer(op, ref, uid);
      await waitGone(ref, 120_000);
      await deleteOperation(op, sign, signUid);
    },
  );
});
