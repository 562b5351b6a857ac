// The operator's path in miniature: typed calls from src/weka, run through an exec transport into
// the simulator shims, with the idempotency probes deciding what to run. The integration test on
// the local control plane does the same through the Kubernetes exec API.
import { describe, expect, it } from 'vitest';
import { LocalExecTransport } from '../../../activities/exec/local-exec.js';
import type { ExecTarget } from '../../../activities/exec/transport.js';
import {
  WekaCommandFailed,
  WekaCommandRefused,
  clusterCreateCall,
  clusterNameCall,
  completeCall,
  containerIdentityCall,
  containerListCall,
  driveAddCall,
  driveListCall,
  driveRemoveCall,
  findDriveByVirtualUUID,
  planJoin,
  nextDriveRemovalStep,
  driveShowCall,
  driveDeactivateCall,
  planVirtualAdd,
  planVirtualRemove,
  readDriveCall,
  signProxyCall,
  virtualAddCall,
  virtualRemoveCall,
  type WekaCall,
} from '../../../src/weka/index.js';
import { expectOk, nodeDir, readLog, serveShims, sim, simRoot, uuid } from './helpers.js';

describe('typed calls through an exec transport into the simulator', () => {
  it(
    'signs, adds and removes exactly once, even when a command crashes after its effect',
    { timeout: 30_000 },
    async () => {
      const root = await simRoot();
      const state = nodeDir(root, 'node-1');
      const shimDir = await serveShims(root);
      await expectOk(sim('--state', state, 'init-node', '--device', '/dev/nvme0n1:3840:TLC'));
      // Pods are named after their node here; the mapping stands in for kwok's exec environment.
      const transport = new LocalExecTransport({
        resolveTarget: (t) => ({
          env: {
            PATH: `${shimDir}:${process.env['PATH'] ?? ''}`,
            WEKA_SIM_STATE: nodeDir(root, t.pod),
            // The pod's own environment, from which its image sets its Weka container up.
            ...{ NAME: 'drive-0', PORT: '35000', AGENT_PORT: '35300', MANAGEMENT_IP: '10.244.0.5' },
          },
        }),
      });
      const pod: ExecTarget = { namespace: 'weka', pod: 'node-1' };
      const run = async <T>(call: WekaCall<T>): Promise<T> => completeCall(call, await transport.run(pod, call.argv));
      const device = '/dev/nvme0n1';

      expect((await run(readDriveCall(device))).signature).toBe('none');
      await run(signProxyCall(device));
      const signed = await run(readDriveCall(device));
      expect(signed.physicalUUID).not.toBeNull();
      expect(signed.signature).toBe('proxy');
      await expect(run(signProxyCall(device))).rejects.toBeInstanceOf(WekaCommandRefused);

      // The pod's Weka container is a stem: a cluster is created of it, then it is a member.
      const stem = await run(containerIdentityCall('drive-0', 35300));
      expect(planJoin(stem)).toBe('run');
      await run(clusterCreateCall([{ ip: '10.244.0.5', port: 35000 }]));
      await run(clusterNameCall('tenant-a'));
      const member = await run(containerIdentityCall('drive-0', 35300));
      expect(planJoin(member)).toBe('already-done');
      if (member.state !== 'member') throw new Error('not a member');
      const { containerId } = member;
      const cluster = { guid: member.clusterGUID };
      expect(await run(containerListCall())).toEqual([
        { containerId, name: 'drive-0', hostname: 'node-1', status: 'ACTIVE' },
      ]);

      const add = { devicePath: device, virtualUUID: uuid(1), ownerClusterGUID: cluster.guid, sizeGiB: 1000 };
      expect(planVirtualAdd(signed, add)).toBe('run');
      await expectOk(sim('--state', state, 'faults', '--fail-after-effect-rate', '1'));
      await expect(run(virtualAddCall({ ...add, physicalUUID: signed.physicalUUID! }))).rejects.toBeInstanceOf(
        WekaCommandFailed,
      );
      await expectOk(sim('--state', state, 'faults', '--clear'));
      // The retry probes first and finds the crashed attempt's effect.
      expect(planVirtualAdd(await run(readDriveCall(device)), add)).toBe('already-done');

      expect(findDriveByVirtualUUID(await run(driveListCall(containerId)), uuid(1))).toBeUndefined();
      await run(driveAddCall({ containerId, virtualUUID: uuid(1), type: 'TLC' }));
      const listed = await run(driveListCall(containerId));
      expect(findDriveByVirtualUUID(listed, uuid(1))).toMatchObject({ uuid: uuid(1), status: 'ACTIVE' });

      // Removing reads the drive first: deactivate while ACTIVE, remove once INACTIVE, done once gone.
      const step = async () => nextDriveRemovalStep(await run(driveShowCall(uuid(1))), uuid(1));
      expect(await step()).toBe('deactivate');
      await run(driveDeactivateCall(uuid(1)));
      expect(await step()).toBe('remove');
      await run(driveRemoveCall(uuid(1)));
      expect(await step()).toBe('already-done');
      expect(findDriveByVirtualUUID(await run(driveListCall(containerId)), uuid(1))).toBeUndefined();

      const remove = { devicePath: device, virtualUUID: uuid(1), ownerClusterGUID: cluster.guid };
      expect(planVirtualRemove(await run(readDriveCall(device)), remove)).toBe('run');
      await run(virtualRemoveCall({ ...remove, physicalUUID: signed.physicalUUID! }));
      expect(planVirtualRemove(await run(readDriveCall(device)), remove)).toBe('already-done');

      const changes = (await readLog(state))
        .flatMap((e) => e.changes.map((c) => c.kind))
        .filter((k) => !k.startsWith('faults'));
      expect(changes).toEqual([
        'device-init',
        'sign-proxy',
        'cluster-create',
        'container-add',
        'cluster-name',
        'virtual-add',
        'drive-add',
        'drive-deactivate',
        'drive-remove',
        'virtual-remove',
      ]);
    },
  );
});
