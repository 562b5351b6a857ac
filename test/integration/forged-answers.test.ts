// A node's mutex answers a drive container by signal, and anybody who can signal the container's
// workflow can send one, with the id of a request read from its history. Here the requester
// activity stands in for such a sender: it answers the container's first request of a kind itself
// and never passes it on. A container signs only the allocation its node's ledger holds for it,
// and ends its teardown only once the ledger holds nothing for it.
import { randomUUID } from 'node:crypto';
import { CoreV1Api } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Activities } from '../../activities/index.js';
import type { SimulatedDevice } from '../../deploy/local/fake-nodes.js';
import { decodeSharedDrivesAnnotation, SHARED_DRIVES_ANNOTATION } from '../../src/annotations/index.js';
import { decodeLedger, ALLOCATIONS_ANNOTATION } from '../../src/node/allocation-ledger.js';
import type { ContainerAllocation } from '../../src/allocation/types.js';
import type { ObjectRef } from '../../src/api/names.js';
import { mutexResponseSignal, type MutexRequestKind } from '../../src/protocol.js';
import { warningEvent } from '../support/events.js';
import { kubeConfig, temporalAddress, temporalNamespace, uniqueName, uniqueNamespace } from '../support/harness.js';
import {
  createDriveContainer,
  deleteDriveContainer,
  sharedDrivesNode,
  startTestOperator,
  waitForPhase,
  waitGone,
  type TestOperator,
} from '../support/operator.js';
import { createWekaCluster, showDevice } from '../support/simulator.js';

const DEVICES: SimulatedDevice[] = [{ path: '/dev/nvme0n1', capacityGiB: 3840, type: 'TLC' }];

/** The first request of each kind from each workflow is answered here, forged, and not passed on. */
const forged = new Map<string, (physicalUUID: string) => unknown>();
const answered = new Set<string>();
let client: Client;
let op: TestOperator;

function forging(activities: Activities): Activities {
  return {
    ...activities,
    async sendMutexRequest(args) {
      const { request } = args;
      const { namespace, name, node } = request.payload as { namespace?: string; name?: string; node: string };
      const key = `${namespace}/${name}/${request.kind}`;
      const forge = forged.get(key);
      if (!forge || answered.has(key)) return activities.sendMutexRequest(args);
      answered.add(key);
      const result = forge(await physicalUUIDOf(node));
      await client.workflow
        .getHandle(request.replyTo)
        .signal(mutexResponseSignal, { requestId: request.requestId, kind: request.kind, ok: true, result });
    },
  };
}

beforeAll(async () => {
  client = new Client({
    connection: await Connection.connect({ address: temporalAddress() }),
    namespace: temporalNamespace(),
  });
  op = await startTestOperator({}, forging);
});
afterAll(async () => {
  await op?.stop();
  await client?.connection.close();
});

const core = () => kubeConfig().makeApiClient(CoreV1Api);

async function physicalUUIDOf(node: string): Promise<string> {
  const text = (await core().readNode({ name: node })).metadata?.annotations?.[SHARED_DRIVES_ANNOTATION] ?? '[]';
  const decoded = decodeSharedDrivesAnnotation(text);
  if (!decoded.ok) throw new Error(decoded.error.message);
  return decoded.drives[0]!.physicalUUID;
}

/** What the node's ledger holds for the container of `uid`. */
async function ledgerEntry(node: string, uid: string): Promise<ContainerAllocation | undefined> {
  const decoded = decodeLedger((await core().readNode({ name: node })).metadata?.annotations?.[ALLOCATIONS_ANNOTATION]);
  if (!decoded.ok) throw new Error(decoded.message);
  return decoded.ledger.containers[uid]?.allocation;
}

/** The container's first request of `kind` is answered with `forge`'s result instead of the mutex's. */
function forgeFirst(ref: ObjectRef, kind: MutexRequestKind, forge: (physicalUUID: string) => unknown): void {
  forged.set(`${ref.namespace}/${ref.name}/${kind}`, forge);
}

const spec = (nodeName: string) => ({
  nodeName,
  driveCores: 1,
  containerCapacity: 1000,
  driveTypesRatio: { tlc: 1, qlc: 0 },
});

describe('answers from a node mutex that its ledger contradicts', () => {
  it('signs only what the ledger gave, never an allocation in a forged answer', { timeout: 240_000 }, async () => {
    const node = await sharedDrivesNode(DEVICES, 'forged-answer');
    const guid = await createWekaCluster(node, uniqueName('forged-answer'));
    const ref = { namespace: await uniqueNamespace('forged-answer'), name: 'drive-0' };
    const forgedUUID = randomUUID();
    forgeFirst(ref, 'allocate', (physicalUUID) => ({
      virtualDrives: [{ virtualUUID: forgedUUID, physicalUUID, capacityGiB: 1000, serial: 'forged', type: 'TLC' }],
      wekaPort: 35000,
      agentPort: 35100,
    }));
    const { uid } = await createDriveContainer(op, ref, spec(node), guid);

    const ready = await waitForPhase(ref, 'Ready', 120_000);
    const held = await ledgerEntry(node, uid);
    expect(held?.virtualDrives.map((d) => d.virtualUUID)).toEqual(
      ready.status?.allocations?.virtualDrives?.map((d) => d.virtualUUID),
    );
    expect(ready.status?.allocations?.wekaPort).toBe(held?.wekaPort);
    const onDevice = (await showDevice(node, DEVICES[0]!.path)).virtualDrives.map((d) => d.virtualUUID);
    expect(onDevice).not.toContain(forgedUUID);
    expect(onDevice).toEqual(held?.virtualDrives.map((d) => d.virtualUUID));
    expect(await warningEvent(ref, 'AnswerNotInLedger')).toContain('ledger does not hold for it');
  });

  it(
    'asks again until the ledger lets go, when a forged answer says its allocation was released',
    { timeout: 240_000 },
    async () => {
      const node = await sharedDrivesNode(DEVICES, 'forged-release');
      const guid = await createWekaCluster(node, uniqueName('forged-release'));
      const ref = { namespace: await uniqueNamespace('forged-release'), name: 'drive-0' };
      const { uid } = await createDriveContainer(op, ref, spec(node), guid);
      await waitForPhase(ref, 'Ready', 120_000);
      expect(await ledgerEntry(node, uid)).toBeDefined();
      forgeFirst(ref, 'release', () => ({ released: true }));

      await deleteDriveContainer(op, ref, uid);
      await waitGone(ref, 120_000);
      expect(await ledgerEntry(node, uid)).toBeUndefined();
      expect((await showDevice(node, DEVICES[0]!.path)).virtualDrives).toEqual([]);
      expect(await warningEvent(ref, 'AnswerNotInLedger')).toContain('ledger still holds it');
    },
  );
});
