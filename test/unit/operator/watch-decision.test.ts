import { describe, expect, it } from 'vitest';
import { FINALIZER, MANAGED_BY, MANAGED_BY_LABEL, watcherEventName } from '../../../src/api/names.js';
import {
  DEFAULT_WATCHED_KINDS,
  decideWatchActions,
  firstSighting,
  forgetDone,
  lifecycleWorkflowOf,
  recordDone,
  watchedObjectOf,
  type SeenState,
  type WatchAction,
  type WatchedKind,
  type WatchedObject,
} from '../../../src/operator/watch-decision.js';

const UID = '0b1c2d3e-0000-4000-8000-000000000001';
const ID = `weka-container/${UID}`;
const ALL: ReadonlySet<WatchedKind> = new Set(['WekaContainer', 'WekaManualOperation', 'WekaCluster']);
const DEFAULTS: ReadonlySet<WatchedKind> = new Set(DEFAULT_WATCHED_KINDS);

function container(over: Partial<WatchedObject> = {}): WatchedObject {
  return {
    kind: 'WekaContainer',
    namespace: 'tenant',
    name: 'drive-0',
    uid: UID,
    generation: 1,
    deleting: false,
    finalizers: [FINALIZER],
    labels: {},
    spec: { mode: 'drive', nodeName: 'node-a' },
    status: { workflowID: ID, observedGeneration: 1 },
    ...over,
  };
}

const seen = (over: Partial<SeenState> = {}): SeenState => ({
  started: true,
  signalledGeneration: 1,
  deleteSignalled: false,
  workflowIdWritten: true,
  ...over,
});
const types = (actions: WatchAction[]) => actions.map((a) => a.type);

describe('decideWatchActions: a live drive container', () => {
  const cases: Array<{ name: string; obj: WatchedObject; seen?: SeenState; expected: WatchAction['type'][] }> = [
    {
      name: 'a new object: finalizer first, then start, then the workflow id',
      obj: container({ finalizers: [], status: {} }),
      expected: ['addFinalizer', 'startWorkflow', 'writeWorkflowId'],
    },
    {
      name: 'a new object with a finalizer of someone else: ours is still added',
      obj: container({ finalizers: ['other.io/keep'], status: {} }),
      expected: ['addFinalizer', 'startWorkflow', 'writeWorkflowId'],
    },
    { name: 'everything done in this process: nothing', obj: container(), seen: seen(), expected: [] },
    {
      name: 'first sighting after a restart, spec unchanged: start (a no-op for a running workflow), no signal',
      obj: container(),
      expected: ['startWorkflow'],
    },
    {
      name: 'first sighting after a restart, status behind the spec: start and signal',
      obj: container({ generation: 3, status: { workflowID: ID, observedGeneration: 2 } }),
      expected: ['startWorkflow', 'signalSpecChanged'],
    },
    {
      name: 'first sighting, spec changed before any status was written: signal to be safe',
      obj: container({ generation: 2, status: {} }),
      expected: ['startWorkflow', 'signalSpecChanged', 'writeWorkflowId'],
    },
    {
      name: 'spec changed since the last signal: signal',
      obj: container({ generation: 2 }),
      seen: seen(),
      expected: ['signalSpecChanged'],
    },
    {
      name: 'the same generation again (a status write): nothing',
      obj: container({ generation: 2 }),
      seen: seen({ signalledGeneration: 2 }),
      expected: [],
    },
    {
      name: 'a workflow id written by nobody yet: write it',
      obj: container({ status: {} }),
      seen: seen({ workflowIdWritten: false }),
      expected: ['writeWorkflowId'],
    },
    {
      name: 'our workflow id already written but not yet seen in an event: not again',
      obj: container({ status: {} }),
      seen: seen(),
      expected: [],
    },
    {
      name: 'a wrong workflow id in status: corrected',
      obj: container({ status: { workflowID: 'weka-container/other' } }),
      seen: seen({ workflowIdWritten: false }),
      expected: ['writeWorkflowId'],
    },
    {
      name: 'finalizer removed by hand while live: added back',
      obj: container({ finalizers: [] }),
      seen: seen(),
      expected: ['addFinalizer'],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(types(decideWatchActions(c.obj, c.seen, DEFAULTS))).toEqual(c.expected);
    });
  }

  it("signals the generation it saw and writes the id of the object's workflow", () => {
    const actions = decideWatchActions(
      container({ generation: 4, status: {} }),
      seen({ workflowIdWritten: false }),
      DEFAULTS,
    );
    expect(actions).toEqual([
      { type: 'signalSpecChanged', generation: 4 },
      { type: 'writeWorkflowId', workflowId: ID },
    ]);
  });
});

describe('decideWatchActions: deletion', () => {
  it('signals deletion (with start) when our finalizer is there', () => {
    expect(types(decideWatchActions(container({ deleting: true }), seen(), DEFAULTS))).toEqual(['signalDelete']);
  });

  it('signals deletion of an object it never saw before (created and deleted while down)', () => {
    expect(types(decideWatchActions(container({ deleting: true, status: {} }), undefined, DEFAULTS))).toEqual([
      'signalDelete',
    ]);
  });

  it('does not signal deletion twice in one process', () => {
    expect(decideWatchActions(container({ deleting: true }), seen({ deleteSignalled: true }), DEFAULTS)).toEqual([]);
  });

  it('does nothing for a deleting object without our finalizer: never ours, or already torn down', () => {
    expect(decideWatchActions(container({ deleting: true, finalizers: [] }), undefined, DEFAULTS)).toEqual([]);
    expect(decideWatchActions(container({ deleting: true, finalizers: ['other.io/keep'] }), seen(), DEFAULTS)).toEqual(
      [],
    );
  });

  it('never adds a finalizer, starts, or signals a spec change on a deleting object', () => {
    const actions = decideWatchActions(
      container({ deleting: true, generation: 5, status: {} }),
      seen({ started: false, workflowIdWritten: false }),
      DEFAULTS,
    );
    expect(types(actions)).toEqual(['signalDelete']);
  });
});

describe('decideWatchActions: objects the operator leaves alone', () => {
  it('ignores containers of other modes', () => {
    for (const mode of ['ssdproxy', 'compute', 'client', undefined]) {
      const spec = mode === undefined ? {} : { mode };
      expect(decideWatchActions(container({ spec, finalizers: [], status: {} }), undefined, ALL)).toEqual([]);
    }
  });

  it("handles a drive container its user labelled as the operator's like any object: a label is no proof", () => {
    expect(
      types(
        decideWatchActions(
          container({ labels: { [MANAGED_BY_LABEL]: MANAGED_BY }, finalizers: [], status: {} }),
          undefined,
          ALL,
        ),
      ),
    ).toContain('startWorkflow');
  });

  it('handles a managed-by label of another manager like any object', () => {
    expect(
      types(
        decideWatchActions(
          container({ labels: { [MANAGED_BY_LABEL]: 'helm' }, finalizers: [], status: {} }),
          undefined,
          ALL,
        ),
      ),
    ).toContain('startWorkflow');
  });

  it('ignores a kind that is not enabled', () => {
    const cluster = container({ kind: 'WekaCluster', spec: {}, finalizers: [], status: {} });
    expect(decideWatchActions(cluster, undefined, new Set<WatchedKind>(['WekaContainer']))).toEqual([]);
    expect(types(decideWatchActions(cluster, undefined, DEFAULTS))).toEqual([
      'addFinalizer',
      'startWorkflow',
      'writeWorkflowId',
    ]);
  });

  it('ignores operations other than sign-drives and clean-stale-virtual-drives', () => {
    const op = container({
      kind: 'WekaManualOperation',
      spec: { action: 'force-resign-drives' },
      finalizers: [],
      status: {},
    });
    expect(decideWatchActions(op, undefined, ALL)).toEqual([]);
  });
});

describe('decideWatchActions: manual operations', () => {
  const op = (over: Partial<WatchedObject> = {}) =>
    container({ kind: 'WekaManualOperation', spec: { action: 'sign-drives' }, finalizers: [], status: {}, ...over });

  it('starts a new sign-drives operation', () => {
    expect(types(decideWatchActions(op(), undefined, DEFAULTS))).toEqual([
      'addFinalizer',
      'startWorkflow',
      'writeWorkflowId',
    ]);
  });

  it('starts a new clean-stale-virtual-drives operation in the same workflow type, summarised by its action', () => {
    const clean = op({ spec: { action: 'clean-stale-virtual-drives' } });
    expect(types(decideWatchActions(clean, undefined, DEFAULTS))).toEqual([
      'addFinalizer',
      'startWorkflow',
      'writeWorkflowId',
    ]);
    expect(lifecycleWorkflowOf(clean)).toMatchObject({
      type: 'manualOperationWorkflow',
      summary: 'Clean stale virtual drives: operation tenant/drive-0',
    });
  });

  it('never starts a finished operation again (signing erases drives)', () => {
    for (const phase of ['Succeeded', 'Failed']) {
      expect(decideWatchActions(op({ finalizers: [FINALIZER], status: { phase } }), undefined, DEFAULTS)).toEqual([]);
      expect(
        decideWatchActions(
          op({ finalizers: [FINALIZER], generation: 2, status: { phase, observedGeneration: 1 } }),
          seen(),
          DEFAULTS,
        ),
      ).toEqual([]);
    }
  });

  it('still tears a finished operation down on deletion', () => {
    expect(
      types(
        decideWatchActions(
          op({ finalizers: [FINALIZER], deleting: true, status: { phase: 'Succeeded' } }),
          undefined,
          DEFAULTS,
        ),
      ),
    ).toEqual(['signalDelete']);
  });

  it('starts a running operation again after a restart', () => {
    expect(
      types(
        decideWatchActions(
          op({ finalizers: [FINALIZER], status: { phase: 'Running', workflowID: `weka-operation/${UID}` } }),
          undefined,
          DEFAULTS,
        ),
      ),
    ).toEqual(['startWorkflow']);
  });
});

describe("the watcher's memory", () => {
  it('records each action so the same sighting asks for nothing more', () => {
    const obj = container({ finalizers: [], generation: 2, status: {} });
    let state = firstSighting(obj);
    for (const action of decideWatchActions(obj, state, DEFAULTS)) state = recordDone(state, action);
    expect(decideWatchActions({ ...obj, finalizers: [FINALIZER] }, state, DEFAULTS)).toEqual([]);
  });

  it('after a re-list, asks for a teardown again but neither starts again nor re-signals a spec change', () => {
    const state = forgetDone(seen({ signalledGeneration: 3, deleteSignalled: true }));
    expect(types(decideWatchActions(container({ generation: 3 }), state, DEFAULTS))).toEqual([]);
    expect(types(decideWatchActions(container({ generation: 3, deleting: true }), state, DEFAULTS))).toEqual([
      'signalDelete',
    ]);
  });

  it('first sighting trusts status.observedGeneration, or generation 1 when there is none', () => {
    expect(firstSighting(container({ generation: 5, status: { observedGeneration: 4 } })).signalledGeneration).toBe(4);
    expect(firstSighting(container({ generation: 1, status: {} })).signalledGeneration).toBe(1);
    expect(firstSighting(container({ generation: 2, status: {} })).signalledGeneration).toBe(0);
  });
});

describe('lifecycleWorkflowOf', () => {
  it('names the drive container workflow by uid, with a summary and search attributes', () => {
    expect(lifecycleWorkflowOf(container({ spec: { mode: 'drive', nodeName: 'node-a', cluster: 'c1' } }))).toEqual({
      type: 'driveContainerWorkflow',
      id: ID,
      summary: 'Drive container tenant/drive-0 on node node-a',
      searchAttributes: { WekaContainer: 'tenant/drive-0', WekaNode: 'node-a', WekaCluster: 'tenant/c1' },
    });
  });

  it('leaves out empty search attributes of a standalone container', () => {
    expect(lifecycleWorkflowOf(container({ spec: { mode: 'drive' } }))?.searchAttributes).toEqual({
      WekaContainer: 'tenant/drive-0',
    });
  });

  it('uses the operation and cluster workflow ids', () => {
    expect(lifecycleWorkflowOf(container({ kind: 'WekaManualOperation', spec: { action: 'sign-drives' } }))?.id).toBe(
      `weka-operation/${UID}`,
    );
    expect(lifecycleWorkflowOf(container({ kind: 'WekaCluster', spec: {} }))).toMatchObject({
      type: 'clusterWorkflow',
      id: `weka-cluster/${UID}`,
    });
  });

  it('names a sign-drives operation in the WekaOperation search attribute', () => {
    expect(
      lifecycleWorkflowOf(container({ kind: 'WekaManualOperation', spec: { action: 'sign-drives' } }))
        ?.searchAttributes,
    ).toEqual({ WekaOperation: 'tenant/drive-0' });
  });
});

describe('watchedObjectOf', () => {
  it('reads the essentials of an apiserver object', () => {
    const raw = {
      apiVersion: 'weka.weka.io/v1alpha1',
      kind: 'WekaContainer',
      metadata: {
        name: 'd',
        namespace: 'ns',
        uid: 'u1',
        generation: 3,
        deletionTimestamp: '2025-01-01T00:00:00Z',
        finalizers: [FINALIZER],
        labels: { a: 'b' },
      },
      spec: { mode: 'drive', nodeName: 'n', image: 'x', driveCores: 2 },
      status: { observedGeneration: 2, workflowID: 'w', phase: 'Ready', allocations: {} },
    };
    expect(watchedObjectOf('WekaContainer', raw)).toEqual({
      kind: 'WekaContainer',
      namespace: 'ns',
      name: 'd',
      uid: 'u1',
      generation: 3,
      deleting: true,
      finalizers: [FINALIZER],
      labels: { a: 'b' },
      spec: { mode: 'drive', nodeName: 'n' },
      status: { observedGeneration: 2, workflowID: 'w', phase: 'Ready' },
    });
  });

  it('names a condition that is False, which says the object waits for something', () => {
    const raw = (conditions: unknown) => ({
      metadata: { name: 'd', uid: 'u' },
      status: { phase: 'Allocating', conditions },
    });
    const waiting = [
      { type: 'Placed', status: 'True' },
      { type: 'Allocated', status: 'False', reason: 'InsufficientCapacity' },
    ];
    expect(watchedObjectOf('WekaContainer', raw(waiting))?.status.falseCondition).toBe('Allocated');
    expect(watchedObjectOf('WekaContainer', raw([{ type: 'Placed', status: 'True' }]))?.status).toEqual({
      phase: 'Allocating',
    });
    expect(watchedObjectOf('WekaContainer', raw('not a list'))?.status.falseCondition).toBeUndefined();
  });

  it('does not take the conditions every status carries for one that says the object waits', () => {
    const raw = (conditions: unknown) => ({
      metadata: { name: 'd', uid: 'u' },
      status: { phase: 'Signing', conditions },
    });
    const working = { status: 'True', reason: 'Signing', message: 'signing virtual drive 1 of 2' };
    const bringingUp = [
      { type: 'Placed', status: 'True' },
      { type: 'Ready', status: 'False', reason: 'Signing', message: 'signing virtual drive 1 of 2' },
      { type: 'Reconciling', ...working },
      { type: 'Stalled', status: 'False', reason: 'NotStalled', message: 'nothing waits for a person' },
    ];
    expect(watchedObjectOf('WekaContainer', raw(bringingUp))?.status.falseCondition).toBeUndefined();
    // A Ready of the lifecycle's own, False, says it waits (a failed step to be tried again).
    const failed = [
      { type: 'Ready', status: 'False', reason: 'StepFailed', message: 'signing: refused' },
      { type: 'Reconciling', ...working },
    ];
    expect(watchedObjectOf('WekaContainer', raw(failed))?.status.falseCondition).toBe('Ready');
  });

  it('reads a bare new object and refuses one without a uid', () => {
    expect(
      watchedObjectOf('WekaCluster', { metadata: { name: 'c', namespace: 'ns', uid: 'u' }, spec: {} }),
    ).toMatchObject({ deleting: false, finalizers: [], status: {}, generation: 1 });
    expect(watchedObjectOf('WekaCluster', { metadata: { name: 'c' } })).toBeUndefined();
  });
});

describe('the name of a watcher Event', () => {
  const uid = '1F3A9C2E-77b0-4c5e-9d1a-0123456789ab';
  const dnsSubdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

  it.each([
    {
      name: 'drive-0',
      reason: 'SpecChangeSignalled',
      occurrence: 3,
      expected: 'drive-0.1f3a9c2e77b0.specchangesignalled.3',
    },
    {
      name: 'analytics.drive-1',
      reason: 'WorkflowStarted',
      occurrence: 'workflow',
      expected: 'analytics.drive-1.1f3a9c2e77b0.workflowstarted.workflow',
    },
    {
      name: 'x',
      reason: 'TeardownRequested',
      occurrence: 'deletion',
      expected: 'x.1f3a9c2e77b0.teardownrequested.deletion',
    },
  ])(
    'names $reason on $name after the object, its uid, the reason and the occurrence',
    ({ name, reason, occurrence, expected }) => {
      expect(watcherEventName({ name, uid }, reason, occurrence)).toBe(expected);
    },
  );

  it('is the same for every replica and differs by object, reason and occurrence', () => {
    const base = watcherEventName({ name: 'drive-0', uid }, 'SpecChangeSignalled', 2);
    expect(watcherEventName({ name: 'drive-0', uid }, 'SpecChangeSignalled', 2)).toBe(base);
    expect(
      new Set([
        base,
        watcherEventName({ name: 'drive-0', uid }, 'SpecChangeSignalled', 3),
        watcherEventName({ name: 'drive-0', uid }, 'TeardownRequested', 2),
        watcherEventName({ name: 'drive-0', uid: '9c7d0000-0000-4000-8000-000000000000' }, 'SpecChangeSignalled', 2),
        watcherEventName({ name: 'drive-1', uid }, 'SpecChangeSignalled', 2),
      ]).size,
    ).toBe(5);
  });

  it('stays a valid object name for the longest object names, even cut where a dash or dot was', () => {
    for (const name of [
      'a'.repeat(253),
      `${'a'.repeat(230)}-${'b'.repeat(22)}`,
      `${'a'.repeat(220)}.b${'c'.repeat(30)}`,
    ]) {
      for (let cut = 0; cut < 30; cut++) {
        const named = watcherEventName({ name: name.slice(0, 253 - cut), uid }, 'SpecChangeSignalled', 12345);
        expect(named.length).toBeLessThanOrEqual(253);
        expect(named).toMatch(dnsSubdomain);
      }
    }
  });
});
