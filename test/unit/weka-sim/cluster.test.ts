import { access, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLUSTERS_DIR_FILE } from '../../../deploy/local/weka-sim/node-state.js';
import {
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
  createCluster,
  freshIp,
  identityOf,
  inPod,
  joinAddressOf,
  podEnv,
} from './helpers.js';
import { NO_CLUSTER_GUID } from '../../../src/weka/index.js';

async function driveList(state: string, containerId: number): Promise<Array<Record<string, unknown>>> {
  const out = await expectOk(tool(state, 'weka', 'cluster', 'drive', '--container', String(containerId), '--json'));
  return JSON.parse(out.stdout) as Array<Record<string, unknown>>;
}

/** A signed node, a cluster, a container in it, and a virtual drive signed for that cluster. */
async function readyToAdd(root: string) {
  const state = await signedNode(root);
  const guid = await createCluster(state, 'tenant-a');
  const containerId = await addContainer(state, guid, 'drive-0');
  await expectOk(virtualAdd(state, '/dev/nvme0n1', uuid(1), guid, 300));
  return { state, guid, containerId };
}

/** The identity a pod's agent gives, parsed. */
async function identity(state: string, env: readonly string[]) {
  return (
    JSON.parse((await expectOk(identityOf(state, env))).stdout) as { value: { cluster_guid: string; host_id: number } }
  ).value;
}

/** The containers of the cluster the pod's Weka container is in (`weka cluster container --json`). */
async function members(
  state: string,
  env: readonly string[],
): Promise<Array<{ container_name: string; host_ip?: string; mgmt_port?: number }>> {
  return JSON.parse((await expectOk(inPod(state, env, 'weka', 'cluster', 'container', '--json'))).stdout) as Array<{
    container_name: string;
  }>;
}

describe('weka-sim cluster formation', () => {
  it("sets a pod's Weka container up from its environment, a stem until a cluster is created of it", async () => {
    const state = await signedNode(await simRoot());
    const ip = freshIp();
    const env = podEnv('ns_d0', { basePort: 35000, agentPort: 35100, ip });
    expect(await identity(state, env)).toEqual({ cluster_guid: NO_CLUSTER_GUID, host_id: 0 });
    await expectOk(inPod(state, env, 'weka', 'cluster', 'create', ip, '--host-ips', `${ip}:35000`));
    await expectOk(inPod(state, env, 'weka', 'cluster', 'update', '--cluster-name', 'tenant-a'));
    const { cluster_guid: guid, host_id: id } = await identity(state, env);
    expect(guid).not.toBe(NO_CLUSTER_GUID);
    expect(await members(state, env)).toEqual([
      {
        host_id: `HostId<${id}>`,
        hostname: 'node-1',
        container_name: 'ns_d0',
        host_ip: ip,
        status: 'ACTIVE',
      },
    ]);
    expect((await readLog(state)).flatMap((e) => e.changes.map((c) => c.kind))).toEqual(
      expect.arrayContaining(['cluster-create', 'container-add', 'cluster-name']),
    );
  });

  it('creates one cluster of several stems, from one of them, each by management IP and port', async () => {
    const root = await simRoot();
    const [node1, node2] = [await signedNode(root, 'node-1'), await signedNode(root, 'node-2')];
    const a = podEnv('ns_a', { basePort: 35000, agentPort: 35100, ip: '10.1.0.1' });
    const b = podEnv('ns_b', { basePort: 35000, agentPort: 35100, ip: '10.1.0.2' });
    await identity(node2, b);
    await expectOk(
      inPod(
        node1,
        a,
        'weka',
        'cluster',
        'create',
        '10.1.0.1',
        '10.1.0.2',
        '--host-ips',
        '10.1.0.1:35000,10.1.0.2:35000',
      ),
    );
    const [ia, ib] = [await identity(node1, a), await identity(node2, b)];
    expect(ib.cluster_guid).toBe(ia.cluster_guid);
    expect(ia.host_id).not.toBe(ib.host_id);
  });

  it('refuses a create from a member, of an address no stem answers at, or of a member', async () => {
    const state = await signedNode(await simRoot());
    const guid = await createCluster(state, 'tenant-a');
    const ip = freshIp();
    const env = podEnv('ns_d0', { basePort: 35000, agentPort: 35100, ip, joinIps: [joinAddressOf(guid)] });
    expect((await identity(state, env)).cluster_guid).toBe(guid);
    const again = await inPod(state, env, 'weka', 'cluster', 'create', ip, '--host-ips', `${ip}:35000`);
    expect(again.exitCode).toBe(65);
    expect(again.stderr).toContain('already in a cluster');
    const stem = podEnv('ns_d1', { basePort: 36000, agentPort: 36100, ip: freshIp() });
    const nowhere = await inPod(state, stem, 'weka', 'cluster', 'create', '10.9.9.9', '--host-ips', '10.9.9.9:35000');
    expect(nowhere.exitCode).toBe(65);
    expect(nowhere.stderr).toContain('no Weka container answers at 10.9.9.9:35000');
    const [memberIp, memberPort] = joinAddressOf(guid).split(':');
    const ofMember = await inPod(
      state,
      stem,
      'weka',
      'cluster',
      'create',
      memberIp!,
      '--host-ips',
      joinAddressOf(guid),
    );
    expect(ofMember.exitCode).toBe(65);
    expect(memberPort).toBeDefined();
    expect(await changesOfKind(state, 'cluster-create')).toBe(1);
  });

  it('joins a stem through join IPs, applied, at its restart; not before, and not through an unknown address', async () => {
    const state = await signedNode(await simRoot());
    const guid = await createCluster(state, 'tenant-a');
    const env = podEnv('ns_d0', { basePort: 35000, agentPort: 35100, ip: freshIp() });
    await expectOk(inPod(state, env, 'weka', 'local', 'resources', 'join-ips', '10.9.9.9:35000'));
    await expectOk(inPod(state, env, 'weka', 'local', 'resources', 'apply', '-f'));
    await expectOk(inPod(state, env, 'weka', 'local', 'restart', '--force'));
    expect((await identity(state, env)).cluster_guid).toBe(NO_CLUSTER_GUID);
    await expectOk(inPod(state, env, 'weka', 'local', 'resources', 'join-ips', joinAddressOf(guid)));
    expect((await identity(state, env)).cluster_guid).toBe(NO_CLUSTER_GUID);
    await expectOk(inPod(state, env, 'weka', 'local', 'resources', 'apply', '-f'));
    await expectOk(inPod(state, env, 'weka', 'local', 'restart', '--force'));
    expect((await identity(state, env)).cluster_guid).toBe(guid);
    const bad = await inPod(state, env, 'weka', 'local', 'resources', 'join-ips', 'node-1:35000');
    expect(bad.exitCode).toBe(64);
  });

  it('joins through an address a member listens on now, not the stem that had it before on the host', async () => {
    const state = await signedNode(await simRoot());
    const guid = await createCluster(state, 'tenant-a');
    const ip = freshIp();
    // A member's pod made again on its node: the old pod's container had the address, and left.
    const gone = podEnv('ns_old', { basePort: 35000, agentPort: 35100, ip });
    expect((await identity(state, gone)).cluster_guid).toBe(NO_CLUSTER_GUID);
    const now = podEnv('ns_new', { basePort: 35000, agentPort: 35100, ip, joinIps: [joinAddressOf(guid)] });
    expect((await identity(state, now)).cluster_guid).toBe(guid);
    const stem = podEnv('ns_next', { basePort: 36000, agentPort: 36100, ip: freshIp(), joinIps: [`${ip}:35000`] });
    expect((await identity(state, stem)).cluster_guid).toBe(guid);
  });

  it('keeps a second container of a name out of the cluster while the first is in it', async () => {
    const root = await simRoot();
    const [node1, node2] = [await signedNode(root, 'node-1'), await signedNode(root, 'node-2')];
    const guid = await createCluster(node1, 'tenant-a');
    await addContainer(node1, guid, 'drive-0');
    const other = podEnv('drive-0', {
      basePort: 35000,
      agentPort: 35100,
      ip: freshIp(),
      joinIps: [joinAddressOf(guid)],
    });
    expect((await identity(node2, other)).cluster_guid).toBe(NO_CLUSTER_GUID);
  });

  it('numbers containers uniquely across every cluster and node of the root', async () => {
    const root = await simRoot();
    const node1 = await signedNode(root, 'node-1');
    const node2 = await signedNode(root, 'node-2');
    const a = await createCluster(node1, 'tenant-a');
    const b = await createCluster(node2, 'tenant-b');
    const ids = [
      await addContainer(node1, a, 'd0'),
      await addContainer(node2, b, 'd0'),
      await addContainer(node2, a, 'd1'),
    ];
    expect(new Set(ids).size).toBe(3);
  });

  it("keeps the clusters of a node that names its own directory apart from the root's", async () => {
    const root = await simRoot();
    const shared = await signedNode(root, 'node-1');
    const [own, alsoOwn] = [await signedNode(root, 'node-2'), await signedNode(root, 'node-3')];
    for (const state of [own, alsoOwn]) await writeFile(join(state, CLUSTERS_DIR_FILE), join(root, 'site-b') + '\n');
    const a = await createCluster(shared, 'tenant-a');
    const b = await createCluster(own, 'tenant-b');
    // A node of the same set joins its cluster as any node of the root would; one of another set cannot.
    await addContainer(alsoOwn, b, 'd0');
    await expect(addContainer(alsoOwn, a, 'd1')).rejects.toThrow(/did not join/);
    await access(join(root, 'site-b', 'clusters.json'));
  });

  it('refuses every command of a node whose clusters file names no directory', async () => {
    const root = await simRoot();
    const state = await signedNode(root, 'node-1');
    await writeFile(join(state, CLUSTERS_DIR_FILE), '\n');
    const result = await identityOf(state, podEnv('ns_d0'));
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toContain('names no directory');
  });

  it('answers a pod without a Weka container in its environment (yet) as a failure that passes', async () => {
    const state = await signedNode(await simRoot());
    const result = await tool(state, 'weka', 'cluster', 'container', '--json');
    expect(result.exitCode).toBe(75);
  });
});

describe('a cluster whose last container is removed', () => {
  it('is gone with it, and a container of its name can form a new one', async () => {
    const state = await signedNode(await simRoot());
    const guid = await createCluster(state, 'tenant-a');
    const backend = await readClusters(state);
    const id = backend.containers[0]!.containerId;
    await expectOk(tool(state, 'weka', 'cluster', 'container', 'deactivate', String(id)));
    await expectOk(tool(state, 'weka', 'cluster', 'container', 'remove', String(id)));
    expect((await readClusters(state)).clusters).toEqual([]);
    expect(await changesOfKind(state, 'cluster-gone')).toBe(1);
    expect(await createCluster(state, 'tenant-a')).not.toBe(guid);
  });
});

async function readClusters(state: string) {
  return JSON.parse(await readFile(join(state, '..', '..', 'clusters', 'clusters.json'), 'utf8')) as {
    clusters: Array<{ guid: string }>;
    containers: Array<{ containerId: number }>;
  };
}

describe('weka-sim cluster drives', () => {
  it('adds a signed virtual drive to a container in its pool, and removes it by its UUID once deactivated', async () => {
    const { state, containerId } = await readyToAdd(await simRoot());
    const add = await expectOk(
      tool(state, 'weka', 'cluster', 'drive', 'add', String(containerId), uuid(1), '--pool', 'iu4k'),
    );
    expect(add.stdout).toBe('');
    expect(await driveList(state, containerId)).toEqual([
      {
        uuid: uuid(1),
        added_time: expect.any(String),
        device_path: '/dev/nvme0n1',
        serial_number: expect.any(String),
        size_bytes: 300 * 2 ** 30,
        status: 'ACTIVE',
      },
    ]);
    await expectOk(tool(state, 'weka', 'cluster', 'drive', 'deactivate', uuid(1), '-f'));
    await expectOk(tool(state, 'weka', 'cluster', 'drive', 'remove', uuid(1), '-f'));
    expect(await driveList(state, containerId)).toEqual([]);
    expect(await changesOfKind(state, 'drive-add')).toBe(1);
    expect(await changesOfKind(state, 'drive-deactivate')).toBe(1);
    expect(await changesOfKind(state, 'drive-remove')).toBe(1);
  });

  it('refuses a drive add of a virtual UUID signed for another cluster', async () => {
    const { state, containerId } = await readyToAdd(await simRoot());
    const other = await createCluster(state, 'tenant-b');
    await expectOk(virtualAdd(state, '/dev/nvme0n1', uuid(2), other, 10));
    const result = await tool(state, 'weka', 'cluster', 'drive', 'add', String(containerId), uuid(2));
    expect(result.exitCode).toBe(65);
    expect(result.stderr).toContain(`signed for cluster ${other}`);
  });

  it('refuses a drive add of a virtual UUID not signed on this node', async () => {
    const root = await simRoot();
    const { guid, containerId } = await readyToAdd(root);
    const node2 = await signedNode(root, 'node-2');
    await expectOk(virtualAdd(node2, '/dev/nvme0n1', uuid(5), guid, 10));
    // uuid(1) is signed on node-1 only: node-2 cannot add it.
    const result = await tool(node2, 'weka', 'cluster', 'drive', 'add', String(containerId), uuid(1));
    expect(result.exitCode).toBe(65);
    expect(result.stderr).toContain('not signed on any device of node node-2');
    // ...but node-2 can add its own, into the same cluster state.
    await expectOk(tool(node2, 'weka', 'cluster', 'drive', 'add', String(containerId), uuid(5)));
    expect(await driveList(nodeDir(root, 'node-1'), containerId)).toHaveLength(1);
  });

  it('refuses adding the same virtual drive twice', async () => {
    const { state, containerId } = await readyToAdd(await simRoot());
    await expectOk(tool(state, 'weka', 'cluster', 'drive', 'add', String(containerId), uuid(1)));
    const result = await tool(state, 'weka', 'cluster', 'drive', 'add', String(containerId), uuid(1));
    expect(result.exitCode).toBe(65);
    expect(result.stderr).toContain(`${uuid(1)}: Device is already in use by container ${containerId}`);
    expect(await driveList(state, containerId)).toHaveLength(1);
  });

  it('refuses a drive add to an unknown container and a remove of an unknown drive', async () => {
    const { state } = await readyToAdd(await simRoot());
    expect((await tool(state, 'weka', 'cluster', 'drive', 'add', '42', uuid(1))).exitCode).toBe(65);
    const remove = await tool(state, 'weka', 'cluster', 'drive', 'remove', uuid(99));
    expect(remove.exitCode).toBe(65);
    expect(remove.stderr).toContain(`The given drive "${uuid(99)}" does not exist`);
    expect((await readLog(state)).slice(-2).every((e) => e.changes.length === 0)).toBe(true);
  });

  it('rejects a malformed container ID as a usage error', async () => {
    const { state } = await readyToAdd(await simRoot());
    expect((await tool(state, 'weka', 'cluster', 'drive', '--container', '-1')).exitCode).toBe(64);
    expect((await tool(state, 'weka', 'cluster', 'drive', '--container', '0x1')).exitCode).toBe(64);
  });
});

describe('weka-sim cluster state location', () => {
  it('shares <root>/clusters between nodes by default and honours --clusters', async () => {
    const root = await simRoot();
    const node1 = await signedNode(root, 'node-1');
    const node2 = await signedNode(root, 'node-2');
    const guid = await createCluster(node1, 'tenant-a');
    await addContainer(node2, guid, 'd0');
    await expect(access(join(root, 'clusters', 'clusters.json'))).resolves.toBeUndefined();
    const env = podEnv('d1', { basePort: 35000, agentPort: 35100, ip: freshIp(), joinIps: [joinAddressOf(guid)] });
    const elsewhere = await sim(
      '--state',
      node2,
      '--clusters',
      join(root, 'other'),
      ...env,
      '--',
      'weka',
      'local',
      'run',
      'wapi',
      '-H',
      'localhost:35100/jrpc',
      '-W',
      'container-get-identity',
      '--container-name',
      'd1',
      '--json',
    );
    expect(JSON.parse(elsewhere.stdout)).toMatchObject({ value: { cluster_guid: NO_CLUSTER_GUID } });
  });
});
