// A drive leaves its Weka cluster as Weka asks: deactivated, then removed once Weka has moved its
// data to the cluster's other drives (INACTIVE). While that takes, the teardown says so on the
// object and waits; it never removes a drive that is still phasing out. The simulator deactivates
// at once, so here an exec transport in front of it shows every deactivated drive as still phasing
// out until the test lets it finish (the status real Weka shows meanwhile is in no source: any
// status but ACTIVE and INACTIVE means wait, as the reference reads it).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeExecTransport } from '../../activities/exec/kube-exec.js';
import type { ExecTransport } from '../../activities/exec/transport.js';
import type { Condition } from '../../src/api/index.js';
import { eventually } from '../support/async.js';
import { kubeConfig } from '../support/harness.js';
import {
  deleteDriveContainer,
  readContainer,
  startTestOperator,
  waitGone,
  type TestOperator,
  readyStandaloneContainer,
} from '../support/operator.js';
import { changeCounts, simulatorLog } from '../support/simulator.js';

/**
 * Shows drives read one by one (`weka cluster drive UUID --json`) as still phasing out while
 * `holding`, and a container read by its ID (`weka cluster container ID --json`) as DEACTIVATING
 * while `holdingContainers`.
 */
class PhaseOutTransport implements ExecTransport {
  holding = true;
  holdingContainers = false;
  readonly shown: string[] = [];
  constructor(private readonly inner: ExecTransport) {}

  async run(...args: Parameters<ExecTransport['run']>): ReturnType<ExecTransport['run']> {
    const [, argv] = args;
    const result = await this.inner.run(...args);
    if (result.exitCode !== 0 || argv.length !== 5 || argv[1] !== 'cluster' || argv[4] !== '--json') return result;
    if (argv[2] === 'drive' && this.holding) {
      this.shown.push(argv[3]!);
      return { ...result, stdout: result.stdout.replaceAll('"INACTIVE"', '"PHASING_OUT"') };
    }
    if (argv[2] === 'container' && /^\d+$/.test(argv[3]!) && this.holdingContainers)
      return { ...result, stdout: result.stdout.replaceAll('"INACTIVE"', '"DEACTIVATING"') };
    return result;
  }
}

const DEVICES = [{ path: '/dev/nvme0n1', capacityGiB: 3840, type: 'TLC' as const }];
let op: TestOperator;
let exec: PhaseOutTransport;
beforeAll(async () => {
  exec = new PhaseOutTransport(KubeExecTransport.fromKubeConfig(kubeConfig()));
  op = await startTestOperator({ exec });
});
afterAll(async () => {
  await op?.stop();
});

describe('a drive taken out of its Weka cluster', () => {
  it(
    'is deactivated, waited for while Weka phases its data out (said on the object), and removed only once INACTIVE',
    { timeout: 300_000 },
    async () => {
      const { node, ref, uid, ready } = await readyStandaloneContainer(op, 'phase-out', DEVICES);
      const drives = ready.status?.addedVirtualDrives ?? [];
      expect(drives.length).toBeGreaterThan(0);

      await deleteDriveContainer(op, ref, uid);
      const waiting = await eventually(
        'the teardown to say it waits for the phase-out',
        async () => {
          const c = await readContainer(ref);
          return c?.status?.conditions?.find((x: Condition) => x.type === 'DrivesPhasingOut' && x.status === 'True');
        },
        120_000,
      );
      expect(waiting.reason).toBe('PhasingOut');
      expect(waiting.message).toContain('never forcing it');
      expect(waiting.message).toContain('PHASING_OUT');

      // Deactivated, and not removed while it phases out; the container keeps its drives and capacity.
      const log = await simulatorLog(node);
      const deactivated = [...changeCounts(log, 'drive-deactivate', 'virtualUUID').keys()];
      expect(deactivated.length).toBeGreaterThan(0);
      expect(changeCounts(log, 'drive-remove', 'virtualUUID').size).toBe(0);
      expect((await readContainer(ref))?.metadata.deletionTimestamp).toBeDefined();

      exec.holding = false;
      await waitGone(ref, 120_000);
      const after = await simulatorLog(node);
      for (const d of drives) {
        expect(changeCounts(after, 'drive-deactivate', 'virtualUUID').get(d)).toBe(1);
        expect(changeCounts(after, 'drive-remove', 'virtualUUID').get(d)).toBe(1);
      }
      // Each drive was removed after it was deactivated.
      const changes = after.flatMap((e) => e.changes);
      const at = (kind: string, d: string) => changes.findIndex((c) => c.kind === kind && c['virtualUUID'] === d);
      for (const d of drives) expect(at('drive-remove', d)).toBeGreaterThan(at('drive-deactivate', d));
    },
  );
});

describe('a container taken out of its Weka cluster', () => {
  it(
    'is deactivated, waited for while DEACTIVATING (said on the object), and removed only once INACTIVE',
    { timeout: 300_000 },
    async () => {
      exec.holding = false;
      exec.holdingContainers = true;
      const { node, ref, uid, ready } = await readyStandaloneContainer(op, 'deactivating', DEVICES);
      const containerId = ready.status?.containerID;
      expect(containerId).toBeDefined();

      await deleteDriveContainer(op, ref, uid);
      const waiting = await eventually(
        'the teardown to say it waits for the container to deactivate',
        async () => {
          const c = await readContainer(ref);
          return c?.status?.conditions?.find((x: Condition) => x.type === 'DrivesPhasingOut' && x.status === 'True');
        },
        120_000,
      );
      expect(waiting.message).toContain(`container ${containerId} is DEACTIVATING`);
      const log = await simulatorLog(node);
      const kinds = log.flatMap((e) => e.changes.map((c) => c.kind));
      expect(kinds).toContain('container-deactivate');
      expect(kinds).not.toContain('container-remove');

      exec.holdingContainers = false;
      await waitGone(ref, 120_000);
      const changes = (await simulatorLog(node)).flatMap((e) => e.changes);
      const at = (kind: string) => changes.findIndex((c) => c.kind === kind && c['containerId'] === containerId);
      expect(changes.filter((c) => c.kind === 'container-remove' && c['containerId'] === containerId)).toHaveLength(1);
      expect(at('container-remove')).toBeGreaterThan(at('container-deactivate'));
    },
  );
});
