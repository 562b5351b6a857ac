// Taking a container out of its cluster in the simulator: `weka cluster container deactivate` and
// `remove`, what they refuse, the name joining again from another node; then the typed calls and
// the removeWekaContainer activity through an exec transport into the shims.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { LocalExecTransport } from '../../../activities/exec/local-exec.js';
import type { ExecTarget } from '../../../activities/exec/transport.js';
import type { ActivityDeps } from '../../../activities/deps.js';
import { createWekaActivities } from '../../../activities/weka.js';
import {
  WekaCommandFailed,
  WekaCommandRefused,
  completeCall,
  containerDeactivateCall,
  containerRemoveCall,
  containerStatusCall,
  hostNotFound,
  nextContainerRemovalStep,
  type WekaCall,
  NO_CLUSTER_GUID,
} from '../../../src/weka/index.js';
import {
  serveShims,
  changesOfKind,
  expectOk,
  nodeDir,
  readLog,
  signedNode,
  sim,
  simRoot,
  tool,
  uuid,
  virtualAdd,
  addContainer,
  containerAdd,
  createCluster,
} from './helpers.js';

interface Listed {
  containerId: number;
  name: string;
  hostname: string;
  clusterGUID: string;
  status: string;
}

/**
 * The containers with the given ID, or of the cluster after --cluster-guid (but its backend), as
 * the simulator's state holds them: a Weka CLI lists only the cluster of the pod it runs in.
 */
async function listed(state: string, ...args: string[]): Promise<Listed[]> {
  const file = join(state, '..', '..', 'clusters', 'clusters.json');
  const { containers } = JSON.parse(await readFile(file, 'utf8')) as { containers: Listed[] };
  const guid = args[0] === '--cluster-guid' ? args[1] : undefined;
  const id = guid === undefined ? Number(args[0]) : undefined;
  return containers.filter((c) =>
    guid !== undefined ? c.clusterGUID === guid && !c.name.startsWith('backend-') : c.containerId === id,
  );
}

/** A container of cluster tenant-a on node-1 with one drive (a signed virtual drive) in the cluster. */
async function containerWithDrive(root: string) {
  const state = await signedNode(root, 'node-1');
  const guid = await createCluster(state, 'tenant-a');
  const containerId = await addContainer(state, guid, 'drive-0');
  await expectOk(virtualAdd(state, '/dev/nvme0n1', uuid(1), guid, 300));
  await expectOk(tool(state, 'weka', 'cluster', 'drive', 'add', String(containerId), uuid(1), '--pool', 'iu4k'));
  return { state, guid, containerId, driveUUID: uuid(1) };
}

/** Takes a drive out of its cluster as Weka asks: deactivated, then removed. */
async function takeDriveOut(state: string, driveUUID: string): Promise<void> {
  await expectOk(tool(state, 'weka', 'cluster', 'drive', 'deactivate', driveUUID, '-f'));
  await expectOk(tool(state, 'weka', 'cluster', 'drive', 'remove', driveUUID, '-f'));
}

const deactivate = (state: string, ...ids: string[]) =>
  tool(state, 'weka', 'cluster', 'container', 'deactivate', ...ids);
const remove = (state: string, id: number, ...flags: string[]) =>
  tool(state, 'weka', 'cluster', 'container', 'remove', String(id), ...flags);

describe('weka-sim container deactivate and remove', () => {
  it('shows a container ACTIVE by its ID, as the real CLI prints it; an unknown ID is just not listed', async () => {
    const { state, containerId } = await containerWithDrive(await simRoot());
    const shown = JSON.parse(
      (await expectOk(tool(state, 'weka', 'cluster', 'container', String(containerId), '--json'))).stdout,
    ) as unknown;
    expect(shown).toEqual([
      expect.objectContaining({
        host_id: `HostId<${containerId}>`,
        hostname: 'node-1',
        container_name: 'drive-0',
        status: 'ACTIVE',
      }),
    ]);
    expect(JSON.parse((await expectOk(tool(state, 'weka', 'cluster', 'container', '42', '--json'))).stdout)).toEqual(
      [],
    );
    expect((await tool(state, 'weka', 'cluster', 'container', 'x')).exitCode).toBe(64);
  });

  it('refuses to remove an active container, and changes nothing', async () => {
    const state = await signedNode(await simRoot());
    const guid = await createCluster(state, 'tenant-a');
    const id = await addContainer(state, guid, 'drive-0');
    const result = await remove(state, id);
    expect(result.exitCode).toBe(65);
    expect(result.stderr).toContain(`container ${id} (drive-0) is ACTIVE; deactivate it first`);
    expect((await listed(state, String(id)))[0]?.status).toBe('ACTIVE');
    expect(await changesOfKind(state, 'container-remove')).toBe(0);
  });

  it('refuses to remove a container that still has drives, even inactive, and changes nothing', async () => {
    const { state, containerId, driveUUID } = await containerWithDrive(await simRoot());
    await expectOk(deactivate(state, String(containerId)));
    const result = await remove(state, containerId);
    expect(result.exitCode).toBe(65);
    expect(result.stderr).toContain(`still has 1 drive(s) in the cluster (${driveUUID})`);
    const last = (await readLog(state)).at(-1)!;
    expect(last).toMatchObject({ exitCode: 65, changes: [] });
    expect(last.message).toContain('still has 1 drive(s)');
    expect(await listed(state, String(containerId))).toHaveLength(1);
  });

  it('deactivates once: a second deactivate succeeds and logs no change', async () => {
    const { state, containerId } = await containerWithDrive(await simRoot());
    expect((await expectOk(deactivate(state, String(containerId)))).stdout).toContain('INACTIVE');
    await expectOk(deactivate(state, String(containerId), '--no-wait'));
    expect((await listed(state, String(containerId)))[0]?.status).toBe('INACTIVE');
    expect(await changesOfKind(state, 'container-deactivate')).toBe(1);
    // Deactivating the container leaves its drives to `drive deactivate` and `drive remove`.
    expect(
      JSON.parse((await tool(state, 'weka', 'cluster', 'drive', '--container', String(containerId), '--json')).stdout),
    ).toHaveLength(1);
  });

  it('refuses deactivating an unknown ID (changing none of the others) and no ID at all', async () => {
    const { state, containerId } = await containerWithDrive(await simRoot());
    const result = await deactivate(state, String(containerId), '42');
    expect(result.exitCode).toBe(65);
    expect(result.stderr).toContain('Host HostId<42> not found');
    expect((await listed(state, String(containerId)))[0]?.status).toBe('ACTIVE');
    expect((await deactivate(state)).exitCode).toBe(64);
  });

  it('removes an inactive container without drives; a second remove is refused as unknown', async () => {
    const { state, guid, containerId, driveUUID } = await containerWithDrive(await simRoot());
    await takeDriveOut(state, driveUUID);
    await expectOk(deactivate(state, String(containerId)));
    expect((await expectOk(remove(state, containerId, '--no-unimprint'))).stdout).toContain(
      `Removed container ${containerId}`,
    );
    expect(await listed(state, String(containerId))).toEqual([]);
    expect(await listed(state, '--cluster-guid', guid)).toEqual([]);
    const again = await remove(state, containerId);
    expect(again.exitCode).toBe(65);
    expect(again.stderr).toContain(`Host HostId<${containerId}> not found`);
    const removals = (await readLog(state)).flatMap((e) => e.changes).filter((c) => c.kind === 'container-remove');
    expect(removals).toEqual([
      { kind: 'container-remove', containerId, clusterGUID: guid, name: 'drive-0', hostname: 'node-1' },
    ]);
  });

  it('keeps refusing the name while the container exists, and lets it join again from another node once removed', async () => {
    const root = await simRoot();
    const { state, guid, containerId, driveUUID } = await containerWithDrive(root);
    const node2 = await signedNode(root, 'node-2');
    // The same name on node-2 stays a stem, trying to join, while the first is in the cluster.
    const ports = { basePort: 35000, agentPort: 35100 };
    const stem = async () =>
      JSON.parse((await expectOk(containerAdd(node2, guid, 'drive-0', ports))).stdout) as {
        value: { cluster_guid: string; host_id: number };
      };
    expect((await stem()).value.cluster_guid).toBe(NO_CLUSTER_GUID);

    await takeDriveOut(state, driveUUID);
    await expectOk(deactivate(state, String(containerId)));
    expect((await stem()).value.cluster_guid).toBe(NO_CLUSTER_GUID);

    await expectOk(remove(state, containerId));
    const joined = (await stem()).value;
    expect(joined.cluster_guid).toBe(guid);
    const again = joined.host_id;
    expect(again).not.toBe(containerId);
    expect(await listed(node2, '--cluster-guid', guid)).toEqual([
      expect.objectContaining({
        containerId: again,
        name: 'drive-0',
        hostname: 'node-2',
        clusterGUID: guid,
        status: 'ACTIVE',
      }),
    ]);
    // The old ID stays gone: IDs are never reused.
    expect(await listed(node2, String(containerId))).toEqual([]);
  });

  it('reads cluster state written before containers had a status as ACTIVE', async () => {
    const root = await simRoot();
    const state = await signedNode(root);
    const guid = await createCluster(state, 'tenant-a');
    const id = await addContainer(state, guid, 'drive-0');
    const file = join(root, 'clusters', 'clusters.json');
    const saved = JSON.parse(await readFile(file, 'utf8')) as { containers: Array<Record<string, unknown>> };
    for (const c of saved.containers) delete c['status'];
    await writeFile(file, JSON.stringify(saved));
    const shown = await expectOk(tool(state, 'weka', 'cluster', 'container', String(id), '--json'));
    expect((JSON.parse(shown.stdout) as Array<{ status: string }>)[0]?.status).toBe('ACTIVE');
    expect((await remove(state, id)).exitCode).toBe(65);
  });
});

describe('removing a container through an exec transport into the simulator', () => {
  async function setUp() {
    const root = await simRoot();
    const shimDir = await serveShims(root);
    const { state, guid, containerId, driveUUID } = await containerWithDrive(root);
    // Pods are named after their node here; the mapping stands in for kwok's exec environment.
    const transport = new LocalExecTransport({
      resolveTarget: (t) => ({
        env: { PATH: `${shimDir}:${process.env['PATH'] ?? ''}`, WEKA_SIM_STATE: nodeDir(root, t.pod) },
      }),
    });
    const pod: ExecTarget = { namespace: 'weka', pod: 'node-1' };
    const run = async <T>(call: WekaCall<T>): Promise<T> => completeCall(call, await transport.run(pod, call.argv));
    // removeWekaContainer never calls the apiserver; the client only needs a cluster to be built.
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'none', server: 'https://127.0.0.1:9' }],
      users: [{ name: 'none' }],
      contexts: [{ name: 'none', cluster: 'none', user: 'none' }],
      currentContext: 'none',
    });
    const deps: Pick<ActivityDeps, 'kubeConfig' | 'exec'> = { kubeConfig, exec: transport };
    const activities = createWekaActivities(deps as ActivityDeps);
    const target = { namespace: 'weka', pod: 'node-1', container: 'weka' };
    return { root, state, guid, containerId, driveUUID, run, activities, target };
  }

  it(
    'probes, deactivates and removes exactly once, even when remove crashes after its effect',
    { timeout: 30_000 },
    async () => {
      const { state, containerId, driveUUID, run } = await setUp();
      // Blind, remove is refused: the container is active and has a drive.
      await expect(run(containerRemoveCall(containerId))).rejects.toBeInstanceOf(WekaCommandRefused);
      await takeDriveOut(state, driveUUID);

      const request = { containerId, name: 'drive-0' };
      const probed = await run(containerStatusCall(containerId));
      expect(probed).toMatchObject([{ containerId, status: 'ACTIVE' }]);
      expect(nextContainerRemovalStep(probed, request)).toBe('deactivate');
      await run(containerDeactivateCall(containerId));
      const inactive = await run(containerStatusCall(containerId));
      expect(nextContainerRemovalStep(inactive, request)).toBe('remove');

      await expectOk(sim('--state', state, 'faults', '--fail-after-effect-rate', '1'));
      await expect(run(containerRemoveCall(containerId))).rejects.toBeInstanceOf(WekaCommandFailed);
      await expectOk(sim('--state', state, 'faults', '--clear'));
      // The retry probes first and finds the crashed attempt's effect; a blind retry is refused.
      const gone = await run(containerStatusCall(containerId));
      expect(gone).toEqual([]);
      expect(nextContainerRemovalStep(gone, request)).toBe('already-done');
      const refused = run(containerRemoveCall(containerId));
      await expect(refused).rejects.toBeInstanceOf(WekaCommandRefused);
      await expect(refused).rejects.toThrow(hostNotFound(containerId));
      expect(await changesOfKind(state, 'container-deactivate')).toBe(1);
      expect(await changesOfKind(state, 'container-remove')).toBe(1);
    },
  );

  it(
    'removeWekaContainer: refuses while drives remain, then removes, then is already done',
    { timeout: 30_000 },
    async () => {
      const { state, guid, containerId, driveUUID, activities, target } = await setUp();
      const refused = activities.removeWekaContainer({ target, containerId });
      await expect(refused).rejects.toBeInstanceOf(WekaCommandRefused);
      await expect(refused).rejects.toThrow(/still has 1 drive\(s\) in the cluster/);
      expect(await changesOfKind(state, 'container-remove')).toBe(0);

      await takeDriveOut(state, driveUUID);
      await activities.removeWekaContainer({ target, containerId, name: 'drive-0' });
      expect(await listed(state, '--cluster-guid', guid)).toEqual([]);
      await activities.removeWekaContainer({ target, containerId, name: 'drive-0' });
      expect(await changesOfKind(state, 'container-deactivate')).toBe(1);
      expect(await changesOfKind(state, 'container-remove')).toBe(1);
      // The mutating commands ran once each; everything after the removal was a probe.
      const argvs = (await readLog(state)).map((e) => e.argv.slice(1, 4).join(' '));
      expect(argvs.filter((a) => a === 'cluster container remove')).toHaveLength(2); // refused, then done
      expect(argvs.filter((a) => a === 'cluster container deactivate')).toHaveLength(1);
    },
  );

  it(
    'removeWekaContainer: a container listed under the ID with another name is a conflict',
    { timeout: 30_000 },
    async () => {
      const { state, containerId, activities, target } = await setUp();
      await expect(activities.removeWekaContainer({ target, containerId, name: 'drive-9' })).rejects.toMatchObject({
        type: 'WekaStateConflict',
        nonRetryable: true,
      });
      expect(await changesOfKind(state, 'container-deactivate')).toBe(0);
    },
  );
});
