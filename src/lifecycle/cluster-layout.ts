// How a WekaCluster lays out its drive containers: `driveContainers` of them, in slots 0..n-1, the
// first layout spread round robin over the nodes its selector matches (sorted by name), each
// carrying the template's capacity fields so that `kubectl get wekacontainers` shows what each one
// asks for. planMembers says what brings the members to the spec from where they are: members to
// create (new slots, and replacements of members whose node is lost), the highest-numbered member
// to take away when the cluster shrinks (one at a time), and members whose capacity to raise.
import {
  setsDriveSharing,
  type DriveSharingStatus,
  type DynamicTemplate,
  type WekaClusterSpec,
  type WekaContainerSpec,
} from '../api/index.js';

export function clusterContainerName(cluster: string, index: number): string {
  return `${cluster}-drive-${index}`;
}

/** The slot of a member named by clusterContainerName, or by it plus "-<k>" for a replacement. */
export function memberIndex(cluster: string, name: string): number | undefined {
  if (!name.startsWith(`${cluster}-drive-`)) return undefined;
  const m = /^(\d+)(?:-\d+)?$/.exec(name.slice(cluster.length + '-drive-'.length));
  return m ? Number(m[1]) : undefined;
}

/** What a member made now asks for: its template's, with the virtual drives a migration chose. */
export function memberTemplate(
  template: DynamicTemplate | undefined,
  driveSharing: Pick<DriveSharingStatus, 'driveCapacity'> | undefined,
): DynamicTemplate {
  const t = template ?? {};
  if (!driveSharing || setsDriveSharing(t)) return t;
  return { ...t, driveCapacity: driveSharing.driveCapacity };
}

/** A member's spec; a cluster moved to drive sharing (status.driveSharing) makes it on virtual drives. */
export function clusterContainerSpec(
  spec: WekaClusterSpec,
  cluster: string,
  node: string,
  driveSharing?: DriveSharingStatus,
): WekaContainerSpec {
  const t = memberTemplate(spec.dynamicTemplate, driveSharing);
  return {
    mode: 'drive',
    nodeName: node,
    cluster,
    image: spec.image,
    ...(spec.imagePullSecret !== undefined ? { imagePullSecret: spec.imagePullSecret } : {}),
    ...(t.driveCores !== undefined ? { driveCores: t.driveCores } : {}),
    ...(t.numDrives !== undefined ? { numDrives: t.numDrives } : {}),
    ...(t.driveCapacity !== undefined ? { driveCapacity: t.driveCapacity } : {}),
    ...(t.containerCapacity !== undefined ? { containerCapacity: t.containerCapacity } : {}),
    ...(t.driveTypesRatio !== undefined ? { driveTypesRatio: t.driveTypesRatio } : {}),
  } as WekaContainerSpec;
}

/** The capacity fields a member may grow by: the template's, reaching every member. */
export interface GrowableCapacity {
  containerCapacity?: number;
  numDrives?: number;
}

export interface ClusterMemberView extends GrowableCapacity {
  name: string;
  uid: string;
  node: string;
  phase: string;
  deleting: boolean;
  /** What the member holds (its status's allocation), for the record when it is replaced. */
  holds: string;
  /**
   * Whether the member still works toward its spec: its status is of an earlier generation (a
   * growth asked of it is not yet seen), or says Reconciling. A Ready member can be at work: it
   * grows in place. Absent: not known, read as not at work.
   */
  atWork?: boolean;
}

/** The members the cluster counts on (`serving`) that are Ready and still work toward their spec. */
export function servingMembersAtWork(members: readonly ClusterMemberView[], serving: readonly string[]): string[] {
  return members.filter((m) => serving.includes(m.name) && m.phase === 'Ready' && m.atWork === true).map((m) => m.name);
}

export interface ClusterNodeView {
  name: string;
  /** The cluster's nodeSelector matches it. */
  selected: boolean;
  ready: boolean;
  /** Why the node counts as lost (NotReady past the grace period); absent while it does not. */
  lost?: string;
}

export interface MemberToCreate {
  name: string;
  index: number;
  node: string;
}

export interface MemberToRemove {
  name: string;
  uid: string;
  reason: 'ScaledDown' | 'NodeLost';
  message: string;
}

export interface MemberPlan {
  create: MemberToCreate[];
  remove: MemberToRemove[];
  grow: Array<{ name: string; uid: string } & GrowableCapacity>;
  /** Slots no usable node can take now (no selected node is Ready and not lost). */
  unplaced: number[];
  /** The members that make up the cluster once the plan is carried out and they are Ready. */
  serving: string[];
}

export function planMembers(o: {
  cluster: string;
  count: number;
  template: GrowableCapacity;
  members: readonly ClusterMemberView[];
  nodes: readonly ClusterNodeView[];
}): MemberPlan {
  const nodes = new Map(o.nodes.map((n) => [n.name, n]));
  const lostWhy = (m: ClusterMemberView): string | undefined => {
    const node = nodes.get(m.node);
    return node ? node.lost : `node ${m.node} no longer exists`;
  };
  const slot = (m: ClusterMemberView) => memberIndex(o.cluster, m.name) ?? Number.MAX_SAFE_INTEGER;
  const live = o.members.filter((m) => !m.deleting);
  const remove: MemberToRemove[] = [];
  const healthy: ClusterMemberView[] = [];
  for (const m of live) {
    const why = lostWhy(m);
    if (why === undefined) healthy.push(m);
    else remove.push({ name: m.name, uid: m.uid, reason: 'NodeLost', message: why });
  }

  const selected = o.nodes.filter((n) => n.selected).sort((a, b) => a.name.localeCompare(b.name));
  const usable = selected.filter((n) => n.ready && n.lost === undefined);
  const load = new Map(usable.map((n) => [n.name, 0]));
  for (const m of healthy) if (load.has(m.node)) load.set(m.node, load.get(m.node)! + 1);
  const taken = new Set(o.members.map((m) => m.name));
  const filled = new Set(healthy.map(slot));
  const create: MemberToCreate[] = [];
  const unplaced: number[] = [];
  for (let index = 0; index < o.count; index++) {
    if (filled.has(index)) continue;
    const preferred = selected.length > 0 ? selected[index % selected.length]! : undefined;
    const node =
      preferred && load.has(preferred.name)
        ? preferred.name
        : [...load.entries()].sort((a, b) => a[1] - b[1] || a[0].localeCompare(b[0]))[0]?.[0];
    if (node === undefined) {
      unplaced.push(index);
      continue;
    }
    let name = clusterContainerName(o.cluster, index);
    for (let k = 1; taken.has(name); k++) name = `${clusterContainerName(o.cluster, index)}-${k}`;
    taken.add(name);
    load.set(node, load.get(node)! + 1);
    create.push({ name, index, node });
  }

  // Shrinking: the highest-numbered member above the count goes, once none is still going.
  const surplus = healthy
    .filter((m) => slot(m) >= o.count)
    .sort((a, b) => slot(b) - slot(a) || b.name.localeCompare(a.name));
  const going = o.members.some((m) => m.deleting && slot(m) >= o.count);
  if (surplus.length > 0 && !going) {
    const m = surplus[0]!;
    remove.push({
      name: m.name,
      uid: m.uid,
      reason: 'ScaledDown',
      message: `driveContainers is ${o.count}: the highest-numbered member goes first, one at a time`,
    });
  }

  const grow = healthy.flatMap((m) => {
    const up: GrowableCapacity = {};
    if (o.template.containerCapacity !== undefined && o.template.containerCapacity > (m.containerCapacity ?? 0))
      up.containerCapacity = o.template.containerCapacity;
    if (o.template.numDrives !== undefined && o.template.numDrives > (m.numDrives ?? 0))
      up.numDrives = o.template.numDrives;
    return Object.keys(up).length > 0 ? [{ name: m.name, uid: m.uid, ...up }] : [];
  });

  const serving = [...healthy.filter((m) => slot(m) < o.count).map((m) => m.name), ...create.map((c) => c.name)];
  return { create, remove, grow, unplaced, serving };
}
