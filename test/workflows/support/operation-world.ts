// A WekaManualOperation's world for its workflow alone: the object, the nodes its selector matches,
// what each node's mutex finds on its devices pass after pass, and its ssdproxy and the health of
// the clusters on it for a rotation, with the activities the
// operation workflow calls stubbed over them. The mutexes answer at once; every request is recorded.
import { randomUUID } from 'node:crypto';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { Condition } from '../../../src/api/index.js';
import type { StaleVirtualDrive } from '../../../src/node/stale-virtual-drives.js';
import {
  deleteRequestedSignal,
  mutexResponseSignal,
  operationWorkflowId,
  WORKFLOW,
  type LifecycleWorkflow,
  type MutexRequest,
  type MutexResponse,
} from '../../../src/protocol.js';
import type {
  OperationSnapshot,
  OperationStatusUpdate,
  SlotState,
  ProxyDisruptionVerdict,
  ProxyRotationPlan,
  StaleOnNode,
  StatusWrite,
  StatusWriteOutcome,
} from '../../../activities/types.js';
import type { SharingMigrationPlan } from '../../../activities/sharing-migration.js';
import { eventually } from '../../support/async.js';

export class OperationWorld {
  readonly ref = { namespace: 'ops', name: 'cleanup' };
  readonly uid = randomUUID();
  deleting = false;
  finalizer = true;
  status: Partial<OperationStatusUpdate> & { conditions: Condition[] } = { conditions: [] };
  /** What each node's devices hold that nothing claims, per find: the last entry repeats. */
  readonly finds = new Map<string, StaleOnNode[]>();
  /** The finds each node's mutex ran. */
  readonly findCount = new Map<string, number>();
  /** The removals asked, per node. */
  readonly removals: { node: string; drives: StaleVirtualDrive[] }[] = [];
  readonly events: string[] = [];
  /** sign-drives: the devices each node offers to be signed; a node missing here fails its proxy. */
  readonly devices = new Map<string, string[]>();
  /** sign-drives: the devices signed, as node:path, in order. */
  readonly signed: string[] = [];
  /** rotate-ssdproxy: the plan's answer (the ssdproxies and their images), or its refusal. */
  rotationPlan: ProxyRotationPlan = { ok: true, targetImage: 'proxy:2', proxies: [] };
  /** rotate-ssdproxy: each node's verdicts, look after look: the last repeats; allowed when none. */
  readonly verdicts = new Map<string, ProxyDisruptionVerdict[]>();
  /** rotate-ssdproxy: nodes whose new proxy does not run. */
  readonly proxyFails = new Set<string>();
  /**
   * rotate-ssdproxy, migrate-to-drive-sharing: what happened, in order: "look node", "rotate node
   * image", "remove member", "slot uid", "sign node serials", "publish node".
   */
  readonly log: string[] = [];
  /** migrate-to-drive-sharing: the plan's answer, or its refusal. */
  migrationPlan: SharingMigrationPlan = { ok: false, reason: 'NoMembers', message: 'no member on whole drives' };
  /** migrate-to-drive-sharing: each moving member's slot, by its uid, look after look: the last repeats. */
  readonly slots = new Map<string, SlotState[]>();
  /** migrate-to-drive-sharing: the WekaCluster uids slotState was asked about. */
  readonly slotClusterUids = new Set<string>();
  /** migrate-to-drive-sharing: the whole drives a member holds when it is removed (none: it was gone). */
  readonly heldAtRemoval = new Map<string, string[]>();
  /** migrate-to-drive-sharing: nodes whose drives the proxy refuses to sign. */
  readonly signFails = new Set<string>();
  /** block-drives, unblock-drives: the mutex's answer (a BlockDrivesResult, or a refusal). */
  blockAnswer: Pick<MutexResponse, 'ok' | 'result' | 'error'> = {
    ok: true,
    result: { serials: [], physicalUUIDs: [], containers: [] },
  };
  /** block-drives: each container's replaced drives still in the ledger, look after look: the last repeats. */
  readonly replacedLeft = new Map<string, string[][]>();
  /** block-drives: the ledger reads, as uid. */
  readonly ledgerReads: string[] = [];
  /** Requests of this kind are taken and never answered (a mutex busy with other work). */
  unanswered: string | undefined;
  readonly unansweredRequests: MutexRequest[] = [];

  constructor(
    readonly client: Client,
    readonly spec: OperationSnapshot['spec'],
    readonly nodes: string[] = ['node-a'],
  ) {}

  start(taskQueue: string): Promise<WorkflowHandle<LifecycleWorkflow>> {
    return this.client.workflow.start<LifecycleWorkflow>(WORKFLOW.manualOperation, {
      taskQueue,
      workflowId: operationWorkflowId(this.uid),
      args: [{ ...this.ref, uid: this.uid }],
    });
  }

  /** Waits until the status shows `wanted` as its phase. */
  phase(wanted: string, timeoutMs = 30_000): Promise<true> {
    return eventually(
      `the operation to be ${wanted}`,
      async () => (this.status.phase === wanted ? true : undefined),
      timeoutMs,
      {
        intervalMs: 50,
      },
    );
  }

  condition(type: string): Condition | undefined {
    return this.status.conditions.find((c) => c.type === type);
  }

  async delete(handle: WorkflowHandle<LifecycleWorkflow>): Promise<void> {
    this.deleting = true;
    await handle.signal(deleteRequestedSignal);
    await handle.result();
  }

  private answer(request: MutexRequest): MutexResponse {
    const base = { requestId: request.requestId, kind: request.kind };
    const { node } = request.payload as { node: string };
    if (request.kind === 'ensure-proxy')
      return this.devices.has(node)
        ? { ...base, ok: true, result: { namespace: 'weka-drives-system', pod: `weka-drives-proxy-${node}` } }
        : { ...base, ok: false, error: { type: 'ProxyNotReady', message: `the ssdproxy of ${node} did not start` } };
    if (request.kind === 'sign-drive') {
      const { devicePath } = request.payload as { devicePath: string };
      this.signed.push(`${node}:${devicePath}`);
      const drive = {
        physicalUUID: `p-${node}-${devicePath}`,
        serial: 'S',
        capacityGiB: 1000,
        type: 'TLC',
        devicePath,
      };
      return { ...base, ok: true, result: { drive, signed: true, mode: 'proxy', erased: [] } };
    }
    if (request.kind === 'publish-drives') {
      this.log.push(`publish ${node}`);
      const count = this.devices.get(node)?.length ?? 0;
      const published = {
        driveCount: count,
        tlcGiB: 1000 * count,
        qlcGiB: 0,
        exclusiveCount: 0,
        found: [],
        foundGiB: 0,
        dropped: [],
        forgotten: [],
        restored: [],
      };
      return { ...base, ok: true, result: published };
    }
    if (request.kind === 'find-stale-drives') {
      const n = this.findCount.get(node) ?? 0;
      this.findCount.set(node, n + 1);
      const script = this.finds.get(node) ?? [{ stale: [], kept: [] }];
      return { ...base, ok: true, result: script[Math.min(n, script.length - 1)] };
    }
    if (request.kind === 'rotate-proxy') {
      const { image } = request.payload as { image: string };
      this.log.push(`rotate ${node} ${image}`);
      if (this.proxyFails.has(node))
        return { ...base, ok: false, error: { type: 'ProxyNotRunning', message: `node ${node}: it does not run` } };
      const previousImage = this.rotationPlan.ok
        ? (this.rotationPlan.proxies.find((p) => p.node === node)?.image ?? '')
        : '';
      return { ...base, ok: true, result: { previousImage, rotated: true } };
    }
    if (request.kind === 'block-drives' || request.kind === 'unblock-drives') return { ...base, ...this.blockAnswer };
    if (request.kind === 'sign-for-sharing') {
      const { serials } = request.payload as { serials: string[] };
      this.log.push(`sign ${node} ${serials.join(',')}`);
      if (this.signFails.has(node))
        return { ...base, ok: false, error: { type: 'DeviceRefused', message: `node ${node}: the proxy refused` } };
      const drives = serials.map((serial) => ({
        physicalUUID: `p-${serial}`,
        serial,
        capacityGiB: 1000,
        type: 'TLC',
        devicePath: `/dev/${serial}`,
      }));
      return { ...base, ok: true, result: { drives, skipped: [] } };
    }
    if (request.kind === 'remove-stale-drives') {
      const { drives } = request.payload as { drives: StaleVirtualDrive[] };
      this.removals.push({ node, drives });
      return { ...base, ok: true, result: { removed: drives.map((d) => d.virtualUUID), spared: [] } };
    }
    return { ...base, ok: false, error: { type: 'Unexpected', message: `unexpected request ${request.kind}` } };
  }

  activities(): Record<string, (input: never) => Promise<unknown>> {
    const stubs: Record<string, (input: never) => unknown> = {
      readOperation: (): OperationSnapshot | null =>
        this.finalizer || !this.deleting
          ? {
              uid: this.uid,
              generation: 1,
              deleting: this.deleting,
              annotations: {},
              spec: this.spec,
              status: { conditions: [...this.status.conditions] },
            }
          : null,
      writeStatus: ({ status, events }: StatusWrite): StatusWriteOutcome => {
        if (status) {
          const { writtenBy: _, ...fields } = status as OperationStatusUpdate & { writtenBy: unknown };
          this.status = { ...this.status, ...fields };
        }
        for (const e of events) this.events.push(`${e.reason}: ${e.message}`);
        return 'applied';
      },
      listSelectedNodes: () => [...this.nodes],
      readNodeAllocation: ({ uid }: { uid: string }) => {
        const looks = this.ledgerReads.filter((u) => u === uid).length;
        this.ledgerReads.push(uid);
        const script = this.replacedLeft.get(uid) ?? [[]];
        const left = script[Math.min(looks, script.length - 1)]!;
        return { virtualDrives: [], replacedVirtualDrives: left.map((virtualUUID) => ({ virtualUUID })) };
      },
      planProxyRotation: () => this.rotationPlan,
      planSharingMigration: () => this.migrationPlan,
      removeMigratingMember: ({ name }: { name: string }) => {
        this.log.push(`remove ${name}`);
        return { serials: this.heldAtRemoval.get(name) ?? [] };
      },
      slotState: ({ clusterUid, slot, uid }: { clusterUid: string; slot: number; uid: string }): SlotState => {
        this.slotClusterUids.add(clusterUid);
        const looks = this.log.filter((l) => l === `slot ${uid}`).length;
        this.log.push(`slot ${uid}`);
        const ready = { name: `slot-${slot}-new`, uid: `new-${slot}`, node: '', phase: 'Ready', wholeDrives: false };
        const script = this.slots.get(uid) ?? [{ leaving: false, replacement: ready }];
        return script[Math.min(looks, script.length - 1)]!;
      },
      proxyDisruptionVerdict: ({ node }: { node: string }): ProxyDisruptionVerdict => {
        const looks = this.log.filter((l) => l === `look ${node}`).length;
        this.log.push(`look ${node}`);
        const script = this.verdicts.get(node) ?? [{ allowed: true, clusters: [] }];
        return script[Math.min(looks, script.length - 1)]!;
      },
      sendMutexRequest: async ({ request }: { request: MutexRequest }) => {
        if (request.kind === this.unanswered) {
          this.unansweredRequests.push(request);
          return;
        }
        await this.client.workflow.getHandle(request.replyTo).signal(mutexResponseSignal, this.answer(request));
      },
      chooseNodeDevices: ({ node }: { node: string }) => {
        const chosen = this.devices.get(node) ?? [];
        return chosen.length > 0 ? { chosen, skipped: [] } : { chosen, skipped: [], nothingChosen: 'no disk chosen' };
      },
      removeFinalizer: () => {
        this.finalizer = false;
      },
    };
    return Object.fromEntries(Object.entries(stubs).map(([name, stub]) => [name, async (input: never) => stub(input)]));
  }
}

export const staleDrive = (n: number, over: Partial<StaleVirtualDrive> = {}): StaleVirtualDrive => ({
  virtualUUID: `0000000${n}-0000-4000-8000-000000000000`,
  physicalUUID: '22222222-2222-4222-8222-222222222222',
  capacityGiB: 100 * n,
  ownerClusterGUID: '44444444-4444-4444-8444-444444444444',
  ...over,
});
