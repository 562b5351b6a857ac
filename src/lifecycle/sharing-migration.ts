// migrate-to-drive-sharing decided on plain data: whether a WekaCluster on whole drives may move to
// virtual drives, the size of each virtual drive its members get, and which members still move, in
// slot order. A member moves by leaving (its whole drives phase out of Weka) and being made again on
// virtual drives of the same size, carved from those drives once they are signed for the ssdproxy.
import { MAX_DRIVE_CAPACITY_GIB, MAX_NODE_CAPACITY_GIB } from '../allocation/constants.js';
import { setsDriveSharing, type DriveSharingStatus, type DynamicTemplate } from '../api/index.js';
import { memberIndex } from './cluster-layout.js';

export interface MigrationMember {
  name: string;
  uid: string;
  node: string;
  /** Its spec asks for whole drives (neither driveCapacity nor containerCapacity). */
  wholeDrives: boolean;
  deleting: boolean;
  /** The serials of the whole drives it holds (its status's allocation). */
  serials: string[];
}

/** A whole drive as weka-sign-drive reads it in its member's pod. */
export interface WholeDriveInfo {
  serial: string;
  capacityGiB: number;
  type: 'TLC' | 'QLC';
}

export interface MigrationInput {
  cluster: string;
  template: DynamicTemplate | undefined;
  clusterGUID: string | undefined;
  driveSharing: DriveSharingStatus | undefined;
  /** This operation's uid. */
  campaign: string;
  /** Operations of this action that have not ended, by uid: namespace/name. */
  liveCampaigns: ReadonlyMap<string, string>;
  members: readonly MigrationMember[];
  /** The whole drives of the members that move. */
  drives: readonly WholeDriveInfo[];
}

export type MigrationPlan =
  | { ok: true; driveCapacity: number; numDrives: number; members: MigrationMember[] }
  | { ok: false; reason: string; message: string };

const refuse = (reason: string, message: string): MigrationPlan => ({ ok: false, reason, message });

export function planSharingMigration(o: MigrationInput): MigrationPlan {
  const t = o.template ?? {};
  if (setsDriveSharing(t))
    return refuse(
      'NotWholeDrive',
      `WekaCluster ${o.cluster} shares drives already: its dynamicTemplate sets ${t.driveCapacity !== undefined ? 'driveCapacity' : 'containerCapacity'}`,
    );
  const numDrives = t.numDrives;
  if (numDrives === undefined || numDrives < 1)
    return refuse(
      'NotWholeDrive',
      `WekaCluster ${o.cluster} asks for no whole drives: its dynamicTemplate sets no numDrives`,
    );
  if (!o.clusterGUID)
    return refuse(
      'ClusterNotFormed',
      `WekaCluster ${o.cluster} has not formed its Weka cluster yet: a cluster is moved member by member while Weka keeps its data, so it must be formed first`,
    );
  const holder = o.driveSharing?.campaign;
  if (holder !== undefined && holder !== o.campaign && o.liveCampaigns.has(holder))
    return refuse(
      'AnotherCampaignRunning',
      `migrate-to-drive-sharing ${o.liveCampaigns.get(holder)} is moving WekaCluster ${o.cluster}: one campaign at a time; create this one again once it has ended`,
    );
  const slot = (m: MigrationMember) => memberIndex(o.cluster, m.name) ?? Number.MAX_SAFE_INTEGER;
  const members = o.members
    .filter((m) => m.wholeDrives && !m.deleting)
    .sort((a, b) => slot(a) - slot(b) || a.name.localeCompare(b.name));
  if (members.length === 0)
    return o.driveSharing
      ? refuse(
          'AlreadyMigrated',
          `every member of WekaCluster ${o.cluster} is on virtual drives already (migrated by ${o.driveSharing.operation})`,
        )
      : refuse('NoMembers', `WekaCluster ${o.cluster} has no member on whole drives to move`);
  // A campaign taken up again keeps the size the first one chose: every member alike.
  if (o.driveSharing) return { ok: true, driveCapacity: o.driveSharing.driveCapacity, numDrives, members };

  const qlc = o.drives.filter((d) => d.type !== 'TLC');
  if (qlc.length > 0)
    return refuse(
      'NotTLC',
      `whole drives ${qlc.map((d) => d.serial).join(', ')} are ${qlc[0]!.type}: virtual drives of one size (numDrives x driveCapacity) are carved from TLC drives only, so this cluster cannot be moved`,
    );
  const missing = members.flatMap((m) => m.serials).filter((s) => !o.drives.some((d) => d.serial === s));
  if (missing.length > 0 || members.some((m) => m.serials.length === 0))
    return refuse(
      'DrivesUnknown',
      `the size of every member's whole drives must be known to move them; not read: ${missing.join(', ') || 'a member holds no drive'}`,
    );
  const driveCapacity = Math.min(...o.drives.map((d) => d.capacityGiB), MAX_DRIVE_CAPACITY_GIB);
  if (numDrives * driveCapacity > MAX_NODE_CAPACITY_GIB)
    return refuse(
      'TooLarge',
      `numDrives x the whole drives' size (${numDrives} x ${driveCapacity} GiB) is more than a container may hold (${MAX_NODE_CAPACITY_GIB} GiB)`,
    );
  return { ok: true, driveCapacity, numDrives, members };
}
