// `weka status --json`: the state of the cluster the pod's Weka container is in, with the fields the
// reference reads (weka/weka-operator internal/services/weka.go, WekaStatusResponse; see
// docs/weka-interface.md, "`weka status --json`"), counted from the cluster state. The simulator
// moves no data and loses no copies: a cluster is OK and its rebuild idle unless a test has set a
// health override on it (`weka-sim cluster-health`, cluster-health.ts). Only the JSON form is
// printed: what the real text form looks like is not modelled.
import { parseArgs, positionals } from './args.js';
import type { ClusterRecord, ContainerRecord, DriveRecord, WekaContext } from './cluster-state.js';
import { listedStatus } from './failed-drives.js';
import { localContainer, memberOf } from './local-container.js';
import { SimRefusal, UsageError, type Change, type ToolOutput } from './outcome.js';

const GIB = 2 ** 30;

interface ActiveOfTotal {
  active: number;
  total: number;
}

interface ProtectionStateEntry {
  MiB: number;
  numFailures: number;
  percent: number;
}

/** What `weka status --json` prints, in the real tool's key order (alphabetical). */
export interface PublicClusterStatus {
  active_alerts_count: number;
  capacity: {
    hot_spare_bytes: number;
    total_bytes: number;
    unavailable_bytes: number;
    unprovisioned_bytes: number;
  };
  containers: {
    active: number;
    backends: ActiveOfTotal;
    clients: ActiveOfTotal;
    computes: ActiveOfTotal;
    drives: ActiveOfTotal;
    total: number;
  };
  drives: ActiveOfTotal;
  hot_spare: number;
  io_status: string;
  rebuild: {
    movingData: boolean;
    progressPercent: number;
    protectionState: ProtectionStateEntry[];
  };
  status: string;
  stripe_data_drives: number;
  stripe_protection_drives: number;
}

/** `weka status --json`, run in a pod whose Weka container is a member of a cluster. */
export function runStatus(args: readonly string[], ctx: WekaContext): ToolOutput {
  const parsed = parseArgs(args, { flags: ['--json'] });
  positionals(parsed, []);
  if (!parsed.flags.has('--json'))
    throw new UsageError('the simulator prints only `weka status --json`: the text form is not modelled');
  const changes: Change[] = [];
  const member = memberOf(ctx.clusters, localContainer(ctx, changes));
  if (!member) throw new SimRefusal('this container is not in a cluster');
  const cluster = ctx.clusters.clusters.find((c) => c.guid === member.clusterGUID);
  if (!cluster)
    throw new Error(`container ${member.containerId} is in cluster ${member.clusterGUID}, which has no record`);
  const containers = ctx.clusters.containers.filter((c) => c.clusterGUID === cluster.guid);
  const ids = new Set(containers.map((c) => c.containerId));
  // A drive counts as it lists: one whose device failed is not active.
  const drives = ctx.clusters.drives
    .filter((d) => ids.has(d.containerId))
    .map((d) => ({ ...d, status: listedStatus(d, ctx.clusters) }));
  return { stdout: `${JSON.stringify(clusterStatus(cluster, containers, drives), null, 2)}\n`, changes };
}

/**
 * The figures, from what the state holds. Every container is a drive container (the operator's
 * members are; the state knows no compute or client containers), so a backend; one is active
 * while it is ACTIVE and its process runs (its pod is not gone). A drive is active while it lists
 * ACTIVE (not deactivated, its device not failed).
 * Capacity is the drives' raw size (no protection overhead, no filesystems, no hot spares are
 * modelled): the active drives' in total_bytes, all of it unprovisioned, the inactive drives' in
 * unavailable_bytes. The simulator sets no stripe width, protection level or hot spare (the
 * operator runs none of those commands), so all three read 0.
 */
export function clusterStatus(
  cluster: ClusterRecord,
  containers: readonly ContainerRecord[],
  drives: readonly DriveRecord[],
): PublicClusterStatus {
  const running = containers.filter((c) => c.status === 'ACTIVE' && !c.processGone).length;
  const driveContainers = () => ({ active: running, total: containers.length });
  const activeDrives = drives.filter((d) => d.status === 'ACTIVE');
  const bytes = (list: readonly DriveRecord[]) => list.reduce((sum, d) => sum + d.sizeGiB * GIB, 0);
  const totalBytes = bytes(activeDrives);
  const health = cluster.health ?? {};
  return {
    active_alerts_count: 0,
    capacity: {
      hot_spare_bytes: 0,
      total_bytes: totalBytes,
      unavailable_bytes: bytes(drives) - totalBytes,
      unprovisioned_bytes: totalBytes,
    },
    containers: {
      active: running,
      backends: driveContainers(),
      clients: { active: 0, total: 0 },
      computes: { active: 0, total: 0 },
      drives: driveContainers(),
      total: containers.length,
    },
    drives: { active: activeDrives.length, total: drives.length },
    hot_spare: 0,
    io_status: 'STARTED',
    rebuild: {
      movingData: health.movingData ?? false,
      progressPercent: health.progressPercent ?? 0,
      protectionState: protectionState(health.protection),
    },
    status: health.status ?? 'OK',
    stripe_data_drives: 0,
    stripe_protection_drives: 0,
  };
}

/**
 * How much of the data has lost how many copies, one entry per failure count as the real tool
 * lists it. The simulator holds no data, so every MiB figure is 0: the percentages are what it says.
 */
function protectionState(lost: { numFailures: number; percent: number } | undefined): ProtectionStateEntry[] {
  if (!lost) return [{ MiB: 0, numFailures: 0, percent: 100 }];
  return [
    { MiB: 0, numFailures: 0, percent: Math.round((100 - lost.percent) * 1e6) / 1e6 },
    { MiB: 0, numFailures: lost.numFailures, percent: lost.percent },
  ];
}
