// `weka status --json` in the simulator, read by the operator's own parser (src/weka/cluster-status.ts)
// so that both sides are held to one format, and the `cluster-health` knob that makes a cluster
// look unhealthy to it.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseClusterStatus, unhealthyReasons, type ClusterStatus } from '../../../src/weka/cluster-status.js';
import {
  changesOfKind,
  createCluster,
  expectOk,
  freshIp,
  freshPortNumbers,
  inPod,
  joinPod,
  memberEnv,
  nodeDir,
  podEnv,
  signedNode,
  sim,
  simRoot,
  tool,
  uuid,
  virtualAdd,
} from './helpers.js';

const GIB = 2 ** 30;

function status(state: string, env: readonly string[]) {
  return inPod(state, env, 'weka', 'status', '--json');
}

async function parsedStatus(state: string, env: readonly string[]): Promise<ClusterStatus> {
  return parseClusterStatus((await expectOk(status(state, env))).stdout);
}

async function driveAdd(state: string, containerId: number, virtualUUID: string): Promise<void> {
  await expectOk(tool(state, 'weka', 'cluster', 'drive', 'add', String(containerId), virtualUUID, '--pool', 'iu4k'));
}

function clusterHealth(state: string, ...args: string[]) {
  return sim('--state', state, 'cluster-health', ...args);
}

/**
 * A signed node with cluster tenant-a (its backend and two drive containers, drive-0 with two
 * virtual drives of 300 and 200 GiB) and cluster tenant-b (a drive container with one of 100 GiB).
 */
async function twoClusters() {
  const root = await simRoot();
  const state = await signedNode(root);
  const guid = await createCluster(state, 'tenant-a');
  const other = await createCluster(state, 'tenant-b');
  const env = memberEnv('drive-0', guid);
  const env1 = memberEnv('drive-1', guid);
  const otherEnv = memberEnv('other-0', other);
  const id = await joinPod(state, env);
  await joinPod(state, env1);
  const otherId = await joinPod(state, otherEnv);
  await expectOk(virtualAdd(state, '/dev/nvme0n1', uuid(1), guid, 300));
  await expectOk(virtualAdd(state, '/dev/nvme0n1', uuid(2), guid, 200));
  await expectOk(virtualAdd(state, '/dev/nvme0n1', uuid(3), other, 100));
  await driveAdd(state, id, uuid(1));
  await driveAdd(state, id, uuid(2));
  await driveAdd(state, otherId, uuid(3));
  return { root, state, guid, other, env, env1, otherEnv };
}

describe('weka-sim weka status --json', () => {
  it("prints the cluster's figures in the real tool's fields, healthy by default", async () => {
    const { state, env, otherEnv } = await twoClusters();
    const out = await expectOk(status(state, env));
    // Exactly the fields the reference reads (WekaStatusResponse), nothing more, in the real tool's
    // (alphabetical) key order.
    const printed = JSON.parse(out.stdout) as Record<string, unknown>;
    expect(Object.keys(printed)).toEqual(Object.keys(printed).sort());
    expect(Object.keys(printed['containers'] as object)).toEqual([
      'active',
      'backends',
      'clients',
      'computes',
      'drives',
      'total',
    ]);
    expect(printed).toEqual({
      active_alerts_count: 0,
      capacity: {
        hot_spare_bytes: 0,
        total_bytes: 500 * GIB,
        unavailable_bytes: 0,
        unprovisioned_bytes: 500 * GIB,
      },
      containers: {
        active: 3,
        total: 3,
        backends: { active: 3, total: 3 },
        clients: { active: 0, total: 0 },
        computes: { active: 0, total: 0 },
        drives: { active: 3, total: 3 },
      },
      drives: { active: 2, total: 2 },
      hot_spare: 0,
      io_status: 'STARTED',
      rebuild: { movingData: false, progressPercent: 0, protectionState: [{ MiB: 0, numFailures: 0, percent: 100 }] },
      status: 'OK',
      stripe_data_drives: 0,
      stripe_protection_drives: 0,
    });
    const parsed = parseClusterStatus(out.stdout);
    expect(parsed).toEqual({
      status: 'OK',
      drives: { active: 2, total: 2 },
      driveContainers: { active: 3, total: 3 },
      rebuild: { movingData: false, progressPercent: 0, protectionState: [{ numFailures: 0, percent: 100 }] },
    });
    expect(unhealthyReasons(parsed)).toEqual([]);
    // The other cluster's pod sees only its own cluster.
    expect(await parsedStatus(state, otherEnv)).toMatchObject({
      drives: { active: 1, total: 1 },
      driveContainers: { active: 2, total: 2 },
    });
  });

  it('counts a deactivated drive, a deactivated container and one whose process is gone as not active', async () => {
    const { state, env } = await twoClusters();
    await expectOk(tool(state, 'weka', 'cluster', 'drive', 'deactivate', uuid(2), '-f'));
    const out = await expectOk(status(state, env));
    expect(JSON.parse(out.stdout)).toMatchObject({
      capacity: { total_bytes: 300 * GIB, unavailable_bytes: 200 * GIB, unprovisioned_bytes: 300 * GIB },
      drives: { active: 1, total: 2 },
    });
    expect(unhealthyReasons(parseClusterStatus(out.stdout))).toEqual(['1 of 2 drives are active']);

    // drive-1's pod is gone: its process with it, though the cluster still lists it as ACTIVE.
    await expectOk(sim('--state', state, 'process', '--name', 'drive-1', 'gone'));
    expect((await parsedStatus(state, env)).driveContainers).toEqual({ active: 2, total: 3 });
    await expectOk(sim('--state', state, 'process', '--name', 'drive-1', 'running'));
    expect((await parsedStatus(state, env)).driveContainers).toEqual({ active: 3, total: 3 });

    const ids = JSON.parse((await expectOk(inPod(state, env, 'weka', 'cluster', 'container', '--json'))).stdout) as {
      host_id: string;
      container_name: string;
    }[];
    const drive1 = ids.find((c) => c.container_name === 'drive-1')!.host_id.replace(/\D/g, '');
    await expectOk(tool(state, 'weka', 'cluster', 'container', 'deactivate', drive1));
    const reasons = unhealthyReasons(await parsedStatus(state, env));
    expect(reasons).toEqual(['1 of 2 drives are active', '2 of 3 drive containers are active']);
  });

  it('shows a health override, on every node of the root, until it is cleared', async () => {
    const { root, state, guid, env, otherEnv } = await twoClusters();
    // A drive container of the same cluster on another node under the root.
    const state2 = nodeDir(root, 'node-2');
    await expectOk(sim('--state', state2, 'init-node', '--device', '/dev/nvme0n1:1000:TLC'));
    const env2 = memberEnv('drive-2', guid);
    await joinPod(state2, env2);

    await expectOk(
      clusterHealth(
        state,
        guid.toUpperCase(),
        '--status',
        'REBUILDING',
        '--moving-data',
        '--progress',
        '42.5',
        '--failures',
        '1',
        '--percent',
        '12.5',
      ),
    );
    const unhealthy = {
      status: 'REBUILDING',
      drives: { active: 2, total: 2 },
      driveContainers: { active: 4, total: 4 },
      rebuild: {
        movingData: true,
        progressPercent: 42.5,
        protectionState: [
          { numFailures: 0, percent: 87.5 },
          { numFailures: 1, percent: 12.5 },
        ],
      },
    };
    expect(await parsedStatus(state, env)).toEqual(unhealthy);
    expect(await parsedStatus(state2, env2)).toEqual(unhealthy);
    expect(unhealthyReasons(unhealthy)).toEqual([
      'status is REBUILDING (a disruption waits for OK or REDISTRIBUTING)',
      'not fully protected (12.5% of the data has lost 1 copies)',
      'a rebuild is moving data (42.5% done)',
    ]);
    expect(JSON.parse((await expectOk(status(state, env))).stdout)).toMatchObject({
      rebuild: {
        protectionState: [
          { MiB: 0, numFailures: 0, percent: 87.5 },
          { MiB: 0, numFailures: 1, percent: 12.5 },
        ],
      },
    });
    // The other cluster is untouched.
    expect(unhealthyReasons(await parsedStatus(state, otherEnv))).toEqual([]);

    // Setting again replaces the whole override.
    await expectOk(clusterHealth(state, guid, '--status', 'PARTIALLY_PROTECTED'));
    expect(await parsedStatus(state, env)).toMatchObject({
      status: 'PARTIALLY_PROTECTED',
      rebuild: { movingData: false, progressPercent: 0, protectionState: [{ numFailures: 0, percent: 100 }] },
    });

    await expectOk(clusterHealth(state2, guid, '--clear'));
    expect(unhealthyReasons(await parsedStatus(state, env))).toEqual([]);
    expect((await parsedStatus(state, env)).status).toBe('OK');
    // Clearing again, or a cluster that is gone, has nothing to do.
    expect((await expectOk(clusterHealth(state, guid, '--clear'))).stdout).toContain('no health override');
    await expectOk(clusterHealth(state, uuid(99), '--clear'));
    expect(await changesOfKind(state, 'cluster-health-set')).toBe(2);
    expect(await changesOfKind(state2, 'cluster-health-clear')).toBe(1);
    expect(await changesOfKind(state, 'cluster-health-clear')).toBe(0);
  });

  it('keeps the override in the shared cluster state', async () => {
    const { root, state, guid } = await twoClusters();
    await expectOk(clusterHealth(state, guid, '--moving-data', '--progress', '10'));
    const saved = JSON.parse(await readFile(join(root, 'clusters', 'clusters.json'), 'utf8')) as {
      clusters: { guid: string; health?: unknown }[];
    };
    expect(saved.clusters.find((c) => c.guid === guid)?.health).toEqual({ movingData: true, progressPercent: 10 });
  });

  it.each([
    [['--status', 'REBUILDING'], 65, 'no cluster with GUID'],
    [[], 64, 'nothing to set'],
    [['--failures', '1'], 64, '--failures and --percent go together'],
    [['--percent', '5'], 64, '--failures and --percent go together'],
    [['--failures', '0', '--percent', '5'], 64, '--failures must be an integer >= 1'],
    [['--failures', '1', '--percent', '101'], 64, '--percent must be a percentage'],
    [['--progress', '-1'], 64, '--progress must be a percentage'],
    [['--status', 'rebuilding'], 64, '--status must be a status word'],
    [['--clear', '--status', 'OK'], 64, '--clear takes no other options'],
    [['--bogus'], 64, 'unknown option --bogus'],
  ])('cluster-health %j is refused with exit %i', async (args, exitCode, message) => {
    const state = await signedNode(await simRoot());
    const result = await clusterHealth(state, uuid(99), ...args);
    expect(result.exitCode).toBe(exitCode);
    expect(result.stderr).toContain(message);
  });

  it('refuses a GUID that is not one, and no GUID', async () => {
    const state = await signedNode(await simRoot());
    expect((await clusterHealth(state, 'not-a-guid', '--clear')).exitCode).toBe(64);
    expect((await clusterHealth(state, '--clear')).exitCode).toBe(64);
  });

  it('refuses a pod whose container is in no cluster, and the node itself', async () => {
    const state = await signedNode(await simRoot());
    const stem = await status(state, podEnv('stem-0', { ...freshPortNumbers(), ip: freshIp() }));
    expect(stem).toMatchObject({ exitCode: 65, stdout: '' });
    expect(stem.stderr).toContain('this container is not in a cluster');
    const onNode = await tool(state, 'weka', 'status', '--json');
    expect(onNode).toMatchObject({ exitCode: 75, stdout: '' });
    expect(onNode.stderr).toContain('no local Weka container');
  });

  it('refuses the text form and stray arguments with a usage error', async () => {
    const { state, env } = await twoClusters();
    const text = await inPod(state, env, 'weka', 'status');
    expect(text).toMatchObject({ exitCode: 64, stdout: '' });
    expect(text.stderr).toContain('the simulator prints only `weka status --json`');
    expect((await inPod(state, env, 'weka', 'status', 'extra', '--json')).exitCode).toBe(64);
    expect((await inPod(state, env, 'weka', 'status', '--json', '--verbose')).exitCode).toBe(64);
  });
});
