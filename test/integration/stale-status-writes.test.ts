// A worker cut from Temporal keeps running the local activities of a workflow task that Temporal
// has already handed to another worker: its status write can land seconds after the newer ones
// the other worker made, and put the object back to an earlier phase (a container Ready in its
// workflow, AddingDrives on its object, for ever). Every workflow status write says which run made
// it and where in the run it is, and the apiserver keeps only writes that do not go back.
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import pino from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../activities/index.js';
import { createStatusActivities } from '../../activities/status.js';
import type { ActivityDeps } from '../../activities/deps.js';
import { WekaApi } from '../../activities/kube/weka-api.js';
import type { StatusWrite, StatusWriteOutcome } from '../../activities/types.js';
import { startTcpProxy } from '../../deploy/local/tcp-proxy.js';
import type { WrittenBy } from '../../src/api/index.js';
import { FIELD_MANAGER } from '../../src/api/names.js';
import { mutexTaskQueue } from '../../src/protocol.js';
import { createContainerObject } from '../support/containers.js';
import { eventsOf } from '../support/events.js';
import {
  kubeConfig,
  temporalAddress,
  temporalNamespace,
  uniqueNamespace,
  workflowBundlePath,
} from '../support/harness.js';
import {
  createDriveContainer,
  readContainer,
  sharedDrivesNode,
  testOperatorDeps,
  waitForPhase,
} from '../support/operator.js';
import { createWekaCluster } from '../support/simulator.js';

const api = new WekaApi(kubeConfig());
const status = createStatusActivities({ kubeConfig: kubeConfig(), logger: pino({ level: 'silent' }) } as ActivityDeps);

async function createContainer(ref: { namespace: string; name: string }): Promise<string> {
  const created = await createContainerObject(kubeConfig(), ref, { numDrives: 1, driveCapacity: 1000, driveCores: 1 });
  return created.metadata.uid ?? '';
}

const RUN_START = '2026-11-29T02:52:34.535Z';
const LATER_RUN_START = '2026-11-29T03:10:00.000Z';

function write(
  ref: { namespace: string; name: string },
  uid: string,
  phase: string,
  writtenBy: WrittenBy,
  eventReason?: string,
): StatusWrite {
  return {
    kind: 'WekaContainer',
    ref,
    uid,
    status: { phase, observedGeneration: 1, addedVirtualDrives: [], addedDrives: [], writtenBy },
    events: eventReason
      ? [{ name: `${ref.name}.${eventReason.toLowerCase()}`, type: 'Normal', reason: eventReason, message: phase }]
      : [],
  };
}

let ns: string;
beforeAll(async () => {
  ns = await uniqueNamespace('stale-status');
});

describe('status writes of a workflow', () => {
  it('keeps the writes of a workflow task done again when those of the timed-out one land after them', async () => {
    const ref = { namespace: ns, name: 'late-task' };
    const uid = await createContainer(ref);
    const run = { run: 'run-1', runStartTime: RUN_START };
    // Worker A's task started at history length 68 and timed out; worker B did it again at 71,
    // with the same writes (the same numbers in the task), then went on at 78 to Ready.
    const timedOut = { ...run, historyLength: 68, sequence: 1 };
    expect(await status.writeStatus(write(ref, uid, 'AddingDrives', { ...run, historyLength: 71, sequence: 1 }))).toBe(
      'applied',
    );
    expect(
      await status.writeStatus(write(ref, uid, 'AddingDrives', { ...run, historyLength: 71, sequence: 2 }, 'Added')),
    ).toBe('applied');
    // A's first write lands between B's writes of the same task: refused all the same.
    expect(await status.writeStatus(write(ref, uid, 'Signing', timedOut, 'Late'))).toBe('stale');
    expect(
      await status.writeStatus(write(ref, uid, 'Ready', { ...run, historyLength: 78, sequence: 1 }, 'Ready')),
    ).toBe('applied');
    // A's writes land after B's Ready, whatever their number in the task.
    expect(await status.writeStatus(write(ref, uid, 'AddingDrives', { ...timedOut, sequence: 3 }, 'Late'))).toBe(
      'stale',
    );
    const now = await readContainer(ref);
    expect(now?.status?.phase).toBe('Ready');
    expect(now?.status?.writtenBy).toEqual({ ...run, historyLength: 78, sequence: 1 });
    // Events go out with the writes that land, not with the stale ones.
    expect((await eventsOf(ref)).map((e) => e.reason).sort()).toEqual(['Added', 'Ready']);
    // A retried write (the same key) lands again; an earlier write of the same task does not.
    expect(await status.writeStatus(write(ref, uid, 'Ready', { ...run, historyLength: 78, sequence: 1 }))).toBe(
      'applied',
    );
    await status.writeStatus(write(ref, uid, 'Ready', { ...run, historyLength: 78, sequence: 2 }));
    expect(await status.writeStatus(write(ref, uid, 'AddingDrives', { ...run, historyLength: 78, sequence: 1 }))).toBe(
      'stale',
    );
  });

  it('keeps the writes of a later run against those of an earlier one', async () => {
    const ref = { namespace: ns, name: 'late-run' };
    const uid = await createContainer(ref);
    const old = { run: 'run-1', runStartTime: RUN_START };
    const next = { run: 'run-2', runStartTime: LATER_RUN_START };
    expect(
      await status.writeStatus(write(ref, uid, 'AddingDrives', { ...old, historyLength: 1900, sequence: 1 })),
    ).toBe('applied');
    // The run continued as new: its history starts again, and its writes land.
    expect(await status.writeStatus(write(ref, uid, 'Ready', { ...next, historyLength: 3, sequence: 1 }))).toBe(
      'applied',
    );
    expect(
      await status.writeStatus(write(ref, uid, 'AddingDrives', { ...old, historyLength: 1990, sequence: 1 })),
    ).toBe('stale');
    expect((await readContainer(ref))?.status?.phase).toBe('Ready');
  });

  it('never writes on another object that took the name', async () => {
    const ref = { namespace: ns, name: 'replaced' };
    const oldUid = await createContainer(ref);
    const run = { run: 'run-1', runStartTime: RUN_START };
    // A write first, so that the next one for the old object starts from the version it left.
    expect(await status.writeStatus(write(ref, oldUid, 'Signing', { ...run, historyLength: 3, sequence: 1 }))).toBe(
      'applied',
    );
    await api.delete('WekaContainer', ref);
    await expect.poll(() => readContainer(ref)).toBeNull();
    const uid = await createContainer(ref);
    expect(
      await status.writeStatus(write(ref, oldUid, 'Ready', { ...run, historyLength: 9, sequence: 1 }, 'Old')),
    ).toBe('gone');
    const now = await readContainer(ref);
    expect(now?.metadata.uid).toBe(uid);
    expect(now?.status?.phase).toBeUndefined();
    expect(await eventsOf(ref)).toEqual([]);
  });
});

describe('status writes beside other writers', () => {
  it("land after another writer's change without taking it away", async () => {
    const ref = { namespace: ns, name: 'two-writers' };
    const uid = await createContainer(ref);
    const run = { run: 'run-1', runStartTime: RUN_START };
    expect(await status.writeStatus(write(ref, uid, 'Allocating', { ...run, historyLength: 3, sequence: 1 }))).toBe(
      'applied',
    );
    // The watcher writes its own field between two of the workflow's writes.
    await api.applyStatus('WekaContainer', ref, { workflowID: 'container-x' }, FIELD_MANAGER.watcher);
    expect(await status.writeStatus(write(ref, uid, 'Signing', { ...run, historyLength: 9, sequence: 1 }))).toBe(
      'applied',
    );
    const now = await readContainer(ref);
    expect(now?.status?.phase).toBe('Signing');
    expect(now?.status?.workflowID).toBe('container-x');
  });
});

/** A promise and the function that resolves it. */
function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('a worker cut from Temporal in the middle of a workflow task', () => {
  it('cannot put the status back with the write it makes late', { timeout: 240_000 }, async () => {
    const NUM_DRIVES = 6;
    const node = await sharedDrivesNode([{ path: '/dev/nvme0n1', capacityGiB: 7680, type: 'TLC' }], 'late-write');
    const guid = await createWekaCluster(node, 'late-write');
    const ref = { namespace: await uniqueNamespace('late-write'), name: 'drive-0' };
    const connection = await Connection.connect({ address: temporalAddress() });
    const client = new Client({ connection, namespace: temporalNamespace() });
    const deps = testOperatorDeps(client, await uniqueNamespace('weka-operator'));
    const activities = createActivities(deps);

    // Worker A reaches Temporal through a proxy the test can cut. Its status write with the second
    // added drive waits until the test lets it go: as a write does that is slow to reach the
    // apiserver while its worker loses Temporal.
    const held = deferred<StatusWrite>();
    const letGo = deferred();
    const heldOutcome = deferred<StatusWriteOutcome | unknown>();
    let holding = true;
    const gated = {
      ...activities,
      async writeStatus(w: StatusWrite): Promise<StatusWriteOutcome> {
        const added = (w.status as { addedDrives?: unknown[] } | undefined)?.addedDrives?.length;
        if (!holding || added !== 2) return activities.writeStatus(w);
        holding = false;
        held.resolve(w);
        await letGo.promise;
        const outcome = activities.writeStatus(w);
        outcome.then(heldOutcome.resolve, heldOutcome.resolve);
        return outcome;
      },
    };
    const temporalProxy = await startTcpProxy({
      targetPort: Number(temporalAddress().split(':')[1]),
      name: 'temporal-a',
    });
    const direct = await NativeConnection.connect({ address: temporalAddress() });
    const viaProxy = await NativeConnection.connect({ address: `127.0.0.1:${temporalProxy.port}` });
    const common = { namespace: temporalNamespace(), workflowBundle: { codePath: workflowBundlePath() } };
    const mutexWorker = await Worker.create({
      ...common,
      connection: direct,
      taskQueue: mutexTaskQueue(deps.taskQueue),
      activities,
    });
    const workerA = await Worker.create({
      ...common,
      connection: viaProxy,
      taskQueue: deps.taskQueue,
      activities: gated,
      identity: 'worker-a',
      shutdownGraceTime: '1 second',
    });
    const runs = [mutexWorker.run(), workerA.run()];
    let workerB: Worker | undefined;
    try {
      const { handle } = await createDriveContainer(
        { client, deps, operatorNamespace: deps.operatorNamespace, stop: async () => undefined },
        ref,
        { nodeName: node, driveCores: 1, numDrives: NUM_DRIVES, driveCapacity: 500 },
        guid,
      );
      const late = await held.promise;
      expect(late.status?.phase).toBe('AddingDrives');

      // A loses Temporal: its workflow task times out, and worker B does it again and goes on.
      temporalProxy.cut('reset');
      workerB = await Worker.create({
        ...common,
        connection: direct,
        taskQueue: deps.taskQueue,
        activities,
        identity: 'worker-b',
      });
      runs.push(workerB.run());
      const ready = await waitForPhase(ref, 'Ready', 120_000);
      expect(ready.status?.addedDrives).toHaveLength(NUM_DRIVES);

      // A's write lands now, after B's Ready: refused, and the status stays Ready.
      letGo.resolve();
      const outcome = await heldOutcome.promise;
      const after = await readContainer(ref);
      expect(after?.status?.phase).toBe('Ready');
      expect(after?.status?.addedDrives).toHaveLength(NUM_DRIVES);
      expect(outcome).toBe('stale');
      expect(after?.status?.writtenBy?.run).toBe(late.status?.writtenBy.run);
      expect(after?.status?.writtenBy?.historyLength).toBeGreaterThan(late.status?.writtenBy.historyLength ?? 0);
      await handle.terminate('the test is over');
    } finally {
      letGo.resolve();
      temporalProxy.heal();
      for (const w of [mutexWorker, workerA, workerB]) if (w?.getState() === 'RUNNING') w.shutdown();
      await Promise.allSettled(runs);
      await temporalProxy.close();
      await Promise.all([direct.close(), viaProxy.close(), connection.close()]);
    }
  });
});
