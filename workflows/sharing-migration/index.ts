// The migrate-to-drive-sharing operation: move a WekaCluster on whole drives to virtual drives, one
// member at a time, in slot order. Before a member moves, every Weka cluster with a container on
// its node must be healthy. The member is then taken away: its own teardown phases its whole drives
// out of Weka (Weka moves their data to the other members), removes its container from the cluster
// and signs the drives again, wiping the cluster's claim. Its drives are signed for the ssdproxy and
// published through the node's mutex; the cluster has made the slot's member again, on numDrives
// virtual drives of the whole drives' size (status.driveSharing), and that member joins once the
// capacity is there. Once it is Ready and the clusters on the node are healthy, the next member
// moves. Every step is durable: a crash resumes at the step it stopped in. A WekaCluster deleted
// meanwhile (known by its uid: one created again under its name is another) stops the campaign at
// the member that moves, before its drives are signed for sharing.
import { sleep } from '@temporalio/workflow';
import type { OperationSnapshot, SharingSigned, SlotState } from '../../activities/types.js';
import { backoffDelay } from '../../src/backoff.js';
import { memberIndex } from '../../src/lifecycle/cluster-layout.js';
import type { MigrationMember } from '../../src/lifecycle/sharing-migration.js';
import { nodeMutexId } from '../../src/protocol.js';
import { kube, kubeLocal, weka } from '../activities.js';
import { waitForHealthyClusters } from '../healthy-clusters.js';
import { fail, refuse } from '../manual-operation/end.js';
import type { OperationRun } from '../manual-operation/run.js';
import { signedDriveRow, type NodeResult } from '../operation-status.js';

/** How soon a member's move is looked at again: 2 s, doubling up to a minute. */
export const MOVE_LOOK = { initialMs: 2_000, maxMs: 60_000, jitter: false } as const;

export async function migrateToDriveSharing(run: OperationRun, op: OperationSnapshot): Promise<void> {
  const cluster = op.spec.payload?.migrateToDriveSharingPayload?.cluster;
  if (!cluster)
    return refuse(run, 'InvalidPayload', 'migrate-to-drive-sharing needs payload.migrateToDriveSharingPayload.cluster');
  const ref = { namespace: run.ref.namespace, name: cluster };
  await run.status.enter('Running', `planning: WekaCluster ${cluster}, its members on whole drives, no other campaign`);
  const plan = await weka.planSharingMigration({ operation: { ...run.ref, uid: run.uid }, cluster });
  if (!plan.ok) return refuse(run, plan.reason, plan.message);
  const { clusterUid, driveCapacity, numDrives, members } = plan;
  await run.status.condition(
    'Accepted',
    'True',
    'Accepted',
    `WekaCluster ${cluster}: ${members.length} members to move from whole drives to ${numDrives} virtual drives of ${driveCapacity} GiB each, one at a time`,
  );
  for (const m of members) await run.status.result(rowOf(ref.namespace, m, 'Pending'));
  for (const [i, m] of members.entries()) {
    const at = `member ${i + 1} of ${members.length}, ${m.name} on ${m.node}`;
    const base = rowOf(ref.namespace, m);
    await waitForHealthyClusters(run, base, `${at}: before it moves`, { migration: 'Waiting' });
    const moved = await moveMember(run, ref, clusterUid, m, base, at);
    if (!moved.ok) {
      await run.status.result({ ...base, migration: 'Failed', error: moved.message });
      const left = members.length - i - 1;
      return fail(
        run,
        moved.reason,
        `${moved.message}; the campaign stopped there (${i} members moved, ${left} not started)`,
        `stopped at ${m.name}: ${moved.message}; waiting for deletion`,
      );
    }
    const after = { ...base, drives: moved.drives, member: `${ref.namespace}/${moved.member}` };
    await waitForHealthyClusters(run, after, `${at}: after it moved`, { migration: 'Waiting' });
    await run.status.result({ ...after, migration: 'Done' });
    await run.status.event(
      'Normal',
      'MemberMigrated',
      `${m.name} on ${m.node} moved to drive sharing: ${moved.member} runs on ${numDrives} virtual drives of ${driveCapacity} GiB`,
    );
  }
  const message = `WekaCluster ${cluster}: ${members.length} members moved to drive sharing, each on ${numDrives} virtual drives of ${driveCapacity} GiB`;
  await run.status.condition('Succeeded', 'True', 'Migrated', message, 'Normal');
  await run.status.enter('Succeeded', `${message}; waiting for deletion`);
}

type Moved =
  | { ok: true; member: string; drives: NonNullable<NodeResult['drives']> }
  | { ok: false; reason: string; message: string };

/** Takes the member away, signs its drives for the proxy, and waits for its slot's new member to be Ready. */
async function moveMember(
  run: OperationRun,
  ref: { namespace: string; name: string },
  clusterUid: string,
  m: MigrationMember,
  base: NodeResult,
  at: string,
): Promise<Moved> {
  const slot = memberIndex(ref.name, m.name) ?? -1;
  await run.status.result({ ...base, migration: 'Draining' });
  await run.status.enter('Running', `${at}: its whole drives phase out of Weka and it leaves the cluster`);
  await run.status.event(
    'Normal',
    'MemberMoving',
    `${m.name} on ${m.node} leaves to move to drive sharing: Weka phases its whole drives (${m.serials.join(', ')}) out`,
  );
  const held = await kube.removeMigratingMember({ cluster: ref, name: m.name, uid: m.uid });
  // What it held as it went (a growth since the plan counts), and what the plan saw (a retry finds it gone).
  const serials = [...new Set([...m.serials, ...held.serials])].sort();
  let gone = false;
  const slotState = async (): Promise<SlotState> => {
    const state = await kubeLocal.slotState({ cluster: ref, clusterUid, slot, uid: m.uid });
    gone = state.clusterGone === true;
    return state;
  };
  const clusterGone: Moved = {
    ok: false,
    reason: 'ClusterGone',
    message: `WekaCluster ${ref.name} was deleted while ${m.name} moved; its drives stay as its teardown left them`,
  };
  await until(run, base, `${at}: waiting for ${m.name} to leave (its drives phase out of Weka)`, async () => {
    const state = await slotState();
    return gone || !state.leaving;
  });
  if (gone) return clusterGone;

  await run.status.result({ ...base, migration: 'Signing' });
  await run.status.enter('Running', `${at}: signing ${serials.join(', ')} for the ssdproxy`);
  const operation = { ...run.ref, uid: run.uid };
  const answer = await run.mutex.call(
    nodeMutexId(m.node),
    'sign-for-sharing',
    { node: m.node, serials, operation },
    m.node,
  );
  if (!answer.ok)
    return {
      ok: false,
      reason: answer.error?.type ?? 'SigningFailed',
      message: answer.error?.message ?? 'signing failed',
    };
  const signed = answer.result as SharingSigned;
  if (signed.skipped.length > 0)
    await run.status.event(
      'Warning',
      'DrivesNotSigned',
      `node ${m.node}: not signed for the ssdproxy: ${signed.skipped.join('; ')}; the new member takes what the node's shared drives offer`,
    );
  const published = await run.mutex.call(nodeMutexId(m.node), 'publish-drives', { node: m.node }, m.node);
  if (!published.ok)
    return {
      ok: false,
      reason: published.error?.type ?? 'PublishFailed',
      message: `publishing the drives of node ${m.node}: ${published.error?.message ?? 'failed'}`,
    };
  const drives = signed.drives.map(signedDriveRow);

  const joining = { ...base, drives, migration: 'Joining' };
  await run.status.result(joining);
  let member = '';
  await until(run, joining, `${at}: waiting for the slot's new member on virtual drives to be Ready`, async () => {
    const r = (await slotState()).replacement;
    if (gone) return true;
    if (!r || r.wholeDrives || r.phase !== 'Ready') return false;
    member = r.name;
    return true;
  });
  if (gone) return clusterGone;
  return { ok: true, member, drives };
}

/** Looks until `done` says so, as long as it takes, with what it waits for on the node's result. */
async function until(run: OperationRun, row: NodeResult, waitingFor: string, done: () => Promise<boolean>) {
  let shown = false;
  for (let looks = 1; !(await done()); looks++) {
    if (!shown) {
      shown = true;
      await run.status.result({ ...row, waitingFor });
      await run.status.enter('Running', waitingFor);
    }
    await sleep(backoffDelay(looks, MOVE_LOOK));
  }
}

function rowOf(namespace: string, m: MigrationMember, migration?: string): NodeResult {
  return { node: m.node, member: `${namespace}/${m.name}`, ...(migration ? { migration } : {}) };
}
