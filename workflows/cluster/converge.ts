// One pass of bringing a WekaCluster's members to its spec, and the forming of the Weka cluster
// from them once one can be formed.
import { WEKA_POD_CONTAINER } from '../../src/api/names.js';
import { deleteRequestedSignal, specChangedSignal, wakeUpSignal } from '../../src/protocol.js';
import { planMembers, servingMembersAtWork } from '../../src/lifecycle/cluster-layout.js';
import { kube, kubeLocal, weka } from '../activities.js';
import { startDeviceSetPass } from './device-set-pass.js';
import { bySlot, keepDisruptionBudget, recordReplacement, startMembers, tellMembers } from './members.js';
import type { ClusterRun } from './run.js';

/** What one convergence pass found; `refused` says which members wait for a person, if any do. */
export interface Pass {
  serving: boolean;
  settled: boolean;
  step: string;
  refused?: string;
}

/**
 * One pass of bringing the members to the spec (src/lifecycle/cluster-layout.ts planMembers):
 * replace members whose node is lost, add missing slots, take the highest surplus member away,
 * raise capacities to the template's. Says whether every member the cluster counts on is Ready
 * (`serving`: members going away do not count) and whether nothing was left to do (`settled`).
 */
export async function converge(run: ClusterRun): Promise<Pass> {
  const { ref, input, status } = run;
  const spec = run.cluster.spec;
  const count = spec.dynamicTemplate?.driveContainers ?? 0;
  if (count === 0) {
    const why = 'dynamicTemplate.driveContainers is not set';
    await status.condition('ContainersPlaced', 'False', 'NoDriveContainers', why, 'Warning');
    return { serving: false, settled: false, step: why };
  }
  const view = await kubeLocal.clusterView({ ref, uid: input.uid });
  const selected = view.nodes.filter((n) => n.selected).map((n) => n.name);
  startDeviceSetPass(run, selected);
  const plan = planMembers({
    cluster: ref.name,
    count,
    template: {
      ...(spec.dynamicTemplate?.containerCapacity !== undefined
        ? { containerCapacity: spec.dynamicTemplate.containerCapacity }
        : {}),
      ...(spec.dynamicTemplate?.numDrives !== undefined ? { numDrives: spec.dynamicTemplate.numDrives } : {}),
    },
    members: view.members,
    nodes: view.nodes,
  });
  for (const r of plan.remove) {
    await kube.removeClusterMember({ ref: { namespace: ref.namespace, name: r.name }, uid: r.uid });
    await tellMembers([r], deleteRequestedSignal);
    if (r.reason === 'NodeLost') await recordReplacement(run, r, plan, view.members);
  }
  for (const g of plan.grow) {
    const { name, uid, ...capacity } = g;
    await kube.growClusterMember({ ref: { namespace: ref.namespace, name }, uid, capacity });
    await tellMembers([{ uid }], specChangedSignal);
  }
  let members = view.members.map((m) => ({ name: m.name, uid: m.uid }));
  if (plan.create.length > 0) {
    await status.enter(status.phase, `creating ${plan.create.map((c) => `${c.name} on ${c.node}`).join(', ')}`);
    members = await kube.createClusterMembers({ ref, uid: input.uid, create: plan.create });
    await startMembers(run, members);
  }
  if (plan.unplaced.length > 0) {
    const why = `no selected node is Ready for slot(s) ${plan.unplaced.join(', ')}`;
    await status.condition('ContainersPlaced', 'False', 'NoMatchingNodes', why, 'Warning');
    return { serving: false, settled: false, step: why };
  }
  // A member that waits for a person holds the cluster back until one acts.
  const refusedNames = view.members.filter((m) => plan.serving.includes(m.name) && m.phase === 'Refused');
  const withRefused = (pass: Pass): Pass =>
    refusedNames.length === 0
      ? pass
      : {
          ...pass,
          settled: false,
          refused: `drive containers ${refusedNames.map((m) => m.name).join(', ')} are refused (their Stalled condition says why): ${pass.step}`,
        };
  const placed = `${plan.serving.length} drive containers`;
  if (!status.conditions.some((c) => c.type === 'ContainersPlaced' && c.status === 'True' && c.message === placed))
    await status.condition('ContainersPlaced', 'True', 'ContainersPlaced', placed);
  if (!status.clusterGUID) {
    // Formed of every member that holds its allocation, waits for the cluster and whose pod runs,
    // as Weka forms one of its initial containers: a member still waiting for capacity, or whose
    // pod was evicted, holds nobody up, and joins later through the others.
    const stems: { name: string; uid: string }[] = [];
    for (const m of [...view.members].sort((x, y) => bySlot(run, x.name, y.name)))
      if (plan.serving.includes(m.name) && m.phase === 'WaitingForCluster')
        if (await kubeLocal.memberPodRunning({ namespace: ref.namespace, name: m.name, uid: m.uid }))
          stems.push({ name: m.name, uid: m.uid });
    const waiting = 'waiting for an allocated member with a running pod, to form the cluster from it';
    if (stems.length === 0) return withRefused({ serving: false, settled: false, step: waiting });
    await form(run, stems);
  }
  if (plan.create.length > 0 || plan.grow.length > 0 || formedNow(run)) await tellMembers(members, wakeUpSignal);
  await keepDisruptionBudget(run, plan.serving.length);
  const phases = new Map(view.members.map((m) => [m.name, m.phase]));
  const ready = plan.serving.filter((n) => phases.get(n) === 'Ready').length;
  const serving = ready === plan.serving.length;
  // A member grows while Ready: the cluster is at work until each has what its template asks.
  const atWork = servingMembersAtWork(view.members, plan.serving);
  const doing = [
    plan.create.length > 0 ? `adding ${plan.create.length}` : '',
    plan.remove.length > 0 ? `taking away ${plan.remove.map((r) => r.name).join(', ')}` : '',
    plan.grow.length > 0 ? `growing ${plan.grow.map((g) => g.name).join(', ')}` : '',
    plan.grow.length === 0 && atWork.length > 0 ? `${atWork.join(', ')} reaching their spec` : '',
  ].filter((x) => x !== '');
  const step = `${ready} of ${plan.serving.length} drive containers Ready${doing.length ? `; ${doing.join('; ')}` : ''}`;
  return withRefused({ serving, settled: doing.length === 0, step });
}

/**
 * Forms the Weka cluster of the members' containers, from the first one's running pod (or finds
 * it formed).
 */
async function form(run: ClusterRun, stems: { name: string; uid: string }[]): Promise<void> {
  const { ref, status } = run;
  const target = { namespace: ref.namespace, pod: stems[0]!.name, container: WEKA_POD_CONTAINER };
  await status.enter('Forming', `forming the Weka cluster of ${stems.map((m) => m.name).join(', ')}`);
  status.clusterGUID = await weka.formWekaCluster({ ref, members: stems, target });
  await status.condition('Formed', 'True', 'Formed', `Weka cluster ${status.clusterGUID}`, 'Normal');
}

/** Whether the cluster was formed since the last look: its members then learn its GUID. */
function formedNow(run: ClusterRun): boolean {
  const now = Boolean(run.status.clusterGUID) && !run.formedBefore;
  run.formedBefore = Boolean(run.status.clusterGUID);
  return now;
}
