// Separate processes, as in production where every exec is its own weka-sim process: the lock
// must hold across processes, not just across promises.
import { beforeAll, describe, expect, it } from 'vitest';
import {
  CLUSTER_A,
  buildSimulator,
  changesOfKind,
  createCluster,
  freshIp,
  freshPortNumbers,
  joinAddressOf,
  podEnv,
  readLog,
  listedDrive,
  physicalUUIDAt,
  signedNode,
  simRoot,
  spawnSim,
  uuid,
} from './helpers.js';

const PROCESSES = 20;

describe('weka-sim under concurrent processes', () => {
  let simArgs: string[] = [];
  beforeAll(async () => {
    simArgs = await buildSimulator();
  });

  it(`loses no update when ${PROCESSES} virtual adds run at once on one device`, { timeout: 60_000 }, async () => {
    const state = await signedNode(await simRoot());
    const physical = await physicalUUIDAt(state, '/dev/nvme0n1');
    const results = await Promise.all(
      Array.from({ length: PROCESSES }, (_, i) =>
        spawnSim(
          [
            '--state',
            state,
            '--',
            'weka-sign-drive',
            'virtual',
            'add',
            physical,
            '--size',
            '10',
            '--owner-cluster-guid',
            CLUSTER_A,
            '--virtual-uuid',
            uuid(i + 1),
          ],
          simArgs,
        ),
      ),
    );
    expect(results.map((r) => `${r.exitCode} ${r.stderr}`)).toEqual(Array(PROCESSES).fill('0 '));
    const signed = (await listedDrive(state, '/dev/nvme0n1')).virtualDrives;
    expect(signed.map((vd) => vd.virtualUUID).sort()).toEqual(
      Array.from({ length: PROCESSES }, (_, i) => uuid(i + 1)).sort(),
    );
    expect(await changesOfKind(state, 'virtual-add')).toBe(PROCESSES);
  });

  it('signs a UUID exactly once when the same virtual add races itself', { timeout: 60_000 }, async () => {
    const state = await signedNode(await simRoot());
    const argv = [
      '--state',
      state,
      '--',
      'weka-sign-drive',
      'virtual',
      'add',
      await physicalUUIDAt(state, '/dev/nvme0n1'),
      '--size',
      '10',
      '--owner-cluster-guid',
      CLUSTER_A,
      '--virtual-uuid',
      uuid(1),
    ];
    const codes = (await Promise.all(Array.from({ length: 6 }, () => spawnSim(argv, simArgs))))
      .map((r) => r.exitCode)
      .sort();
    expect(codes).toEqual([0, 65, 65, 65, 65, 65]);
    expect(await changesOfKind(state, 'virtual-add')).toBe(1);
  });

  it('gives unique container IDs to containers added at once from two nodes', { timeout: 60_000 }, async () => {
    const root = await simRoot();
    const nodes = [await signedNode(root, 'node-1'), await signedNode(root, 'node-2')];
    const guid = await createCluster(nodes[0]!, 'tenant-a');
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => {
        const env = podEnv(`c${i}`, { ...freshPortNumbers(), ip: freshIp(), joinIps: [joinAddressOf(guid)] });
        const agentPort = env[env.indexOf('--agent-port') + 1]!;
        const identity = ['local', 'run', 'wapi', '-H', `localhost:${agentPort}/jrpc`, '-W', 'container-get-identity'];
        return spawnSim(
          ['--state', nodes[i % 2]!, ...env, '--', 'weka', ...identity, '--container-name', `c${i}`, '--json'],
          simArgs,
        );
      }),
    );
    const ids = results.map((r) => (JSON.parse(r.stdout) as { value: { host_id: number } }).value.host_id);
    expect(new Set(ids).size).toBe(10);
    const logged = [...(await readLog(nodes[0]!)), ...(await readLog(nodes[1]!))]
      .flatMap((e) => e.changes)
      .filter((c) => c.kind === 'container-add');
    // The cluster's backend, and the ten.
    expect(logged).toHaveLength(11);
  });
});
