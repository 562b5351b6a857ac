import { describe, expect, it } from 'vitest';
import { changesOfKind, createCluster, expectOk, signedNode, sim, simRoot, tool } from './helpers.js';

function add(state: string, guid: string, name: string, hostname: string, basePort: number, agentPort: number) {
  return tool(
    state,
    ...['weka', 'cluster', 'container', 'add', '--cluster-guid', guid, '--name', name, '--hostname', hostname],
    ...['--base-port', String(basePort), '--agent-port', String(agentPort), '--json'],
  );
}

async function listed(state: string, guid: string): Promise<Array<Record<string, unknown>>> {
  const out = await expectOk(tool(state, 'weka', 'cluster', 'container', 'list', '--cluster-guid', guid, '--json'));
  return JSON.parse(out.stdout) as Array<Record<string, unknown>>;
}

describe('weka-sim container ports', () => {
  it("records each container's base port and agent port and lists them", async () => {
    const state = await signedNode(await simRoot());
    const guid = await createCluster(state, 'tenant-a');
    const out = await expectOk(add(state, guid, 'd0', 'node-1', 35000, 35303));
    expect(JSON.parse(out.stdout)).toMatchObject({ name: 'd0', basePort: 35000, agentPort: 35303 });
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
    await expectOk(add(state, a, 'd0', 'node-1', 35000, 35303));
    const refused = await add(state, b, 'd0', 'node-1', base, agent);
    expect(refused.exitCode).toBe(65);
    expect(refused.stderr).toContain(message);
    expect(refused.stderr).toContain(`container d0 of cluster ${a}`);
    expect(await changesOfKind(state, 'container-add')).toBe(1);
  });

  it("refuses an agent port inside the container's own block", async () => {
    const state = await signedNode(await simRoot());
    const guid = await createCluster(state, 'tenant-a');
    const refused = await add(state, guid, 'd0', 'node-1', 35000, 35099);
    expect(refused.exitCode).toBe(65);
    expect(refused.stderr).toContain('agent port 35099 is inside its own ports 35000-35099');
  });

  it('lets containers on different hosts use the same ports, and frees the ports of a removed container', async () => {
    const state = await signedNode(await simRoot());
    const guid = await createCluster(state, 'tenant-a');
    await expectOk(add(state, guid, 'd0', 'node-1', 35000, 35303));
    await expectOk(add(state, guid, 'd1', 'node-2', 35000, 35303));
    const id = (
      JSON.parse((await expectOk(add(state, guid, 'd2', 'node-3', 36000, 36303))).stdout) as {
        containerId: number;
      }
    ).containerId;
    await expectOk(tool(state, 'weka', 'cluster', 'container', 'deactivate', String(id)));
    // An inactive container still holds its ports until it is removed.
    expect((await add(state, guid, 'd3', 'node-3', 36000, 36303)).exitCode).toBe(65);
    await expectOk(tool(state, 'weka', 'cluster', 'container', 'remove', String(id)));
    await expectOk(add(state, guid, 'd3', 'node-3', 36000, 36303));
  });

  it.each([
    ['no base port', ['--agent-port', '35303']],
    ['no agent port', ['--base-port', '35000']],
    ['a block past 65535', ['--base-port', '65500', '--agent-port', '35303']],
    ['port 0', ['--base-port', '0', '--agent-port', '35303']],
  ])('refuses %s as a usage error', async (_what, ports) => {
    const state = await signedNode(await simRoot());
    const guid = await createCluster(state, 'tenant-a');
    const argv = ['weka', 'cluster', 'container', 'add', '--cluster-guid', guid, '--name', 'd0', '--hostname', 'h'];
    expect((await tool(state, ...argv, ...ports)).exitCode).toBe(64);
  });

  it('frees the ports of a container whose pod is gone, on its host only, until a pod of its name runs again', async () => {
    const state = await signedNode(await simRoot());
    const a = await createCluster(state, 'tenant-a');
    const b = await createCluster(state, 'tenant-b');
    await expectOk(add(state, a, 'ns_d0', 'node-1', 35000, 35303));
    const gone = await expectOk(sim('--state', state, 'process', '--name', 'ns_d0', 'gone'));
    expect(gone.stdout).toContain('1 container(s) named ns_d0 on node-1: process gone');
    // Still listed in its cluster: only its process is gone.
    expect(await listed(state, a)).toEqual([expect.objectContaining({ name: 'ns_d0' })]);
    await expectOk(add(state, b, 'd1', 'node-1', 35000, 35303));
    // Its pod runs again: it is the first a third container on its ports clashes with.
    await expectOk(sim('--state', state, 'process', '--name', 'ns_d0', 'running'));
    const refused = await add(state, b, 'd2', 'node-1', 36000, 35303);
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
