import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { changesOfKind, containerAdd, createCluster, expectOk, signedNode, sim, simRoot } from './helpers.js';

/** A pod on the node of `state` whose Weka container joins cluster `guid` on these ports. */
function add(state: string, guid: string, name: string, basePort: number, agentPort: number) {
  return containerAdd(state, guid, name, { basePort, agentPort });
}

/** The cluster's containers (but its backend), as the simulator's state holds them. */
async function listed(state: string, guid: string): Promise<Array<Record<string, unknown>>> {
  const file = join(state, '..', '..', 'clusters', 'clusters.json');
  const { containers } = JSON.parse(await readFile(file, 'utf8')) as {
    containers: Array<{ clusterGUID: string; name: string }>;
  };
  return containers.filter((c) => c.clusterGUID === guid && !c.name.startsWith('backend-'));
}

describe('weka-sim container ports', () => {
  it("records each container's base port and agent port, from its pod's environment", async () => {
    const state = await signedNode(await simRoot());
    const guid = await createCluster(state, 'tenant-a');
    await expectOk(add(state, guid, 'd0', 35000, 35303));
    expect(await listed(state, guid)).toEqual([expect.objectContaining({ basePort: 35000, agentPort: 35303 })]);
  });

  it.each([
    ['a block overlapping the other block', 35099, 35400, 'ports 35099-35198 overlap'],
    ['an agent port inside the other block', 36000, 35050, 'agent port 35050'],
    ['a block over the other agent port', 35250, 35400, 'ports 35250-35349 overlap'],
    ['the same agent port', 36000, 35303, 'agent port 35303'],
  ])('refuses a second container on the same host with %s, in any cluster', async (_what, base, agent, message) => {
    const state = await signedNode(await simRoot());
    const a = await createCluster(state, 'tenant-a');
    const b = await createCluster(state, 'tenant-b');
    await expectOk(add(state, a, 'd0', 35000, 35303));
    const refused = await add(state, b, 'd1', base, agent);
    expect(refused.exitCode).toBe(65);
    expect(refused.stderr).toContain(message);
    expect(refused.stderr).toContain(`container d0 of cluster ${a}`);
    // The two backends and d0.
    expect(await changesOfKind(state, 'container-add')).toBe(3);
  });

  it("refuses an agent port inside the container's own block", async () => {
    const state = await signedNode(await simRoot());
    const guid = await createCluster(state, 'tenant-a');
    const refused = await add(state, guid, 'd0', 35000, 35099);
    expect(refused.exitCode).toBe(65);
    expect(refused.stderr).toContain('agent port 35099 is inside its own ports 35000-35099');
  });

  it('lets containers on different hosts use the same ports, and frees the ports of a removed container', async () => {
    const root = await simRoot();
    const [node1, node2, node3] = [
      await signedNode(root, 'node-1'),
      await signedNode(root, 'node-2'),
      await signedNode(root, 'node-3'),
    ];
    const guid = await createCluster(node1, 'tenant-a');
    await expectOk(add(node1, guid, 'd0', 35000, 35303));
    await expectOk(add(node2, guid, 'd1', 35000, 35303));
    const joined = await expectOk(add(node3, guid, 'd2', 36000, 36303));
    const id = (JSON.parse(joined.stdout) as { value: { host_id: number } }).value.host_id;
    await expectOk(sim('--state', node3, '--', 'weka', 'cluster', 'container', 'deactivate', String(id)));
    // An inactive container still holds its ports until it is removed.
    expect((await add(node3, guid, 'd3', 36000, 36303)).exitCode).toBe(65);
    await expectOk(sim('--state', node3, '--', 'weka', 'cluster', 'container', 'remove', String(id)));
    await expectOk(add(node3, guid, 'd3', 36000, 36303));
  });

  it('frees the ports of a container whose pod is gone, on its host only, until a pod of its name runs again', async () => {
    const state = await signedNode(await simRoot());
    const a = await createCluster(state, 'tenant-a');
    const b = await createCluster(state, 'tenant-b');
    await expectOk(add(state, a, 'ns_d0', 35000, 35303));
    const gone = await expectOk(sim('--state', state, 'process', '--name', 'ns_d0', 'gone'));
    expect(gone.stdout).toContain('1 container(s) named ns_d0 on node-1: process gone');
    // Still listed in its cluster: only its process is gone.
    expect(await listed(state, a)).toEqual([expect.objectContaining({ name: 'ns_d0' })]);
    await expectOk(add(state, b, 'd1', 35000, 35303));
    // Its pod runs again: it is the first a third container on its ports clashes with.
    await expectOk(sim('--state', state, 'process', '--name', 'ns_d0', 'running'));
    const refused = await add(state, b, 'd2', 36000, 35303);
    expect(refused.exitCode).toBe(65);
    expect(refused.stderr).toContain(`container ns_d0 of cluster ${a}`);
    expect(await changesOfKind(state, 'process-gone')).toBe(1);
  });

  it('refuses a process command without a name and a state', async () => {
    const state = await signedNode(await simRoot());
    for (const args of [
      ['--name', 'x'],
      ['--name', 'x', 'asleep'],
      ['x', 'gone'],
    ]) {
      const out = await sim('--state', state, 'process', ...args);
      expect(out.exitCode).toBe(64);
      expect(out.stderr).toContain('process takes --name NAME gone|running');
    }
  });
});
