// `weka cluster drive` answers for the cluster of the pod it runs in, as the real CLI does (it talks
// to its own cluster's leader): a pod of tenant-a's cluster never lists, shows, deactivates or
// removes a drive of tenant-b's, which sits on the same node's device. Run outside any pod (a
// test's own view of the simulator), it lists every cluster's drives.
import { describe, expect, it } from 'vitest';
import type { SimResult } from '../../../deploy/local/weka-sim/outcome.js';
import { parseDriveList } from '../../../src/weka/index.js';
import {
  createCluster,
  expectOk,
  freshIp,
  freshPortNumbers,
  inPod,
  joinPod,
  memberEnv,
  podEnv,
  signedNode,
  simRoot,
  tool,
  uuid,
  virtualAdd,
} from './helpers.js';

async function twoClusters() {
  const state = await signedNode(await simRoot());
  const pods: string[][] = [];
  for (const [n, name] of [
    [1, 'tenant-a'],
    [2, 'tenant-b'],
  ] as const) {
    const guid = await createCluster(state, name);
    const env = memberEnv(`${name}-drive-0`, guid);
    const id = await joinPod(state, env);
    await expectOk(virtualAdd(state, '/dev/nvme0n1', uuid(n), guid, 100));
    await expectOk(inPod(state, env, 'weka', 'cluster', 'drive', 'add', String(id), uuid(n), '--pool', 'iu4k'));
    pods.push(env);
  }
  return { state, a: pods[0]!, b: pods[1]! };
}

const listed = async (p: Promise<SimResult>) => parseDriveList((await expectOk(p)).stdout).map((d) => d.uuid);

describe('weka cluster drive in a pod', () => {
  it("lists and shows only its own cluster's drives", async () => {
    const { state, a, b } = await twoClusters();
    expect(await listed(inPod(state, a, 'weka', 'cluster', 'drive', '--json'))).toEqual([uuid(1)]);
    expect(await listed(inPod(state, b, 'weka', 'cluster', 'drive', '--json'))).toEqual([uuid(2)]);
    expect(await listed(inPod(state, a, 'weka', 'cluster', 'drive', uuid(2), '--json'))).toEqual([]);
    expect(await listed(tool(state, 'weka', 'cluster', 'drive', '--json'))).toEqual([uuid(1), uuid(2)]);
  });

  it('shows a pod whose container is in no cluster no drive', async () => {
    const { state } = await twoClusters();
    const stem = podEnv('stem', { ...freshPortNumbers(), ip: freshIp() });
    expect(await listed(inPod(state, stem, 'weka', 'cluster', 'drive', '--json'))).toEqual([]);
    expect(await listed(inPod(state, stem, 'weka', 'cluster', 'drive', uuid(1), '--json'))).toEqual([]);
  });

  it("refuses to deactivate or remove another cluster's drive, and changes nothing", async () => {
    const { state, a, b } = await twoClusters();
    for (const action of ['deactivate', 'remove']) {
      const out = await inPod(state, a, 'weka', 'cluster', 'drive', action, uuid(2), '-f');
      expect(out.exitCode).not.toBe(0);
      expect(out.stderr).toContain(`The given drive "${uuid(2)}" does not exist`);
    }
    const still = parseDriveList((await expectOk(inPod(state, b, 'weka', 'cluster', 'drive', '--json'))).stdout);
    expect(still.map((d) => `${d.uuid} ${d.status}`)).toEqual([`${uuid(2)} ACTIVE`]);
  });
});
