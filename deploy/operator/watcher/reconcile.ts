// Executes the watcher's decision for one object (src/operator/watch-decision.ts), one action
// after another, and remembers per uid what this process already did. Every action is
// idempotent and keyed by the workflow id, so running it twice (two replicas, a restart, a retry)
// changes nothing: starting uses USE_EXISTING, a duplicated signal only makes the workflow re-read
// its object, the finalizer is added only if absent, the workflow id is applied only if different.
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { WorkflowNotFoundError, type Client, type WorkflowStartOptions } from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import type { Logger } from 'pino';
import { isConflict, isNotFound } from '../../../activities/kube/errors.js';
import { PLURAL, type WekaApi } from '../../../activities/kube/weka-api.js';
import { API_GROUP, API_VERSION } from '../../../src/api/index.js';
import { FIELD_MANAGER, FINALIZER } from '../../../src/api/names.js';
import {
  decideWatchActions,
  firstSighting,
  forgetDone,
  lifecycleWorkflowIdOf,
  lifecycleWorkflowOf,
  recordDone,
  type LifecycleWorkflow,
  type SeenState,
  type WatchAction,
  type WatchedKind,
  type WatchedObject,
} from '../../../src/operator/watch-decision.js';
import {
  QUEUED_CONDITION,
  queuedMessage,
  type AdmissionDecision,
  type BringUpAdmission,
} from '../../../src/operator/bring-up-admission.js';
import { setCondition } from '../../../src/lifecycle/conditions.js';
import { withStandardConditions } from '../../../src/lifecycle/standard-conditions.js';
import type { OperatorMetrics } from '../metrics.js';
import { recordWatcherEvent } from './events.js';
import {
  deleteRequestedSignal,
  specChangedSignal,
  WekaCluster,
  WekaContainer,
  WekaNode,
  WekaOperation,
} from '../../../src/protocol.js';

export interface ReconcilerDeps {
  api: WekaApi;
  temporal: Client;
  taskQueue: string;
  logger: Logger;
  enabled: ReadonlySet<WatchedKind>;
  /** Drive containers only: how many bring-ups run at once. */
  admission?: BringUpAdmission;
  metrics?: OperatorMetrics;
}

const MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const SEARCH_ATTRIBUTE_KEYS = { WekaContainer, WekaNode, WekaCluster, WekaOperation } as const;

/**
 * What became of one action: `done`, the remaining actions still apply; `stop`, they do not (the
 * object vanished or began deleting); `held`, the bring-up limit holds the start back for now.
 */
type Outcome = 'done' | 'stop' | 'held';

/** One per watched kind: what this process did for each uid of that kind. */
export class Reconciler {
  private readonly seen = new Map<string, SeenState>();
  /** The uids this process marked Queued. */
  private readonly queued = new Set<string>();

  constructor(private readonly deps: ReconcilerDeps) {}

  /**
   * A fresh list: forget the uids that are gone, and what was done for the others; for the uids in
   * `notRunning`, also that their workflows were started, so each is started again. The uids in
   * `newer` changed while the list ran: the watch told more than the list, so what was done for
   * them stands until the next list.
   */
  relisted(uids: ReadonlySet<string>, notRunning: ReadonlySet<string>, newer: ReadonlySet<string> = new Set()): void {
    for (const [uid, state] of this.seen) {
      if (!uids.has(uid)) this.seen.delete(uid);
      else if (newer.has(uid)) continue;
      else this.seen.set(uid, notRunning.has(uid) ? { ...forgetDone(state), started: false } : forgetDone(state));
    }
  }

  /** Whether this process started the workflow of this uid. */
  hasStarted(uid: string): boolean {
    return this.seen.get(uid)?.started === true;
  }

  /**
   * The object's workflow run ended while the object still exists: forget that it was started (or
   * told to tear down), so handling it again does that again. Returns whether it will; when so,
   * records a Warning Event (one per ended run) saying what happened.
   */
  async workflowEnded(obj: WatchedObject, run: { runId: string; status: string }): Promise<boolean> {
    const before = this.seen.get(obj.uid) ?? firstSighting(obj);
    const state: SeenState = { ...before, started: false, deleteSignalled: false };
    this.seen.set(obj.uid, state);
    const workflow = lifecycleWorkflowOf(obj);
    const again = decideWatchActions(obj, state, this.deps.enabled).some(
      (a) => a.type === 'startWorkflow' || a.type === 'signalDelete',
    );
    if (!again || !workflow) return false;
    const log = this.logFor(obj, workflow);
    const status = run.status.toLowerCase().replace(/_/g, ' ');
    log.warn({ runId: run.runId, status }, 'its lifecycle workflow ended while the object exists: starting it again');
    this.deps.metrics?.workflowsRestarted.inc({ kind: obj.kind, status: run.status });
    await this.event(
      obj,
      'WorkflowEnded',
      `workflow ${workflow.id} (run ${run.runId}) ended (${status}) while this object exists; the operator starts it again`,
      run.runId,
      log,
      'Warning',
    );
    return true;
  }

  /**
   * An object gone from the apiserver. Its workflow normally ended first (it removed the
   * finalizer); one that still runs lost its object to a person (the finalizer removed by hand, the
   * object deleted) and is told to tear down: it asks the apiserver, finds the object gone or
   * another one under its name, and frees what that uid holds, touching nothing by name.
   */
  async vanished(kind: WatchedKind, uid: string): Promise<void> {
    const id = lifecycleWorkflowIdOf(kind, uid);
    try {
      await this.deps.temporal.workflow.getHandle(id).signal(deleteRequestedSignal);
    } catch (err) {
      // Ended (the usual case), or never started: nothing to tell.
      if (err instanceof WorkflowNotFoundError) return;
      this.deps.metrics?.watcherActions.inc({ kind, action: 'signalVanished', result: 'error' });
      this.deps.logger.warn({ kind, uid, workflowId: id, err }, 'could not tell a workflow that its object is gone');
      return;
    }
    this.deps.metrics?.watcherActions.inc({ kind, action: 'signalVanished', result: 'ok' });
    this.deps.logger.warn(
      { kind, uid, workflowId: id },
      'the object is gone while its workflow runs (its finalizer removed by hand): told it to tear down',
    );
  }

  forget(uid: string): void {
    this.seen.delete(uid);
    this.queued.delete(uid);
  }

  async reconcile(obj: WatchedObject): Promise<void> {
    const actions = decideWatchActions(obj, this.seen.get(obj.uid), this.deps.enabled);
    const workflow = lifecycleWorkflowOf(obj);
    if (actions.length === 0 || !workflow) return;
    const log = this.logFor(obj, workflow);
    let state = this.seen.get(obj.uid) ?? firstSighting(obj);
    for (const action of actions) {
      let outcome: Outcome;
      try {
        outcome = await this.execute(action, obj, workflow, log);
        this.deps.metrics?.watcherActions.inc({
          kind: obj.kind,
          action: action.type,
          result: outcome === 'held' ? 'held' : 'ok',
        });
      } catch (err) {
        this.deps.metrics?.watcherActions.inc({ kind: obj.kind, action: action.type, result: 'error' });
        log.warn({ action: action.type, err }, 'watcher action failed; will retry');
        throw err;
      }
      if (outcome !== 'done') return;
      state = recordDone(state, action);
      this.seen.set(obj.uid, state);
    }
  }

  private logFor(obj: WatchedObject, workflow: LifecycleWorkflow): Logger {
    return this.deps.logger.child({
      kind: obj.kind,
      namespace: obj.namespace,
      name: obj.name,
      workflowId: workflow.id,
      ...(obj.spec.nodeName ? { node: obj.spec.nodeName } : {}),
    });
  }

  private async execute(
    action: WatchAction,
    obj: WatchedObject,
    workflow: LifecycleWorkflow,
    log: Logger,
  ): Promise<Outcome> {
    const ref = { namespace: obj.namespace, name: obj.name };
    switch (action.type) {
      case 'addFinalizer':
        return (await this.addFinalizer(obj, log)) ? 'done' : 'stop';
      case 'startWorkflow': {
        const admission = this.deps.admission?.admit(obj, Date.now()) ?? { admitted: true };
        if (!admission.admitted) {
          await this.markQueued(obj, admission, log);
          return 'held';
        }
        await this.deps.temporal.workflow.start(workflow.type, this.startOptions(obj, workflow));
        log.debug('workflow started (or already running)');
        return 'done';
      }
      case 'signalSpecChanged':
        await this.deps.temporal.workflow.signalWithStart(workflow.type, {
          ...this.startOptions(obj, workflow),
          signal: specChangedSignal,
          signalArgs: [],
        });
        log.info({ generation: action.generation }, 'spec change signalled');
        await this.event(
          obj,
          'SpecChangeSignalled',
          `generation ${action.generation}: workflow ${workflow.id} re-reads the spec`,
          action.generation,
          log,
        );
        return 'done';
      case 'signalDelete':
        // With start: a workflow that never ran (created and deleted while no watcher ran) or
        // that ended starts now and goes straight to its teardown, which removes the finalizer.
        await this.deps.temporal.workflow.signalWithStart(workflow.type, {
          ...this.startOptions(obj, workflow),
          signal: deleteRequestedSignal,
          signalArgs: [],
        });
        log.info('deletion signalled: the workflow tears down and then removes the finalizer');
        await this.event(
          obj,
          'TeardownRequested',
          `deletion started: workflow ${workflow.id} tears down, then removes the finalizer`,
          'deletion',
          log,
        );
        return 'done';
      case 'writeWorkflowId':
        try {
          await this.deps.api.applyStatus(obj.kind, ref, { workflowID: action.workflowId }, FIELD_MANAGER.watcher);
        } catch (err) {
          if (isNotFound(err)) return 'stop';
          throw err;
        }
        log.info('workflow id written to status');
        await this.event(
          obj,
          'WorkflowStarted',
          `lifecycle workflow ${workflow.id} (${workflow.type}) runs this object`,
          'workflow',
          log,
        );
        return 'done';
    }
  }

  /**
   * Says once on the object why its workflow has not started: a Queued condition the watcher owns
   * (its workflowID apply, after the start, removes it) and an Event.
   */
  private async markQueued(
    obj: WatchedObject,
    decision: Extract<AdmissionDecision, { admitted: false }>,
    log: Logger,
  ): Promise<void> {
    if (this.queued.has(obj.uid)) return;
    const message = queuedMessage(decision);
    const nowIso = new Date().toISOString();
    const queued = setCondition(
      [],
      { type: QUEUED_CONDITION, status: 'True', reason: 'BringUpLimit', message, observedGeneration: obj.generation },
      nowIso,
    );
    // With the conditions GitOps tools read: a queued object is at work, not done. The workflow's
    // first status apply takes them over.
    const conditions = withStandardConditions(
      queued,
      { kind: 'working', reason: 'Queued', message },
      { phase: 'Pending', observedGeneration: obj.generation, nowIso },
    );
    try {
      await this.deps.api.applyStatus(
        obj.kind,
        { namespace: obj.namespace, name: obj.name },
        { conditions },
        FIELD_MANAGER.watcher,
      );
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    this.queued.add(obj.uid);
    log.info({ inFlight: decision.inFlight, ahead: decision.ahead }, 'queued: waiting for its turn to start');
    await this.event(obj, 'Queued', message, 'bring-up', log);
  }

  private startOptions(obj: WatchedObject, workflow: LifecycleWorkflow): WorkflowStartOptions {
    const typedSearchAttributes: SearchAttributePair[] = Object.entries(workflow.searchAttributes).map(
      ([key, value]) => ({
        key: SEARCH_ATTRIBUTE_KEYS[key as keyof typeof SEARCH_ATTRIBUTE_KEYS],
        value,
      }),
    );
    return {
      taskQueue: this.deps.taskQueue,
      workflowId: workflow.id,
      args: [{ namespace: obj.namespace, name: obj.name, uid: obj.uid }],
      workflowIdConflictPolicy: 'USE_EXISTING',
      // A workflow that ended while its object still exists is started again.
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      staticSummary: workflow.summary,
      memo: { kind: obj.kind, namespace: obj.namespace, name: obj.name, uid: obj.uid },
      typedSearchAttributes,
    };
  }

  /**
   * Adds our finalizer by a JSON merge patch of metadata.finalizers, conditional on the
   * resourceVersion read (so another writer's finalizers are never dropped), only if absent,
   * as the watcher's field manager (so managedFields show who added it). Resolves false when the
   * object vanished or began deleting.
   */
  private async addFinalizer(obj: WatchedObject, log: Logger): Promise<boolean> {
    const ref = { namespace: obj.namespace, name: obj.name };
    for (let attempt = 0; attempt < 10; attempt++) {
      const current = await this.deps.api.get(obj.kind, ref);
      if (!current || current.metadata.uid !== obj.uid || current.metadata.deletionTimestamp !== undefined)
        return false;
      const finalizers = current.metadata.finalizers ?? [];
      if (finalizers.includes(FINALIZER)) return true;
      try {
        await this.deps.api.custom.patchNamespacedCustomObject(
          {
            group: API_GROUP,
            version: API_VERSION,
            plural: PLURAL[obj.kind],
            ...ref,
            body: {
              metadata: { resourceVersion: current.metadata.resourceVersion, finalizers: [...finalizers, FINALIZER] },
            },
            fieldManager: FIELD_MANAGER.watcher,
          },
          MERGE_PATCH,
        );
        log.info('finalizer added');
        return true;
      } catch (err) {
        if (isNotFound(err)) return false;
        if (!isConflict(err)) throw err;
      }
    }
    throw new Error(`could not add the finalizer to ${obj.namespace}/${obj.name}: it kept changing`);
  }

  /** `occurrence` tells this action from another with the same reason on the same object (one Event each, whichever replica records it). */
  private async event(
    obj: WatchedObject,
    reason: string,
    message: string,
    occurrence: string | number,
    log: Logger,
    type: 'Normal' | 'Warning' = 'Normal',
  ): Promise<void> {
    try {
      await recordWatcherEvent(this.deps.api.core, obj, reason, message, occurrence, type);
    } catch (err) {
      // An Event is for people; failing to record one must not make the action count as failed.
      log.debug({ reason, err }, 'could not record an Event');
    }
  }
}
