// A drive container's world for its workflow alone: the object, its node and the node's ledger, the
// Weka side, as plain data, with the activities the drive-container workflow calls stubbed over
// it. The node's mutex answers at once (its own workflow is tested elsewhere); every call is
// recorded, so that a test can say what the workflow did and what it did not. An activity the
// world does not stub fails the workflow's step loudly (the worker has no such activity).
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { Condition } from '../../../src/api/index.js';
import type { ContainerAllocation } from '../../../src/allocation/types.js';
import type { ObjectRef } from '../../../src/api/names.js';
import { mutexResponseSignal, type MutexRequest, type MutexResponse } from '../../../src/protocol.js';
import type {
  ContainerSnapshot,
  ExecTargetRef,
  NodeDrivesVerified,
  StatusUpdate,
  StatusWrite,
  StatusWriteOutcome,
} from '../../../activities/types.js';

export interface WorldContainer {
  uid: string;
  generation: number;
  deleting: boolean;
  annotations: Record<string, string>;
  finalizer: boolean;
  spec: ContainerSnapshot['spec'];
  status: StatusUpdate & { conditions: Condition[] };
}

/** One allocation the node's mutex gives a container: one 1000 GiB virtual drive, one port block. */
export const ONE_DRIVE: ContainerAllocation = {
  virtualDrives: [
    {
      virtualUUID: '11111111-1111-4111-8111-111111111111',
      physicalUUID: '22222222-2222-4222-8222-222222222222',
      serial: 'SERIAL-0',
      capacityGiB: 1000,
      type: 'TLC',
    },
  ],
  wekaPort: 14000,
  agentPort: 14100,
};

export const CLUSTER_GUID = '33333333-3333-4333-8333-333333333333';

export class ContainerWorld {
  readonly ref: ObjectRef;
  container: WorldContainer | null;
  readonly nodes = new Set<string>();
  /** The node's ledger: what its mutex gave each uid. */
  readonly ledger = new Map<string, ContainerAllocation>();
  /** What the node's mutex answers an allocate with. */
  allocation: ContainerAllocation = ONE_DRIVE;
  /** While set, the node's mutex refuses an allocate for lack of capacity, saying this. */
  noCapacity: string | undefined;
  /** While set, the node's mutex answers a holder that a drive of it on a blocked drive has no replacement, saying this. */
  noReplacement: string | undefined;
  /** The cluster a member learns, or a standalone container's spec.joinIps lead to. */
  clusterGUID = CLUSTER_GUID;
  /** The Weka side: the container's id once it joined, and its drives in the cluster. */
  wekaContainerId: number | undefined;
  readonly wekaDrives = new Set<string>();
  /** The pods deleted, by the uid the deletion was fenced on (none: by name alone). */
  readonly podDeletions: { uid?: string }[] = [];
  /** Each activity called, by name, in order. */
  readonly calls: string[] = [];
  /** Every Event the workflow recorded, as reason: message. */
  readonly events: string[] = [];
  /** The reasons of the Events the workflow recorded on Nodes. */
  readonly nodeEvents: string[] = [];
  /** Replaces a stub: for a step that fails, or answers otherwise. */
  readonly overrides = new Map<string, (input: unknown) => unknown>();
  /** What the drive verification's request to the node's mutex finds. */
  verification: NodeDrivesVerified = { checked: 0, missing: [] };

  constructor(
    readonly client: Client,
    o: { name?: string; uid?: string; spec?: Partial<ContainerSnapshot['spec']>; node?: string | null } = {},
  ) {
    this.ref = { namespace: 'tenant', name: o.name ?? 'drive-0' };
    const node = o.node === null ? undefined : (o.node ?? 'node-a');
    if (node) this.nodes.add(node);
    this.container = {
      uid: o.uid ?? randomUUID(),
      generation: 1,
      deleting: false,
      annotations: {},
      finalizer: true,
      spec: {
        mode: 'drive',
        image: 'weka',
        driveCores: 1,
        numDrives: 1,
        driveCapacity: 1000,
        ...(node ? { nodeName: node } : {}),
        ...o.spec,
      },
      status: { conditions: [] },
    };
  }

  get uid(): string {
    return this.container!.uid;
  }

  /** The object's condition of `type`, as its status shows it. */
  condition(type: string): Condition | undefined {
    return this.container?.status.conditions.find((c) => c.type === type);
  }

  /** A spec change, as a person's patch makes it: the generation goes up. */
  patchSpec(spec: Partial<ContainerSnapshot['spec']>): void {
    this.container!.spec = { ...this.container!.spec, ...spec };
    this.container!.generation++;
  }

  /**
   * The object deleted with its finalizer removed by hand, and another created under the same name:
   * what the workflow of the first one finds by name from then on.
   */
  replaceObject(): WorldContainer {
    const old = this.container!;
    this.container = { ...old, uid: randomUUID(), generation: 1, status: { phase: 'Ready', conditions: [] } };
    return old;
  }

  /** Every join reaches the cluster (as Weka container `containerId`), but its answer never comes back. */
  loseJoinAnswers(containerId: number): void {
    this.overrides.set('joinCluster', () => {
      this.wekaContainerId = containerId;
      throw ApplicationFailure.nonRetryable('the answer was lost', 'WekaCommandRefused');
    });
  }

  /** The object's deletion, as the apiserver marks it (its finalizer holds it). */
  markDeleted(): void {
    this.container!.deleting = true;
  }

  private snapshot(): ContainerSnapshot | null {
    const c = this.container;
    if (!c) return null;
    return {
      uid: c.uid,
      generation: c.generation,
      deleting: c.deleting,
      annotations: { ...c.annotations },
      spec: { ...c.spec },
      status: {
        ...(c.status.phase !== undefined ? { phase: c.status.phase } : {}),
        ...(c.status.clusterGUID !== undefined ? { clusterGUID: c.status.clusterGUID } : {}),
        ...(c.status.containerID !== undefined ? { containerID: c.status.containerID } : {}),
        addedVirtualDrives: [...(c.status.addedVirtualDrives ?? [])],
        addedDrives: [...(c.status.addedDrives ?? [])],
        conditions: [...c.status.conditions],
      },
    };
  }

  private target(): ExecTargetRef {
    return { namespace: this.ref.namespace, pod: this.ref.name, container: 'weka' };
  }

  /** What the node's mutex answers, and what its ledger does meanwhile. */
  private answer(request: MutexRequest): MutexResponse {
    const base = { requestId: request.requestId, kind: request.kind };
    const { uid } = request.payload as { uid?: string };
    if (request.kind === 'allocate') {
      if (this.noCapacity !== undefined && !this.ledger.has(uid!))
        return {
          ...base,
          ok: false,
          error: { type: 'InsufficientDriveCapacity', message: this.noCapacity },
          waitForCapacity: true,
        };
      const held = this.ledger.get(uid!) ?? this.allocation;
      this.ledger.set(uid!, held);
      if (this.noReplacement !== undefined)
        return {
          ...base,
          ok: true,
          result: held,
          error: { type: 'NoReplacementCapacity', message: this.noReplacement },
          waitForCapacity: true,
        };
      return { ...base, ok: true, result: held };
    }
    if (request.kind === 'forget-replaced-drives') {
      const { virtualUUIDs } = request.payload as { virtualUUIDs: string[] };
      const held = this.ledger.get(uid!);
      if (held) {
        const left = (held.replacedVirtualDrives ?? []).filter((v) => !virtualUUIDs.includes(v.virtualUUID));
        const { replacedVirtualDrives: _, ...rest } = held;
        this.ledger.set(uid!, left.length > 0 ? { ...rest, replacedVirtualDrives: left } : rest);
      }
      return { ...base, ok: true };
    }
    if (request.kind === 'release') this.ledger.delete(uid!);
    if (request.kind === 'ensure-proxy')
      return { ...base, ok: true, result: { namespace: 'weka-drives-system', pod: 'weka-drives-proxy-node-a' } };
    return { ...base, ok: true };
  }

  /** The stubs, each recording its call; an override answers instead where one is set. */
  activities(): Record<string, (input: never) => Promise<unknown>> {
    const stubs: Record<string, (input: never) => unknown> = {
      readContainer: () => this.snapshot(),
      writeStatus: ({ uid, status, events }: StatusWrite): StatusWriteOutcome => {
        if (!this.container || this.container.uid !== uid) return 'gone';
        if (status) {
          const { writtenBy: _, ...fields } = status as StatusUpdate & { writtenBy: unknown };
          this.container.status = { ...this.container.status, ...fields } as WorldContainer['status'];
        }
        for (const e of events) this.events.push(`${e.reason}: ${e.message}`);
        return 'applied';
      },
      recordNodeEvent: ({ reason }: { reason: string }) => void this.nodeEvents.push(reason),
      nodeExists: (node: string) => this.nodes.has(node),
      nodesToVerify: () => [...this.nodes],
      verifyNodeDrives: () => this.verification,
      nodeReady: (node: string) => this.nodes.has(node),
      readNodeAllocation: ({ uid }: { uid: string }) => this.ledger.get(uid) ?? null,
      sendMutexRequest: async ({ request }: { request: MutexRequest }) => {
        const response = this.answer(request);
        await this.client.workflow.getHandle(request.replyTo).signal(mutexResponseSignal, response);
      },
      startContainerPod: () => this.target(),
      /** Another member's pod, from which the container can be taken out of the cluster. */
      findPeerPod: () => ({ namespace: this.ref.namespace, pod: 'drive-peer', container: 'weka' }),
      ensureContainerPod: () => this.target(),
      deleteContainerPod: ({ uid }: { uid?: string }) => void this.podDeletions.push(uid === undefined ? {} : { uid }),
      lostPods: () => [],
      wakeMemberCluster: () => false,
      readClusterGUID: () =>
        this.container?.spec.cluster ? this.clusterGUID : (this.container?.status.clusterGUID ?? null),
      readJoinIps: () => ['198.18.0.1:14000'],
      joinCluster: () => {
        this.wekaContainerId ??= 7;
        return { clusterGUID: this.clusterGUID, containerId: this.wekaContainerId };
      },
      signAndAddVirtualDrive: ({ drive }: { drive: { virtualUUID: string } }) => {
        this.wekaDrives.add(drive.virtualUUID);
        return { driveUUID: `drive-${drive.virtualUUID}` };
      },
      findWekaContainer: () =>
        this.wekaContainerId === undefined
          ? null
          : { containerId: this.wekaContainerId, clusterGUID: this.clusterGUID },
      removeDriveFromCluster: ({ virtualUUID }: { virtualUUID: string }) => void this.wekaDrives.delete(virtualUUID),
      unsignVirtualDrive: () => undefined,
      removeWekaContainer: () => {
        this.wekaContainerId = undefined;
      },
      removeFinalizer: ({ uid }: { uid?: string }) => {
        if (this.container && (uid === undefined || this.container.uid === uid)) {
          this.container.finalizer = false;
          // The apiserver removes an object marked for deletion once its last finalizer is gone.
          if (this.container.deleting) this.container = null;
        }
      },
    };
    const recorded: Record<string, (input: never) => Promise<unknown>> = {};
    for (const [name, stub] of Object.entries(stubs)) {
      recorded[name] = async (input: never) => {
        this.calls.push(name);
        const override = this.overrides.get(name);
        return override ? override(input) : stub(input);
      };
    }
    return recorded;
  }
}

/** A refusal by a stubbed step, as an activity throws one. */
export function refused(type: string, message: string): never {
  throw ApplicationFailure.nonRetryable(message, type);
}
