// The parsers against samples in the real tools' layout (test/fixtures/weka/README.md names each
// sample's source) and against what the simulator prints for the same command: the simulator may
// print no field the sample does not show, and the parser must read both.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { driveAt, parseContainerStatus, parseSignDriveList } from '../../../src/weka/index.js';
import {
  addContainer,
  CLUSTER_A,
  createCluster,
  expectOk,
  nodeDir,
  REPO_ROOT,
  sim,
  simRoot,
  tool,
  uuid,
  virtualAdd,
} from '../weka-sim/helpers.js';

const FIXTURES = join(REPO_ROOT, 'test', 'fixtures', 'weka');

const sample = (name: string) => readFile(join(FIXTURES, name), 'utf8');

/** Every field path in a JSON value, array elements as `[]`: {a: [{b: 1}]} gives a, a[], a[].b. */
function fieldPaths(value: unknown, at = ''): Set<string> {
  const paths = new Set<string>();
  const visit = (v: unknown, path: string) => {
    if (Array.isArray(v)) {
      paths.add(`${path}[]`);
      v.forEach((item) => visit(item, `${path}[]`));
    } else if (typeof v === 'object' && v !== null) {
      for (const [key, child] of Object.entries(v)) {
        const next = path ? `${path}.${key}` : key;
        paths.add(next);
        visit(child, next);
      }
    }
  };
  visit(value, at);
  return paths;
}

const jsonAfterWarnings = (text: string): unknown => JSON.parse(text.slice(text.indexOf('{')));

/** A node with a proxy drive carrying a virtual drive, an exclusive drive no cluster has claimed, and a blank one. */
async function simulatedNode(): Promise<string> {
  const state = nodeDir(await simRoot(), 'node-1');
  await expectOk(
    sim(
      '--state',
      state,
      'init-node',
      '--device',
      '/dev/nvme0n1:1000:TLC',
      '--device',
      '/dev/nvme1n1:2000:QLC',
      '--device',
      '/dev/nvme2n1:500:TLC',
    ),
  );
  await expectOk(tool(state, 'weka-sign-drive', 'sign', 'proxy', '--', '/dev/nvme0n1'));
  await expectOk(tool(state, 'weka-sign-drive', '--', '/dev/nvme1n1'));
  await expectOk(virtualAdd(state, '/dev/nvme0n1', uuid(1), CLUSTER_A, 100));
  return state;
}

describe('weka-sign-drive list -j', () => {
  it('reads the sample: a proxy drive with virtual drives, the sentinel, exclusive drives and an excluded one', async () => {
    const drives = parseSignDriveList(await sample('sign-drive-list.txt'));
    expect(drives.map((d) => [d.devicePath, d.signature, d.type, d.virtualDrives.length])).toEqual([
      ['/dev/nvme0n1', 'proxy', 'TLC', 2],
      ['/dev/nvme1n1', 'proxy', 'QLC', 0],
      ['/dev/nvme2n1', 'exclusive', 'TLC', 0],
      ['/dev/nvme3n1', 'exclusive', 'TLC', 0],
      ['/dev/nvme4n1', 'none', 'TLC', 0],
    ]);
    expect(drives[0]).toMatchObject({ serial: 'S6EWNA0T401234', capacityGiB: 7153 });
    expect(drives[3]!.clusterGUID).toBe('c0ffee00-1111-4222-8333-444455556666');
  });

  it('the simulator prints only fields the sample shows, and the parser reads them', async () => {
    const state = await simulatedNode();
    const { stdout } = await expectOk(tool(state, 'weka-sign-drive', 'list', '-j'));
    const shown = fieldPaths(jsonAfterWarnings(await sample('sign-drive-list.txt')));
    expect([...fieldPaths(JSON.parse(stdout))].filter((p) => !shown.has(p))).toEqual([]);
    const drives = parseSignDriveList(stdout);
    expect(driveAt(drives, '/dev/nvme0n1')).toMatchObject({
      signature: 'proxy',
      capacityGiB: 1000,
      virtualDrives: [{ virtualUUID: uuid(1), ownerClusterGUID: CLUSTER_A, sizeGiB: 100 }],
    });
    expect(driveAt(drives, '/dev/nvme1n1')).toMatchObject({ signature: 'exclusive', type: 'QLC', clusterGUID: null });
    expect(driveAt(drives, '/dev/nvme2n1')).toMatchObject({ signature: 'none', physicalUUID: null });
  });
});

describe('weka-sign-drive show <path> --json', () => {
  it('the simulator prints only fields the sample shows', async () => {
    const state = await simulatedNode();
    const shown = fieldPaths(JSON.parse(await sample('sign-drive-show.json')));
    for (const device of ['/dev/nvme0n1', '/dev/nvme2n1']) {
      const { stdout } = await expectOk(tool(state, 'weka-sign-drive', 'show', device, '--json'));
      expect([...fieldPaths(JSON.parse(stdout))].filter((p) => !shown.has(p))).toEqual([]);
    }
  });
});

describe('weka cluster container <id> --json', () => {
  it('reads the sample, and the simulator prints only fields the sample shows', async () => {
    expect(parseContainerStatus(await sample('cluster-container.json'), 15)).toEqual([
      { containerId: 15, name: 'tenant-a_drive-0', hostname: 'worker-7', status: 'INACTIVE' },
    ]);
    const state = nodeDir(await simRoot(), 'node-1');
    await expectOk(sim('--state', state, 'init-node', '--device', '/dev/nvme0n1:1000:TLC'));
    const id = await addContainer(state, await createCluster(state, 'tenant-a'), 'tenant-a_drive-0');
    const { stdout } = await expectOk(tool(state, 'weka', 'cluster', 'container', String(id), '--json'));
    const shown = fieldPaths(JSON.parse(await sample('cluster-container.json')));
    expect([...fieldPaths(JSON.parse(stdout))].filter((p) => !shown.has(p))).toEqual([]);
    expect(parseContainerStatus(stdout, id)).toEqual([
      { containerId: id, name: 'tenant-a_drive-0', hostname: 'node-1', status: 'ACTIVE' },
    ]);
    expect((await expectOk(tool(state, 'weka', 'cluster', 'container', String(id + 1), '--json'))).stdout.trim()).toBe(
      '[]',
    );
  });
});
