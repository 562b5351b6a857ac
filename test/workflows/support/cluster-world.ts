// A WekaCluster's world for its workflow alone: the object, the nodes its selector matches, its
// member drive containers as the apiserver would list them (their phases set by the test, as their
// own workflows would), the cluster-ports mutex and the Weka side, with the activities the cluster
// workflow calls stubbed over them. The members' own workflows, which the cluster starts, find
// their object gone and end: this tests the cluster's decisions, not its members'.
import { randomUUID } from 'node:crypto';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type {
  ClusterSnapshot,
  ClusterStatusUpdate,
  StatusWrite,
  StatusWriteOutcome,
} from '../../../activities/types.js';
import type { Condition } from '../../../src/api/index.js';
import type { ClusterMemberView, ClusterNodeView, MemberToCreate } from '../../../src/lifecycle/cluster-layout.js';
import {
  clusterWorkflowId,
  deleteRequestedSignal,
  mutexResponseSignal,
  specChangedSignal,
  wakeUpSignal,
  WORKFLOW,
  type LifecycleWorkflow,
  type MutexRequest,
  type MutexResponse,
} from '../../../src/protocol.js';
import { eventually } from '../../support/async.js';

export const FORMED_GUID = '55555555-5555-4555-8555-555555555555';

export class ClusterWorld {
  readonly ref = { namespace: 'tenant', name: 'analytics' };
  readonly uid = randomUUID();
  generation = 1;
  deleting = false;
  finalizer = true;
  spec: ClusterSnapshot['spec'];
  status: Partial<ClusterStatusUpdate> & { conditions: Condition[] } = { conditions: [] };
  readonly nodes = new Map<string, ClusterNodeView>();
  readonly members = new Map<string, ClusterMemberView>();
  /** While set, the cluster-ports mutex refuses, saying this. */
  portsRefused: string | undefined;
  portsReleased = false;
  /** The members the Weka cluster was formed of. */
  formedOf: string[] | undefined;
  readonly events: string[] = [];
  readonly calls: string[] = [];
  private handle: WorkflowHandle<LifecycleWorkflow> | undefined;

  constructor(
    readonly client: Client,
    o: { count: number; nodes: string[] },
  ) {
    this.spec = {
      image: 'quay.io/weka.io/weka-in-container:test',
      nodeSelector: { pool: 'a' },
      dynamicTemplate: { driveContainers: o.count, numDrives: 1, driveCapacity: 500 },
    };
    for (const name of o.nodes) this.nodes.set(name, { name, selected: true, ready: true });
  }

  async start(taskQueue: string): Promise<WorkflowHandle<LifecycleWorkflow>> {
    this.handle = await this.client.workflow.start<LifecycleWorkflow>(WORKFLOW.cluster, {
      taskQueue,
      workflowId: clusterWorkflowId(this.uid),
      args: [{ ...this.ref, uid: this.uid }],
    });
    return this.handle;
  }

  /** A member's or the cluster's change the workflow hears of at once, as the watcher and members tell it. */
  async wakeUp(): Promise<void> {
    await this.handle!.signal(wakeUpSignal);
  }

  async patchSpec(template: Partial<NonNullable<ClusterSnapshot['spec']['dynamicTemplate']>>): Promise<void> {
    this.spec = { ...this.spec, dynamicTemplate: { ...this.spec.dynamicTemplate!, ...template } };
    this.generation++;
    await this.handle!.signal(specChangedSignal);
  }

  /** Every live member in `phase`, as their own workflows would show them. */
  async membersIn(phase: string): Promise<void> {
    for (const m of this.members.values()) if (!m.deleting) m.phase = phase;
    await this.wakeUp();
  }

  async delete(): Promise<void> {
    this.deleting = true;
    await this.handle!.signal(deleteRequestedSignal);
    await this.handle!.result();
  }

  phase(wanted: string, timeoutMs = 30_000): Promise<true> {
    return eventually(
      `the cluster to be ${wanted}`,
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

  private answer(request: MutexRequest): MutexResponse {
    const base = { requestId: request.requestId, kind: request.kind };
    if (request.kind === 'allocate-cluster-ports')
      return this.portsRefused !== undefined
        ? { ...base, ok: false, error: { type: 'PortRangeExhausted', message: this.portsRefused } }
        : { ...base, ok: true, result: { basePort: 14000, portRange: 500 } };
    if (request.kind === 'release-cluster-ports') this.portsReleased = true;
    return { ...base, ok: true };
  }

  private live(): ClusterMemberView[] {
    return [...this.members.values()];
  }

  activities(): Record<string, (input: never) => Promise<unknown>> {
    const stubs: Record<string, (input: never) => unknown> = {
      readCluster: (): ClusterSnapshot | null =>
        this.finalizer
          ? {
              uid: this.uid,
              generation: this.generation,
              deleting: this.deleting,
              annotations: {},
              spec: this.spec,
              status: {
                ...(this.status.clusterGUID ? { clusterGUID: this.status.clusterGUID } : {}),
                conditions: [...this.status.conditions],
              },
            }
          : null,
      writeStatus: ({ status, events }: StatusWrite): StatusWriteOutcome => {
        if (status) {
          const { writtenBy: _, ...fields } = status as ClusterStatusUpdate & { writtenBy: unknown };
          this.status = { ...this.status, ...fields };
        }
        for (const e of events) this.events.push(`${e.reason}: ${e.message}`);
        return 'applied';
      },
      sendMutexRequest: async ({ request }: { request: MutexRequest }) => {
        await this.client.workflow.getHandle(request.replyTo).signal(mutexResponseSignal, this.answer(request));
      },
      clusterView: () => ({ members: this.live().map((m) => ({ ...m })), nodes: [...this.nodes.values()] }),
      createClusterMembers: ({ create }: { create: MemberToCreate[] }) => {
        for (const c of create)
          this.members.set(c.name, {
            name: c.name,
            uid: randomUUID(),
            node: c.node,
            phase: 'Pending',
            deleting: false,
            holds: 'no virtual drives',
            numDrives: 1,
          });
        return this.live().map((m) => ({ name: m.name, uid: m.uid }));
      },
      // A member taken away tears down and goes: what its own workflow does.
      removeClusterMember: ({ ref }: { ref: { name: string } }) => void this.members.delete(ref.name),
      growClusterMember: ({ ref, capacity }: { ref: { name: string }; capacity: { numDrives?: number } }) => {
        const m = this.members.get(ref.name);
        if (m && capacity.numDrives !== undefined) m.numDrives = capacity.numDrives;
      },
      memberPodRunning: () => true,
      formWekaCluster: ({ members }: { members: { name: string }[] }) => {
        this.formedOf = members.map((m) => m.name);
        return FORMED_GUID;
      },
      ensureClusterDisruptionBudget: () => 'ok',
      deviceSetPlan: () => [],
      deviceSetRemnants: () => [],
      clusterMembers: () => this.live().map((m) => ({ name: m.name, uid: m.uid })),
      deleteClusterContainers: () => {
        const n = this.members.size;
        this.members.clear();
        return n;
      },
      removeFinalizer: () => {
        this.finalizer = false;
      },
      // The members' own workflows, started by the cluster, find no object and end.
      readContainer: () => null,
    };
    return Object.fromEntries(
      Object.entries(stubs).map(([name, stub]) => [
        name,
        async (input: never) => {
          this.calls.push(name);
          return stub(input);
        },
      ]),
    );
  }
}
