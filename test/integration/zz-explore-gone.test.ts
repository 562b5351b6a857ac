// TEMPORARY exploration (not to be committed): evidence for the node-gone-before-start teardown hang.
import { afterAll, beforeAll, it } from 'vitest';
import { mutexStateQuery, stateQuery } from '../../workflows/definitions.js';
import { removeNode, uniqueNamespace } from './harness.js';
import { createDriveContainer, deleteDriveContainer, readContainer, sharedDrivesNode, startTestOperator, type TestOperator } from './support/operator.js';
import { createWekaCluster } from './support/simulator.js';
import { nodeMutexId } from '../../src/lifecycle/names.js';

let op: TestOperator;
beforeAll(async () => { op = await startTestOperator(); });
afterAll(async () => { await op?.stop(); });

it('explore', async () => {
  const node = await sharedDrivesNode([{ path: '/dev/nvme0n1', capacityGiB: 3840, type: 'TLC' }], 'explore-gone');
  const guid = await createWekaCluster(node, 'explore');
  await removeNode(node);
  const ns = await uniqueNamespace('explore');
  const ref = { namespace: ns, name: 'orphan' };
  const { uid, handle } = await createDriveContainer(op, ref, { nodeName: node, driveCores: 1, containerCapacity: 1000, driveTypesRatio: { tlc: 1, qlc: 0 } }, guid);
  await new Promise((r) => setTimeout(r, 20_000));
  const c = await readContainer(ref);
  console.log('EXPLORE before delete: status', JSON.stringify(c?.status), 'step', JSON.stringify(await handle.query(stateQuery)));
  await deleteDriveContainer(op, ref, uid);
  for (let i = 0; i < 5; i++) {
    await new Promise((r) => setTimeout(r, 20_000));
    const m = op.client.workflow.getHandle(nodeMutexId(node));
    const d = await m.describe();
    console.log(`EXPLORE +${(i + 1) * 20}s: container`, JSON.stringify({ phase: (await readContainer(ref))?.status?.phase, deleting: !!(await readContainer(ref))?.metadata.deletionTimestamp }),
      'step', JSON.stringify((await handle.query(stateQuery)).step),
      'mutex', JSON.stringify(await m.query(mutexStateQuery)),
      'pending', JSON.stringify(d.raw.pendingActivities?.map((a) => ({ type: a.activityType?.name, attempt: a.attempt, lastFailure: a.lastFailure?.message }))));
  }
}, 200_000);
