// What a node has to give is what its mutex gave (the node's allocation ledger) and what its
// devices hold, never what a status says: clearing a live container's status by hand frees nothing
// (and the container gets the same allocation back); a virtual drive on a device that no container
// was given is counted as taken once the devices are read, and reported; a release request alone
// (a signal anybody with access to the Temporal namespace can send) frees nothing of a live
// container; a container deleted while the mutex decides its allocation leaves nothing taken;
// drives are told apart by physical UUID, so disks with the same (or no) serial are all shared.
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatedDevice } from '../../deploy/local/fake-nodes.js';
import { decodeSharedDrivesAnnotation, SHARED_DRIVES_ANNOTATION } from '../../src/annotations/index.js';
import type { ObjectRef } from '../../src/api/names.js';
import { eventually } from '../support/async.js';
import { warningEvent } from '../support/events.js';
import { WEKA_CONTAINERS } from '../support/containers.js';
import { addNode, kubeConfig, removeNodesAdded, uniqueName, uniqueNamespace } from '../support/harness.js';
import { readNode, startSignDrivesOperation, waitFinished } from '../support/manual-operation.js';
import {
  createDriveContainer,
  deleteDriveContainer,
  readContainer,
  sharedDrivesNode,
  startTestOperator,
  waitForPhase,
  waitGone,
  type TestOperator,
} from '../support/operator.js';
import { createWekaCluster, showDevice, sim } from '../support/simulator.js';
import { mutexRequestSignal, nodeMutexId, stateQuery } from '../../src/protocol.js';
import { ALLOCATIONS_ANNOTATION, decodeLedger } from '../../src/node/allocation-ledger.js';
import { holdDryRunPodCreates } from '../support/holding-webhook.js';
import { replyCollector } from './fixtures/reply-collector-client.js';

const ONE_DRIVE: SimulatedDevice[] = [{ path: '/dev/nvme0n1', capacityGiB: 1000, type: 'TLC' }];
const TLC_ONLY = { tlc: 1, qlc: 0 };
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

let op: TestOperator;
let ns: string;
beforeAll(async () => {
  op = await startTestOperator();
  ns = await uniqueNamespace('accounting');
});
afterAll(async () => {
  await op?.stop();
  // Its containers stay allocated on purpose: their ports must not fill the next files' windows.
  await removeNodesAdded();
});

/** Waits for the container's Allocated condition to be False with this reason. */
async function refused(ref: ObjectRef, reason: string): Promise<void> {
  await eventually(
    `${ref.name}: Allocated=False ${reason}`,
    async () => {
      const c = (await readContainer(ref))?.status?.conditions?.find((x) => x.type === 'Allocated');
      return c?.status === 'False' && c.reason === reason ? true : undefined;
    },
    90_000,
    { progress: async () => JSON.stringify((await readContainer(ref))?.status?.conditions ?? []) },
  );
}

/** A drive container on `node` asking for `gib` GiB of TLC only, in the standalone cluster `guid`. */
const tlcContainer = (ref: ObjectRef, node: string, gib: number, guid: string) =>
  createDriveContainer(
    op,
    ref,
    { nodeName: node, driveCores: 1, containerCapacity: gib, driveTypesRatio: TLC_ONLY },
    guid,
  );

const virtualUUIDs = async (ref: ObjectRef): Promise<string[] | undefined> =>
  (await readContainer(ref))?.status?.allocations?.virtualDrives?.map((d) => d.virtualUUID);

describe('capacity accounting', () => {
  it(
    'a status cleared by hand frees nothing, and its container gets the same allocation back',
    { timeout: 240_000 },
    async () => {
      const node = await sharedDrivesNode(ONE_DRIVE, 'accounting-cleared');
      const guid = await createWekaCluster(node, uniqueName('cluster'));
      const first = { namespace: ns, name: 'holds-600' };
      await tlcContainer(first, node, 600, guid);
      await waitForPhase(first, 'Ready', 120_000);
      const given = await virtualUUIDs(first);
      expect(given?.length).toBeGreaterThan(0);

      // A person (or a script) with write access to the status clears the allocation.
      await kubeConfig()
        .makeApiClient(CustomObjectsApi)
        .patchNamespacedCustomObjectStatus(
          { ...WEKA_CONTAINERS, namespace: ns, name: first.name, body: { status: { allocations: null } } },
          mergePatch,
        );
      expect(await virtualUUIDs(first)).toBeUndefined();

      // The 600 GiB are still signed on the device: a second container must not get them.
      const second = { namespace: ns, name: 'wants-600' };
      await tlcContainer(second, node, 600, guid);
      await refused(second, 'InsufficientDriveCapacity');
      expect(await virtualUUIDs(second)).toBeUndefined();
      // ...and the first container's status shows its own allocation again, the same drives.
      await eventually('the cleared allocation to be written back', async () =>
        JSON.stringify(await virtualUUIDs(first)) === JSON.stringify(given) ? true : undefined,
      );
      const device = await showDevice(node, ONE_DRIVE[0]!.path);
      expect(device.virtualDrives.map((v) => v.virtualUUID).sort()).toEqual([...given!].sort());
    },
  );

  it(
    'a virtual drive on a device that no container was given is counted as taken once the devices are read, and reported',
    { timeout: 240_000 },
    async () => {
      const selector = { 'weka.io/drive-sharing': uniqueName('found') };
      const node = await sharedDrivesNode(ONE_DRIVE, 'accounting-found', selector);
      const device = await showDevice(node, ONE_DRIVE[0]!.path);
      // Signed by something else (another operator, a person at the node): 500 of the 1000 GiB.
      const stray = '0b5e6f3c-2f5d-4a8e-9c1b-7d2e4f6a8b90';
      await sim(
        node,
        '--',
        'weka-sign-drive',
        'virtual',
        'add',
        device.physicalUUID!,
        '--size',
        '500',
        '--owner-cluster-guid',
        '5d1c2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
        '--virtual-uuid',
        stray,
      );

      const ref = { namespace: ns, name: 'read-the-devices' };
      await startSignDrivesOperation(op, ref, {
        type: 'device-paths',
        nodeSelector: selector,
        devicePaths: ONE_DRIVE.map((d) => d.path),
        shared: true,
      });
      expect((await waitFinished(ref)).status?.phase).toBe('Succeeded');
      const found = await warningEvent(ref, 'VirtualDrivesFound');
      expect(found).toContain(stray);
      expect(found).toContain('500 GiB');
      // ...and on the Node, where it stays reported whoever read the devices.
      const onNode = await warningEvent({ namespace: 'default', name: node }, 'VirtualDrivesFound');
      expect(onNode).toContain(stray);
      expect(onNode).toContain('500 GiB');

      const guid = await createWekaCluster(node, uniqueName('cluster'));
      const wants = { namespace: ns, name: 'after-found-600' };
      await tlcContainer(wants, node, 600, guid);
      await refused(wants, 'InsufficientDriveCapacity');
      const fits = { namespace: ns, name: 'after-found-400' };
      await tlcContainer(fits, node, 400, guid);
      await waitForPhase(fits, 'Ready', 120_000);
    },
  );

  it(
    'a release request sent to the node mutex for a live container frees nothing, whatever name it gives',
    { timeout: 240_000 },
    async () => {
      const node = await sharedDrivesNode(ONE_DRIVE, 'accounting-release');
      const guid = await createWekaCluster(node, uniqueName('cluster'));
      const live = { namespace: ns, name: 'live-600' };
      const { uid } = await tlcContainer(live, node, 600, guid);
      await waitForPhase(live, 'Ready', 120_000);
      const given = await virtualUUIDs(live);

      // Anybody who can signal workflows in the namespace can send this; only a deletion may act on it.
      // The live container's uid under its own name, and under a made-up one (nothing of that name
      // exists, so a check of the name alone would take it for a container already gone).
      const collector = await replyCollector(op);
      try {
        for (const [i, name] of [live.name, 'made-up'].entries()) {
          await op.client.workflow.getHandle(nodeMutexId(node)).signal(mutexRequestSignal, {
            requestId: uniqueName('stray-release'),
            kind: 'release',
            replyTo: collector.workflowId,
            payload: { namespace: ns, name, node, uid },
          });
          const answers = await eventually(`the answer to the release naming ${name}`, async () => {
            const got = await collector.answers();
            return got.length > i ? got : undefined;
          });
          expect(answers[i], `a release naming ${name}`).toMatchObject({ ok: false, error: { type: 'NotDeleting' } });
        }
      } finally {
        await collector.stop();
      }
      expect(await virtualUUIDs(live)).toEqual(given);
      const next = { namespace: ns, name: 'after-release-600' };
      await tlcContainer(next, node, 600, guid);
      await refused(next, 'InsufficientDriveCapacity');
    },
  );

  it(
    "a teardown removes what the node's ledger gave its container, never what a forged status names",
    { timeout: 240_000 },
    async () => {
      const devices: SimulatedDevice[] = [{ path: '/dev/nvme0n1', capacityGiB: 2000, type: 'TLC' }];
      const node = await sharedDrivesNode(devices, 'accounting-forged');
      const guid = await createWekaCluster(node, uniqueName('cluster'));
      const mine = { namespace: ns, name: 'forges-its-status' };
      const theirs = { namespace: ns, name: 'is-forged-against' };
      const { uid } = await tlcContainer(mine, node, 600, guid);
      await tlcContainer(theirs, node, 600, guid);
      await Promise.all([waitForPhase(mine, 'Ready', 120_000), waitForPhase(theirs, 'Ready', 120_000)]);
      const theirDrives = (await readContainer(theirs))!.status!.allocations!;

      // A tenant who may write its container's status names the other container's drives in it...
      await kubeConfig()
        .makeApiClient(CustomObjectsApi)
        .patchNamespacedCustomObjectStatus(
          { ...WEKA_CONTAINERS, ...mine, body: { status: { allocations: theirDrives } } },
          mergePatch,
        );
      // ...and deletes it: its teardown removes its own drives, and only those.
      await deleteDriveContainer(op, mine, uid);
      await waitGone(mine, 120_000);
      const onDevice = (await showDevice(node, devices[0]!.path)).virtualDrives.map((v) => v.virtualUUID);
      expect(onDevice.sort()).toEqual(theirDrives.virtualDrives!.map((v) => v.virtualUUID).sort());
      expect((await readContainer(theirs))?.status?.phase).toBe('Ready');
    },
  );

  it('shares every disk of a node whose disks have the same serial, or none', { timeout: 180_000 }, async () => {
    const selector = { 'weka.io/drive-sharing': uniqueName('serials') };
    const node = uniqueName('accounting-serials');
    const devices: SimulatedDevice[] = [
      { path: '/dev/nvme0n1', capacityGiB: 1000, type: 'TLC', serial: 'SAME' },
      { path: '/dev/nvme1n1', capacityGiB: 2000, type: 'TLC', serial: 'SAME' },
      { path: '/dev/nvme2n1', capacityGiB: 4000, type: 'TLC', serial: 'SAME' },
    ];
    await addNode({ name: node, labels: selector, devices });
    const ref = { namespace: ns, name: 'sign-same-serials' };
    await startSignDrivesOperation(op, ref, {
      type: 'device-paths',
      nodeSelector: selector,
      devicePaths: devices.map((d) => d.path),
      shared: true,
    });
    expect((await waitFinished(ref)).status?.phase).toBe('Succeeded');
    const nodeObject = await readNode(node);
    const listed = decodeSharedDrivesAnnotation(nodeObject.metadata?.annotations?.[SHARED_DRIVES_ANNOTATION] ?? '');
    if (!listed.ok) throw new Error(listed.error.message);
    expect(listed.drives.map((d) => d.devicePath)).toEqual(devices.map((d) => d.path));
    expect(nodeObject.status?.capacity?.['weka.io/shared-drives-capacity']).toMatch(/^(7000|7k)$/);
  });
  it(
    'a container deleted while the node mutex decides its allocation leaves nothing taken on the node',
    { timeout: 240_000 },
    async () => {
      const node = await sharedDrivesNode(ONE_DRIVE, 'accounting-deleted-deciding');
      const guid = await createWekaCluster(node, uniqueName('cluster'));
      // The webhook holds the dry run of the new allocation's pod, which the mutex's round makes
      // after its read of the node and the container, and before it writes the node's ledger.
      const held = await uniqueNamespace('accounting-held');
      const webhook = await holdDryRunPodCreates(held);
      const going = { namespace: held, name: 'deleted-while-deciding' };
      let uid: string;
      try {
        const created = await tlcContainer(going, node, 600, guid);
        uid = created.uid;
        await webhook.held();
        await deleteDriveContainer(op, going, uid);
        // Its teardown has read what the ledger holds for it (nothing yet) and gone on.
        await eventually(
          'the teardown past its read of the ledger',
          async () => {
            const view = await created.handle.query(stateQuery);
            return view.phase === 'Deleting' && view.step !== 'tearing down' ? view.step : undefined;
          },
          60_000,
        );
        webhook.release();
        await waitGone(going, 120_000);
      } finally {
        await webhook.stop();
      }
      await eventually(
        "the deleted container's entry out of the node's ledger",
        async () => {
          const text = (await readNode(node)).metadata?.annotations?.[ALLOCATIONS_ANNOTATION];
          const decoded = decodeLedger(text);
          return decoded.ok && !(uid in decoded.ledger.containers) ? true : undefined;
        },
        60_000,
        { progress: async () => (await readNode(node)).metadata?.annotations?.[ALLOCATIONS_ANNOTATION] ?? '' },
      );
      const next = { namespace: ns, name: 'after-deleted-while-deciding' };
      await tlcContainer(next, node, 600, guid);
      await waitForPhase(next, 'Ready', 120_000);
    },
  );
});
