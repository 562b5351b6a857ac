import { describe, expect, it } from 'vitest';
import {
  EndedWorkflowSweep,
  VISIBILITY_OVERLAP_MS,
  endedWorkflowsQuery,
  memoRef,
  runningWorkflowsQuery,
  type EndedRun,
} from '../../../src/operator/ended-workflows.js';

const PACING = { firstDelayMs: 30_000, maxDelayMs: 120_000, resetMs: 600_000 };
const T0 = Date.parse('2026-11-28T06:00:00Z');

function run(uid: string, runId: string, closedAt: number, status = 'TERMINATED'): EndedRun {
  return {
    workflowId: `weka-container/${uid}`,
    runId,
    status,
    closedAt,
    kind: 'WekaContainer',
    namespace: 'ns',
    name: uid,
    uid,
  };
}

const live = () => true;
const uids = (runs: readonly EndedRun[]) => runs.map((r) => `${r.uid}/${r.runId}`);

describe('endedWorkflowsQuery', () => {
  it('asks for the closed runs of the given types that left no next run, since a time', () => {
    expect(endedWorkflowsQuery(['driveContainerWorkflow', 'clusterWorkflow'], T0)).toBe(
      "WorkflowType IN ('driveContainerWorkflow', 'clusterWorkflow') AND " +
        "ExecutionStatus IN ('Completed', 'Failed', 'Canceled', 'Terminated', 'TimedOut') AND " +
        "CloseTime >= '2026-11-28T06:00:00.000Z'",
    );
  });

  it('refuses an empty list of types and keeps quotes out of the query', () => {
    expect(() => endedWorkflowsQuery([], T0)).toThrow(/no workflow types/);
    expect(endedWorkflowsQuery(["x') OR ('1"], T0)).toContain("WorkflowType IN ('x) OR (1')");
  });
});

describe('runningWorkflowsQuery', () => {
  it('counts the running workflows of one type on the operator task queue', () => {
    expect(runningWorkflowsQuery('driveContainerWorkflow', 'weka-drives')).toBe(
      "WorkflowType = 'driveContainerWorkflow' AND TaskQueue = 'weka-drives' AND ExecutionStatus = 'Running'",
    );
  });

  it('lists them on any task queue when none is given', () => {
    expect(runningWorkflowsQuery('driveContainerWorkflow')).toBe(
      "WorkflowType = 'driveContainerWorkflow' AND ExecutionStatus = 'Running'",
    );
  });
});

describe('memoRef', () => {
  it('reads the kind, namespace, name and uid the watcher put in the memo', () => {
    expect(memoRef({ kind: 'WekaContainer', namespace: 'ns', name: 'a', uid: 'u', other: 1 })).toEqual({
      kind: 'WekaContainer',
      namespace: 'ns',
      name: 'a',
      uid: 'u',
    });
  });

  it('is undefined for a workflow the watcher did not start', () => {
    for (const memo of [undefined, null, 'x', {}, { kind: 'WekaContainer', namespace: 'ns', name: 'a' }])
      expect(memoRef(memo)).toBeUndefined();
  });
});

describe('EndedWorkflowSweep', () => {
  it('starts its first window an overlap before the watcher started, and moves it to each query', () => {
    const sweep = new EndedWorkflowSweep(T0, PACING);
    expect(sweep.windowStart()).toBe(T0 - VISIBILITY_OVERLAP_MS);
    sweep.take([], T0 + 15_000, live);
    expect(sweep.windowStart()).toBe(T0 + 15_000 - VISIBILITY_OVERLAP_MS);
  });

  it('hands each ended run over once, though overlapping windows list it again', () => {
    const sweep = new EndedWorkflowSweep(T0, PACING);
    const a = run('a', 'r1', T0 + 1_000);
    expect(uids(sweep.take([a], T0 + 15_000, live))).toEqual(['a/r1']);
    expect(sweep.take([a], T0 + 30_000, live)).toEqual([]);
  });

  it('leaves alone the runs of objects the watcher no longer has (deleted, torn down)', () => {
    const sweep = new EndedWorkflowSweep(T0, PACING);
    expect(sweep.take([run('gone', 'r1', T0 + 1_000, 'COMPLETED')], T0 + 15_000, () => false)).toEqual([]);
    expect(sweep.waitingCount()).toBe(0);
  });

  it('waits longer before each further restart of an object whose workflow keeps ending', () => {
    const sweep = new EndedWorkflowSweep(T0, PACING);
    let now = T0;
    const restartTimes: number[] = [];
    for (let i = 0; i < 5; i++) {
      // Each run ends a second after its start; the sweep asks every 15 s.
      const ended = run('a', `r${i}`, now + 1_000, 'FAILED');
      let due = sweep.take([ended], (now += 15_000), live);
      while (due.length === 0) due = sweep.take([], (now += 15_000), live);
      sweep.restarted('a', now);
      restartTimes.push(now);
    }
    const gaps = restartTimes.slice(1).map((t, i) => t - restartTimes[i]!);
    // 15 s to see the next end, then at least 30 s, 60 s, 120 s, and never more than the cap.
    expect(gaps).toEqual([30_000, 60_000, 120_000, 120_000]);
    expect(sweep.waitingCount()).toBe(0);
  });

  it('restarts at once again after a quiet spell, and paces each object on its own', () => {
    const sweep = new EndedWorkflowSweep(T0, PACING);
    sweep.take([run('a', 'r1', T0 + 1_000)], T0 + 15_000, live);
    sweep.restarted('a', T0 + 15_000);
    // b's first end is restarted at once, while a's next one waits.
    const due = sweep.take([run('a', 'r2', T0 + 20_000), run('b', 'r1', T0 + 20_000)], T0 + 30_000, live);
    expect(uids(due)).toEqual(['b/r1']);
    expect(sweep.waitingCount()).toBe(1);
    // Long after: a's waiting run is due, and a later end of a starts at once.
    const later = T0 + 15_000 + PACING.resetMs;
    expect(uids(sweep.take([], later, live))).toEqual(['a/r2']);
    sweep.restarted('a', later);
    expect(uids(sweep.take([run('a', 'r3', later + PACING.resetMs)], later + PACING.resetMs + 15_000, live))).toEqual([
      'a/r3',
    ]);
  });

  it('keeps a run whose handling failed, and hands it over at the next query', () => {
    const sweep = new EndedWorkflowSweep(T0, PACING);
    const [a] = sweep.take([run('a', 'r1', T0 + 1_000)], T0 + 15_000, live);
    sweep.retry(a!);
    expect(uids(sweep.take([], T0 + 30_000, live))).toEqual(['a/r1']);
  });

  it('keeps only the newest ended run of an object that waits', () => {
    const sweep = new EndedWorkflowSweep(T0, PACING);
    sweep.take([run('a', 'r1', T0 + 1_000)], T0 + 15_000, live);
    sweep.restarted('a', T0 + 15_000);
    sweep.take([run('a', 'r3', T0 + 25_000), run('a', 'r2', T0 + 20_000)], T0 + 30_000, live);
    expect(uids(sweep.take([], T0 + 60_000, live))).toEqual(['a/r3']);
  });
});
