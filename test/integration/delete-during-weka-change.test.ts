// A container deleted while a Weka command that changes something runs in its pod: the teardown
// starts only once that command has ended, so it undoes what the command did instead of racing
// it. A command exec'd into a pod runs on when its exec stream is cut, so a teardown that stopped
// waiting for it could look before the command lands: the drive would stay signed, or in the
// cluster, with nothing left that knows it. The simulator makes one kind of command slow (its
// fault latency, spent before the change); an exec transport in front of the real one says when
// that command started.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeExecTransport } from '../../activities/exec/kube-exec.js';
import type { ExecTransport } from '../../activities/exec/transport.js';
import { createSimulatedCluster } from '../../deploy/local/shared-drives.js';
import { eventually } from '../support/async.js';
import { kubeConfig, simulatorRoot, uniqueName, uniqueNamespace } from '../support/harness.js';
import { checkAllDeleted } from '../support/invariants.js';
import {
  createDriveContainer,
  deleteDriveContainer,
  readContainer,
  sharedDrivesNode,
  startTestOperator,
  waitGone,
  type TestOperator,
} from '../support/operator.js';
import { sim, simulatorLog } from '../support/simulator.js';

const SLOW_MS = 8_000;

/** Notes when a command whose words start with `watched` was last sent. */
class StartWatchingTransport implements ExecTransport {
  watched: readonly string[] = [];
  started: number | undefined;
  constructor(private readonly inner: ExecTransport) {}

  run(...args: Parameters<ExecTransport['run']>): ReturnType<ExecTransport['run']> {
    const [, argv] = args;
    if (this.watched.length > 0 && this.watched.every((word, i) => argv[i] === word)) this.started = Date.now();
    return this.inner.run(...args);
  }
}

const DEVICES = [{ path: '/dev/nvme0n1', capacityGiB: 3840, type: 'TLC' as const }];
let op: TestOperator;
let exec: StartWatchingTransport;
beforeAll(async () => {
  exec = new StartWatchingTransport(KubeExecTransport.fromKubeConfig(kubeConfig()));
  op = await startTestOperator({ exec });
});
afterAll(async () => {
  await op?.stop();
});

describe('a container deleted while a Weka change runs in its pod', () => {
  for (const { what, slow, done, undone } of [
    {
      what: 'signing a virtual drive',
      slow: ['weka-sign-drive', 'virtual', 'add'],
      done: 'virtual-add',
      undone: 'virtual-remove',
    },
    {
      what: 'adding a drive to the cluster',
      slow: ['weka', 'cluster', 'drive', 'add'],
      done: 'drive-add',
      undone: 'drive-remove',
    },
  ])
    it(
      `${what}: the teardown waits for it to end, then undoes it; nothing is left on the devices or in the cluster`,
      { timeout: 240_000 },
      async () => {
        exec.watched = slow;
        exec.started = undefined;
        const prefix = 'midchange';
        const node = await sharedDrivesNode(DEVICES, prefix);
        await sim(node, 'faults', '--latency-ms', String(SLOW_MS), '--latency-for', slow.join(' '));
        const guid = await createSimulatedCluster(simulatorRoot(), node, uniqueName(prefix));
        const ref = { namespace: await uniqueNamespace(prefix), name: 'drive-0' };
        const spec = { nodeName: node, driveCores: 1, containerCapacity: 600, driveTypesRatio: { tlc: 1, qlc: 0 } };
        const { uid } = await createDriveContainer(op, ref, spec, guid);

        await eventually(`${slow.join(' ')} to start`, async () => exec.started, 120_000, { intervalMs: 50 });
        await deleteDriveContainer(op, ref, uid);
        await waitGone(ref, 120_000);
        expect(await readContainer(ref)).toBeNull();

        const scope = {
          nodes: [node],
          devices: DEVICES.map((d) => d.path),
          clusterGUIDs: [guid],
          namespaces: [ref.namespace],
          operatorNamespace: op.operatorNamespace,
        };
        // The slow command has ended by now (the teardown waited for it, or it ran on meanwhile).
        await new Promise((r) => setTimeout(r, Math.max(0, exec.started! + SLOW_MS + 3_000 - Date.now())));
        const { violations } = await checkAllDeleted(scope, {
          kubeConfig: kubeConfig(),
          simulatorRoot: simulatorRoot(),
        });
        expect(violations).toEqual([]);
        // The change the deletion caught was made (not refused by a cluster the teardown had
        // already left), and undone after it.
        const changes = (await simulatorLog(node)).flatMap((e) => e.changes);
        const made = changes.findIndex((c) => c.kind === done);
        expect(made, `${done} in ${JSON.stringify(changes.map((c) => c.kind))}`).toBeGreaterThanOrEqual(0);
        const virtualUUID = changes[made]!['virtualUUID'];
        expect(changes.findIndex((c) => c.kind === undone && c['virtualUUID'] === virtualUUID)).toBeGreaterThan(made);
      },
    );
});
