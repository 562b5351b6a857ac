// Activities of migrate-to-drive-sharing: plan the campaign (the cluster, the size of its members'
// virtual drives read from their whole drives in their pods, no other campaign on it) and record
// the size on the cluster, whose members are made on virtual drives from then on; take a member
// away; say where a slot's member is; and, in the node's mutex, sign the drives a member left for
// the ssdproxy.
import { setsDriveSharing, type WekaContainer } from '../src/api/index.js';
import { FIELD_MANAGER, proxyName, refText, WEKA_POD_CONTAINER, type ObjectRef } from '../src/api/names.js';
import { MIGRATE_TO_DRIVE_SHARING_ACTION } from '../src/api/schemas/wekamanualoperation.js';
import { memberIndex } from '../src/lifecycle/cluster-layout.js';
import { planSharingMigration, type MigrationMember, type WholeDriveInfo } from '../src/lifecycle/sharing-migration.js';
import { signingVerdict } from '../src/node/device-signing.js';
import { clusterWorkflowId, wakeUpSignal, type MutexOutcome, type MutexPayloads } from '../src/protocol.js';
import { listBlockDevicesCall, readDriveCall } from '../src/weka/index.js';
import type { ActivityDeps } from './deps.js';
import { WekaApi } from './kube/weka-api.js';
import { createNodeDecisions } from './node-decisions.js';
import { heldSerialsOn, signDevice } from './sign-drives.js';
import { signalIfRunning } from './signal.js';
import type { SharingSigned, SlotState } from './types.js';
import { wekaCli } from './weka-cli.js';

export type SharingMigrationPlan =
  | { ok: true; clusterUid: string; driveCapacity: number; numDrives: number; members: MigrationMember[] }
  | { ok: false; reason: string; message: string };

export function createSharingMigration(deps: ActivityDeps) {
  const api = new WekaApi(deps.kubeConfig);
  const run = wekaCli(deps.exec);
  const proxies = createNodeDecisions(deps);

  const membersOf = (ref: ObjectRef, clusterUid: string) => api.listClusterMembers(ref, clusterUid);

  /** The size and type of each whole drive of the member, read in its pod. */
  async function wholeDrivesOf(c: WekaContainer): Promise<WholeDriveInfo[]> {
    const serials = c.status?.allocations?.drives ?? [];
    if (serials.length === 0) return [];
    const target = { namespace: c.metadata.namespace!, pod: c.metadata.name!, container: WEKA_POD_CONTAINER };
    const disks = await run(target, listBlockDevicesCall());
    const found: WholeDriveInfo[] = [];
    for (const serial of serials) {
      const disk = disks.find((d) => d.type === 'disk' && d.serial === serial);
      if (!disk) continue;
      const info = await run(target, readDriveCall(disk.path));
      found.push({ serial, capacityGiB: info.capacityGiB, type: info.type });
    }
    return found;
  }

  return {
    /**
     * Plans the campaign (src/lifecycle/sharing-migration.ts) and, when it may go on, records the
     * size on the cluster (status.driveSharing, conditional on the version read: of two campaigns
     * planned at once, one write fails and its activity is retried, and sees the other's claim).
     */
    async planSharingMigration({
      operation,
      cluster,
    }: {
      operation: ObjectRef & { uid: string };
      cluster: string;
    }): Promise<SharingMigrationPlan> {
      const ref = { namespace: operation.namespace, name: cluster };
      const wc = await api.getCluster(ref);
      if (!wc || wc.metadata.deletionTimestamp)
        return {
          ok: false,
          reason: 'ClusterNotFound',
          message: `WekaCluster ${refText(ref)} ${wc ? 'is being deleted' : 'does not exist'}`,
        };
      const all = await membersOf(ref, wc.metadata.uid!);
      const members: MigrationMember[] = all.map((c) => ({
        name: c.metadata.name!,
        uid: c.metadata.uid!,
        node: c.spec.nodeName ?? '',
        wholeDrives: !setsDriveSharing(c.spec),
        deleting: Boolean(c.metadata.deletionTimestamp),
        serials: [...(c.status?.allocations?.drives ?? [])],
      }));
      const live = await api.liveOperations(MIGRATE_TO_DRIVE_SHARING_ACTION);
      const input = {
        cluster,
        template: wc.spec.dynamicTemplate,
        clusterGUID: wc.status?.clusterGUID,
        driveSharing: wc.status?.driveSharing,
        campaign: operation.uid,
        liveCampaigns: live,
        members,
        drives: [] as WholeDriveInfo[],
      };
      // Refusals that need no drive read first; then the drives, which need the members' pods.
      const early = planSharingMigration(input);
      if (!early.ok && early.reason !== 'DrivesUnknown') return early;
      if (!wc.status?.driveSharing) {
        for (const c of all.filter((m) => !setsDriveSharing(m.spec) && !m.metadata.deletionTimestamp)) {
          try {
            input.drives.push(...(await wholeDrivesOf(c)));
          } catch (err) {
            return {
              ok: false,
              reason: 'DrivesUnknown',
              message: `the whole drives of member ${c.metadata.name} could not be read in its pod (${(err as Error).message}): every member must be Ready when the campaign starts`,
            };
          }
        }
      }
      const plan = planSharingMigration(input);
      if (!plan.ok) return plan;
      await api.applyStatus(
        'WekaCluster',
        ref,
        {
          driveSharing: {
            driveCapacity: plan.driveCapacity,
            operation: `${operation.namespace}/${operation.name}`,
            campaign: operation.uid,
          },
        },
        FIELD_MANAGER.migration,
        wc.metadata.resourceVersion,
      );
      return { ...plan, clusterUid: wc.metadata.uid! };
    },

    /**
     * Deletes the member of that uid (its own workflow tears it down), wakes its cluster to make its
     * slot again, and returns the whole drives it held as it went (a growth since the plan counts).
     */
    async removeMigratingMember({
      cluster,
      name,
      uid,
    }: {
      cluster: ObjectRef;
      name: string;
      uid: string;
    }): Promise<{ serials: string[] }> {
      const ref = { namespace: cluster.namespace, name };
      const member = await api.getContainer(ref);
      const serials = member?.metadata.uid === uid ? [...(member.status?.allocations?.drives ?? [])] : [];
      await api.deleteContainerOfUid(ref, uid);
      const wc = await api.getCluster(cluster);
      if (wc?.metadata.uid)
        await signalIfRunning(deps.temporal, clusterWorkflowId(wc.metadata.uid), (h) => h.signal(wakeUpSignal));
      return { serials };
    },

    /**
     * Whether the member `uid` of the slot still exists, and the member made in its place, if any;
     * a WekaCluster of the name with another uid than the planned one is another cluster: gone.
     */
    async slotState({
      cluster,
      clusterUid,
      slot,
      uid,
    }: {
      cluster: ObjectRef;
      clusterUid: string;
      slot: number;
      uid: string;
    }): Promise<SlotState> {
      const wc = await api.getCluster(cluster);
      if (wc?.metadata.uid !== clusterUid) return { leaving: false, clusterGone: true };
      const members = await membersOf(cluster, clusterUid);
      const other = members.find(
        (c) =>
          c.metadata.uid !== uid &&
          !c.metadata.deletionTimestamp &&
          memberIndex(cluster.name, c.metadata.name!) === slot,
      );
      return {
        leaving: members.some((c) => c.metadata.uid === uid),
        ...(other
          ? {
              replacement: {
                name: other.metadata.name!,
                uid: other.metadata.uid!,
                node: other.spec.nodeName ?? '',
                phase: other.status?.phase ?? 'Pending',
                wholeDrives: !setsDriveSharing(other.spec),
              },
            }
          : {}),
      };
    },

    /**
     * Signs the drives of these serials for the ssdproxy, in the node's proxy pod, as a sign-drives
     * operation with allowEraseWekaPartitions would (device-signing.ts): a drive that a container
     * holds, that is added to a Weka cluster or carries virtual drives is never signed, but
     * reported. Executed by the node's mutex; the operation must still exist.
     */
    async signForSharing({ node, serials, operation }: MutexPayloads['sign-for-sharing']): Promise<MutexOutcome> {
      const op = await api.getOperation(operation);
      if (!op || op.metadata.uid !== operation.uid || op.metadata.deletionTimestamp)
        return {
          ok: false,
          error: {
            type: 'SigningNotRequested',
            message: `WekaManualOperation ${refText(operation)} is gone or being deleted: not signing ${serials.join(', ')}`,
          },
        };
      const proxy = await proxies.ensureProxy({ node });
      if (!proxy.ok) return proxy;
      const target = { namespace: deps.operatorNamespace, pod: proxyName(node), container: WEKA_POD_CONTAINER };
      const devices = await run(target, listBlockDevicesCall());
      const held = await heldSerialsOn(api, node);
      const result: SharingSigned = { drives: [], skipped: [] };
      for (const serial of serials) {
        const device = devices.find((d) => d.type === 'disk' && d.serial === serial);
        if (!device) {
          result.skipped.push(`${serial}: no disk with this serial on node ${node}`);
          continue;
        }
        const info = await run(target, readDriveCall(device.path));
        const verdict = signingVerdict({
          mode: 'proxy',
          device,
          info,
          options: { allowEraseWekaPartitions: true },
          heldSerials: held,
        });
        if (verdict.action === 'skip') {
          result.skipped.push(`${serial}: ${verdict.message}`);
          continue;
        }
        const outcome = await signDevice(run, target, 'proxy', info, verdict.action === 'sign' ? verdict.flags : []);
        if ('skipped' in outcome) result.skipped.push(`${serial}: ${outcome.skipped.message}`);
        else result.drives.push(outcome.drive);
      }
      deps.logger.info(
        { node, signed: result.drives.map((d) => d.serial), skipped: result.skipped },
        'signed for sharing',
      );
      return { ok: true, result };
    },
  };
}
