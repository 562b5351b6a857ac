// The watcher brings up at most WEKA_MAX_CONCURRENT_BRINGUPS drive containers at once: a burst of
// new containers waits its turn (a Queued condition and Event on each), so the workers are never
// handed more bring-ups than they can keep in memory. A container that says with a False condition
// that it waits for something outside stops counting at once, so it holds back no one else's.
import { afterEach, describe, expect, it } from 'vitest';
import type { WekaContainer } from '../../src/api/index.js';
import { freePorts } from '../../deploy/local/ports.js';
import { eventually, sleep } from '../support/async.js';
import { kstatusOf } from '../support/kstatus.js';
import {
  createContainerObject,
  createDriveContainers,
  deleteContainers,
  isReady,
  listContainers,
  phaseSummary,
} from '../support/containers.js';
import { eventsOf } from '../support/events.js';
import { kubeConfig, uniqueName, uniqueNamespace } from '../support/harness.js';
import { sharedDrivesNode, startOperatorProcess, waitGone } from '../support/operator.js';
import type { OperatorProcess } from '../support/operator-process.js';
import { createWekaCluster } from '../support/simulator.js';

let operator: OperatorProcess | undefined;
afterEach(async () => {
  await operator?.kill();
  operator = undefined;
});

const queued = (c: WekaContainer) => c.status?.conditions?.find((x) => x.type === 'Queued');
/** Its workflow has run: it wrote its phase (every apply of a workflow carries it), or the watcher wrote its id. */
const started = (c: WekaContainer) => c.status?.workflowID !== undefined || c.status?.phase !== undefined;

async function startOperator(limit: number, holdSeconds: number, httpPort: number): Promise<OperatorProcess> {
  return startOperatorProcess({
    WEKA_HTTP_PORT: String(httpPort),
    WEKA_HTTP_ADDRESS: '127.0.0.1',
    WEKA_TASK_QUEUE: uniqueName('bringup'),
    WEKA_OPERATOR_NAMESPACE: await uniqueNamespace('weka-operator'),
    WEKA_MAX_CONCURRENT_BRINGUPS: String(limit),
    WEKA_BRINGUP_HOLD_SECONDS: String(holdSeconds),
  });
}

/**
 * Waits until the operator's watcher has nothing in flight or waiting: it also sees the
 * containers earlier test files left on this control plane, older than this file's, and starts
 * any never started first.
 */
async function quiet(op: OperatorProcess): Promise<void> {
  await eventually(
    'the watcher to have no bring-up in flight or waiting',
    async () => {
      const m = await op.metrics();
      return m.get('weka_drives_bringups_waiting') === 0 && m.get('weka_drives_bringups_in_flight') === 0
        ? true
        : undefined;
    },
    180_000,
  );
}

/** The watcher's startWorkflow actions so far: made, and held back by the bring-up limit. */
async function startCalls(op: OperatorProcess): Promise<{ ok: number; held: number }> {
  const series = (result: string) =>
    op.metricSum('weka_drives_watcher_actions_total', { kind: 'WekaContainer', action: 'startWorkflow', result });
  return { ok: await series('ok'), held: await series('held') };
}

const spec = (node: string) => ({ nodeName: node, driveCores: 1, numDrives: 1, driveCapacity: 384 });

describe('bringing up a burst of drive containers', () => {
  it(
    'starts at most the limit at a time and queues the rest with a condition and an Event',
    { timeout: 600_000 },
    async () => {
      const LIMIT = 2;
      const COUNT = 6;
      const node = await sharedDrivesNode([{ path: '/dev/nvme0n1', capacityGiB: 3840, type: 'TLC' }], 'bringup');
      const guid = await createWekaCluster(node, 'burst');
      const [port] = await freePorts(1);
      // The hold outlasts a bring-up here many times over, so none of the burst stops counting.
      operator = await startOperator(LIMIT, 60, port!);
      await quiet(operator);
      const before = await startCalls(operator);
      const kc = kubeConfig();
      const ns = await uniqueNamespace('bringup');
      const refs = await createDriveContainers(
        kc,
        ns,
        Array.from({ length: COUNT }, (_, i) => ({ name: `drive-${i}`, spec: spec(node) })),
        { clusterGUID: guid, concurrency: COUNT },
      );

      // Watch the whole bring-up: never more than LIMIT started and not yet Ready at once.
      let most = 0;
      let sawQueued = false;
      const queuedSeen: WekaContainer[] = [];
      let mostWaiting = 0;
      let all: WekaContainer[] = [];
      const deadline = Date.now() + 240_000;
      while (Date.now() < deadline) {
        all = await listContainers(kc, ns);
        most = Math.max(most, all.filter((c) => started(c) && !isReady(c)).length);
        sawQueued ||= all.some((c) => queued(c)?.status === 'True');
        queuedSeen.push(...all.filter((c) => queued(c)?.status === 'True' && !started(c)).slice(0, 1));
        mostWaiting = Math.max(mostWaiting, (await operator.metrics()).get('weka_drives_bringups_waiting') ?? 0);
        if (all.length === COUNT && all.every(isReady)) break;
        await sleep(200);
      }
      expect(all.every(isReady), phaseSummary(all)).toBe(true);
      expect(most, 'containers in bring-up at once').toBeLessThanOrEqual(LIMIT);
      expect(sawQueued, 'a container waiting its turn shows the Queued condition').toBe(true);
      // A GitOps tool reads a queued container as at work, not done.
      expect(new Set((await kstatusOf(queuedSeen.slice(0, 20))).map((r) => r.status))).toEqual(new Set(['InProgress']));
      // Once started, the watcher's condition is gone: nothing says Queued on a Ready container.
      for (const c of all) expect(queued(c), `${c.metadata.name}: ${JSON.stringify(queued(c))}`).toBeUndefined();
      const events = (await Promise.all(refs.map((r) => eventsOf(r)))).flat();
      const queuedEvents = events.filter((e) => e.reason === 'Queued');
      expect(queuedEvents.length).toBeGreaterThanOrEqual(COUNT - LIMIT);
      expect(queuedEvents[0]!.message).toMatch(/at most 2 drive containers at once/);
      expect(mostWaiting, 'weka_drives_bringups_waiting during the burst').toBeGreaterThan(0);
      await quiet(operator);
      // Each time a container was held back counts apart, as held, not as a start call. (The
      // start calls themselves may include other files' containers on this control plane.)
      const after = await startCalls(operator);
      expect(after.ok - before.ok, 'startWorkflow calls made').toBeGreaterThanOrEqual(COUNT);
      expect(after.held - before.held, 'startWorkflow held back by the limit').toBeGreaterThanOrEqual(COUNT - LIMIT);

      await deleteContainers(kc, refs);
      for (const r of refs) await waitGone(r, 120_000);
      expect(await operator.stop(), operator.output().slice(-4000)).toBe(0);
    },
  );

  it(
    'lets the others start while a container waits for its node, without waiting out the hold time',
    { timeout: 600_000 },
    async () => {
      const node = await sharedDrivesNode([{ path: '/dev/nvme0n1', capacityGiB: 3840, type: 'TLC' }], 'bringup');
      const guid = await createWekaCluster(node, 'unplaced');
      const [port] = await freePorts(1);
      // A hold longer than the test: the waiting container must free its place by its condition.
      operator = await startOperator(1, 600, port!);
      await quiet(operator);
      const kc = kubeConfig();
      const ns = await uniqueNamespace('bringup');
      // No node name: its workflow waits for one, parked, and never settles on its own.
      const unplaced = { namespace: ns, name: 'unplaced' };
      await createContainerObject(kc, unplaced, { driveCores: 1, numDrives: 1, driveCapacity: 384 });
      await eventually('the unplaced container to start', async () =>
        (await listContainers(kc, ns)).some(started) ? true : undefined,
      );
      const refs = await createDriveContainers(
        kc,
        ns,
        ['drive-a', 'drive-b'].map((name) => ({ name, spec: spec(node) })),
        { clusterGUID: guid },
      );
      const all = await eventually(
        'both placed containers to be Ready',
        async () => {
          const list = await listContainers(kc, ns);
          const placed = list.filter((c) => c.metadata.name !== 'unplaced');
          return placed.length === 2 && placed.every(isReady) ? list : undefined;
        },
        120_000,
      );
      const waiting = all.find((c) => c.metadata.name === 'unplaced');
      // No node named: it waits for a person to name one.
      expect(waiting?.status?.phase).toBe('Refused');
      expect(waiting?.status?.conditions?.find((c) => c.type === 'Stalled')?.reason).toBe('NoNodeName');
      const reasons = (await Promise.all(refs.map((r) => eventsOf(r)))).flat().map((e) => e.reason);
      expect(reasons, 'the placed containers waited their turn').toContain('Queued');

      await deleteContainers(kc, [unplaced, ...refs]);
      for (const r of [unplaced, ...refs]) await waitGone(r, 120_000);
      expect(await operator.stop(), operator.output().slice(-4000)).toBe(0);
    },
  );
});
