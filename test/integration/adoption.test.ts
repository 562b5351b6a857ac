// A node whose drives the Weka operator signed is adopted as it is: its annotation
// (weka.io/weka-shared-drives, snake_case, no device paths) is read, the node's devices are read
// once to learn their paths and the virtual drives its containers already have on them, and new
// containers are allocated around those. The compact untyped form is adopted the same way.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  decodeSharedDrivesAnnotation,
  SHARED_DRIVES_ANNOTATION,
  WEKA_OPERATOR_SHARED_DRIVES_ANNOTATION,
} from '../../src/annotations/index.js';
import { ALLOCATIONS_ANNOTATION, decodeLedger } from '../../src/node/allocation-ledger.js';
import type { SimulatedDevice } from '../../deploy/local/fake-nodes.js';
import { eventually } from '../support/async.js';
import { addNode, kubeConfig, uniqueName, uniqueNamespace } from '../support/harness.js';
import { readNode } from '../support/manual-operation.js';
import {
  createDriveContainer,
  readContainer,
  startTestOperator,
  waitForPhase,
  type TestOperator,
} from '../support/operator.js';
import { createWekaCluster, showDevice, sim } from '../support/simulator.js';
import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';

const DEVICES: SimulatedDevice[] = [
  { path: '/dev/nvme0n1', capacityGiB: 3840, type: 'TLC' },
  { path: '/dev/nvme1n1', capacityGiB: 3840, type: 'TLC' },
  { path: '/dev/nvme2n1', capacityGiB: 7680, type: 'QLC' },
];
/** What the Weka operator's containers already have on the devices. */
const THEIRS: Record<string, number> = { '/dev/nvme0n1': 3000, '/dev/nvme1n1': 1000 };
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

let op: TestOperator;
let ns: string;

beforeAll(async () => {
  op = await startTestOperator();
  ns = await uniqueNamespace('adoption');
});
afterAll(async () => {
  await op?.stop();
});

async function annotate(node: string, key: string, value: string): Promise<void> {
  await kubeConfig()
    .makeApiClient(CoreV1Api)
    .patchNode({ name: node, body: { metadata: { annotations: { [key]: value } } } }, mergePatch);
}

/** A node signed for the proxy outside this operator, with virtual drives of another cluster on it. */
async function signedElsewhere(prefix: string) {
  const node = uniqueName(prefix);
  await addNode({ name: node, devices: DEVICES });
  const other = randomUUID();
  const drives = [];
  for (const d of DEVICES) {
    await sim(node, '--', 'weka-sign-drive', 'sign', 'proxy', d.path);
    const shown = await showDevice(node, d.path);
    const size = THEIRS[d.path];
    if (size !== undefined)
      await sim(
        node,
        '--',
        'weka-sign-drive',
        'virtual',
        'add',
        shown.physicalUUID!,
        '--size',
        String(size),
        '--owner-cluster-guid',
        other,
        '--virtual-uuid',
        randomUUID(),
      );
    drives.push({
      physicalUUID: shown.physicalUUID!,
      serial: shown.serial,
      capacityGiB: d.capacityGiB,
      type: d.type,
      devicePath: d.path,
    });
  }
  return { node, drives, guid: await createWekaCluster(node, uniqueName('cluster')) };
}

/** No device holds more virtual drives than it has room for. */
async function expectNoOvercommit(node: string): Promise<void> {
  for (const d of DEVICES) {
    const shown = await showDevice(node, d.path);
    expect(
      shown.virtualDrives.reduce((sum, vd) => sum + vd.sizeGiB, 0),
      d.path,
    ).toBeLessThanOrEqual(d.capacityGiB);
  }
}

describe('adopting a node', () => {
  it('signed by the Weka operator: reads its annotation as written, counts its virtual drives, and allocates around them', async () => {
    const { node, drives, guid } = await signedElsewhere('adopt-go');
    await annotate(
      node,
      WEKA_OPERATOR_SHARED_DRIVES_ANNOTATION,
      JSON.stringify(
        drives.map((d) => ({
          physical_uuid: d.physicalUUID,
          serial: d.serial,
          capacity_gib: d.capacityGiB,
          type: d.type,
        })),
      ),
    );

    const first = { namespace: ns, name: 'fits' };
    await createDriveContainer(op, first, { nodeName: node, driveCores: 1, numDrives: 2, driveCapacity: 500 }, guid);
    await waitForPhase(first, 'Ready', 90_000);

    // Adopted: this operator's annotation lists every drive with its device path; the virtual drives
    // the Weka operator's containers have are counted as taken.
    const annotations = (await readNode(node)).metadata!.annotations!;
    const ours = decodeSharedDrivesAnnotation(annotations[SHARED_DRIVES_ANNOTATION]!);
    expect(ours.ok && ours.drives).toEqual(drives);
    const ledger = decodeLedger(annotations[ALLOCATIONS_ANNOTATION]);
    expect(ledger.ok && ledger.ledger.found.map((f) => f.capacityGiB).sort()).toEqual([1000, 3000]);

    // 340 GiB are left on nvme0n1 and 2340 on nvme1n1: two 1200 GiB drives do not fit, although
    // they would if the Weka operator's 3000 GiB were not counted.
    const second = { namespace: ns, name: 'does-not-fit' };
    await createDriveContainer(op, second, { nodeName: node, driveCores: 1, numDrives: 2, driveCapacity: 1200 }, guid);
    const refused = await eventually('the second container to be refused', async () => {
      const c = await readContainer(second);
      const allocated = c?.status?.conditions?.find((x) => x.type === 'Allocated');
      return allocated?.status === 'False' ? allocated : undefined;
    });
    expect(refused.reason).toMatch(/^Insufficient/);
    await expectNoOvercommit(node);
  });

  it('listed in the compact form, which has no type: the types are read from the devices, and containers allocate in both modes', async () => {
    const { node, drives, guid } = await signedElsewhere('adopt-compact');
    await annotate(
      node,
      SHARED_DRIVES_ANNOTATION,
      JSON.stringify(drives.map((d) => [d.physicalUUID, d.serial, d.capacityGiB, d.devicePath])),
    );

    const fixed = { namespace: ns, name: 'compact-fixed' };
    await createDriveContainer(op, fixed, { nodeName: node, driveCores: 1, numDrives: 1, driveCapacity: 500 }, guid);
    const ratio = { namespace: ns, name: 'compact-ratio' };
    await createDriveContainer(
      op,
      ratio,
      { nodeName: node, driveCores: 1, containerCapacity: 2000, driveTypesRatio: { tlc: 1, qlc: 3 } },
      guid,
    );
    await waitForPhase(fixed, 'Ready', 90_000);
    await waitForPhase(ratio, 'Ready', 90_000);
    const ours = decodeSharedDrivesAnnotation((await readNode(node)).metadata!.annotations![SHARED_DRIVES_ANNOTATION]!);
    expect(ours.ok && ours.drives.map((d) => d.type)).toEqual(['TLC', 'TLC', 'QLC']);
    await expectNoOvercommit(node);
  });
});
