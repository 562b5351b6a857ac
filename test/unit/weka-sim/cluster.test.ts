import { access, writeFile } from 'node:fs/promises';
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
  freshPorts,
} from './helpers.js';

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

describe('weka-sim cluster formation', () => {
  it('creates clusters with distinct GUIDs and lists them', async () => {
    const state = await signedNode(await simRoot());
    const a = await createCluster(state, 'tenant-a');
    const b = await createCluster(state, 'tenant-b');
    expect(a).not.toBe(b);
    const list = JSON.parse((await tool(state, 'weka', 'cluster', 'list', '--json')).stdout) as unknown;
    expect(list).toEqual([
      { name: 'tenant-a', guid: a },
      { name: 'tenant-b', guid: b },
    ]);
  });

  it('refuses a second cluster with the same name', async () => {
    const state = await signedNode(await simRoot());
    await createCluster(state, 'tenant-a');
    const result = await tool(state, 'weka', 'cluster', 'create', 'tenant-a', '--json');
    expect(result.exitCode).toBe(65);
    expect(await changesOfKind(state, 'cluster-create')).toBe(1);
  });

  it('numbers containers uniquely across every cluster and node of the root', async () => {
    const root = await simRoot();
    const node1 = await signedNode(root, 'node-1');
    const node2 = await signedNode(root, 'node-2');
    const a = await createCluster(node1, 'tenant-a');
    const b = await createCluster(node2, 'tenant-b');
    const ids = [
      await addContainer(node1, a, 'd0'),
      await addContainer(node2, b, 'd0', 'node-2'),
      await addContainer(node2, a, 'd1', 'node-2'),
    ];
    expect(new Set(ids).size).toBe(3);
    const listed = JSON.parse(
      (await tool(node1, 'weka', 'cluster', 'container', 'list', '--cluster-guid', a, '--json')).stdout,
    ) as Array<{ name: string }>;
    expect(listed.map((c) => c.name)).toEqual(['d0', 'd1']);
  });

  it("keeps the clusters of a node that names its own directory apart from the root's", async () => {
    const root = await simRoot();
    const shared = await signedNode(root, 'node-1');
    const [own, alsoOwn] = [await signedNode(root, 'node-2'), await signedNode(root, 'node-3')];
    for (const state of [own, alsoOwn]) await writeFile(join(state, CLUSTERS_DIR_FILE), join(root, 'site-b') + '\n');
    await createCluster(shared, 'tenant-a');
    const b = await createCluster(own, 'tenant-b');
    const names = async (state: string) =>
      (JSON.parse((await tool(state, 'weka', 'cluster', 'list', '--json')).stdout) as Array<{ name: string }>).map(
        (c) => c.name,
      );
    expect(await names(shared)).toEqual(['tenant-a']);
    expect(await names(alsoOwn)).toEqual(['tenant-b']);
    // A node of the same set joins its cluster as any node of the root would.
    await addContainer(alsoOwn, b, 'd0', 'node-3');
    await access(join(root, 'site-b', 'clusters.json'));
  });

  it('refuses every command of a node whose clusters file names no directory', async () => {
    const root = await simRoot();
    const state = await signedNode(root, 'node-1');
    await writeFile(join(state, CLUSTERS_DIR_FILE), '\n');
    const result = await tool(state, 'weka', 'cluster', 'list', '--json');
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toContain('names no directory');
  });

  it('refuses a container name already used in the cluster, and an unknown cluster', async () => {
    const state = await signedNode(await simRoot());
    const guid = await createCluster(state, 'tenant-a');
    await addContainer(state, guid, 'drive-0');
    const duplicate = await tool(
      state,
      'weka',
      'cluster',
      'container',
      'add',
      '--cluster-guid',
      guid,
      '--name',
      'drive-0',
      '--hostname',
      'node-1',
      ...freshPorts(),
    );
    expect(duplicate.exitCode).toBe(65);
    const unknown = await tool(state, 'weka', 'cluster', 'container', 'list', '--cluster-guid', uuid(77));
    expect(unknown.exitCode).toBe(65);
    expect(unknown.stderr).toContain('no cluster');
  });
});

describe('weka-sim cluster destroy', () => {
  it('refuses while a container remains, active or not, then destroys the empty cluster and frees its name', async () => {
    const state = await signedNode(await simRoot());
    const guid = await createCluster(state, 'tenant-a');
    const containerId = await addContainer(state, guid, 'drive-0');
    const refused = await tool(state, 'weka', 'cluster', 'destroy', guid);
    expect(refused.exitCode).toBe(65);
    expect(refused.stderr).toContain(`still has 1 container(s): ${containerId} (drive-0)`);
    await expectOk(tool(state, 'weka', 'cluster', 'container', 'deactivate', String(containerId)));
    expect((await tool(state, 'weka', 'cluster', 'destroy', guid)).exitCode).toBe(65);
    await expectOk(tool(state, 'weka', 'cluster', 'container', 'remove', String(containerId)));

    await expectOk(tool(state, 'weka', 'cluster', 'destroy', guid));
    expect(JSON.parse((await tool(state, 'weka', 'cluster', 'list', '--json')).stdout)).toEqual([]);
    expect(await changesOfKind(state, 'cluster-destroy')).toBe(1);
    const again = await tool(state, 'weka', 'cluster', 'destroy', guid);
    expect(again.exitCode).toBe(65);
    expect(again.stderr).toContain(`no cluster with GUID ${guid}`);
    expect(await createCluster(state, 'tenant-a')).not.toBe(guid);
  });
});

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
    await createCluster(node1, 'tenant-a');
    expect(JSON.parse((await tool(node2, 'weka', 'cluster', 'list', '--json')).stdout)).toHaveLength(1);
    await expect(access(join(root, 'clusters', 'clusters.json'))).resolves.toBeUndefined();
    const elsewhere = await sim(
      '--state',
      node2,
      '--clusters',
      join(root, 'other'),
      '--',
      'weka',
      'cluster',
      'list',
      '--json',
    );
    expect(JSON.parse(elsewhere.stdout)).toEqual([]);
  });
});
