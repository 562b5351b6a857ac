// A node's ssdproxy is removed once nothing uses it; a container whose object is gone (its
// finalizer removed by hand) while its teardown still runs uses it too: the release of its
// allocation reads the node's devices in the proxy pod to learn whether its drives are still
// there. Removed from under it, the release cannot tell, and counts the drives as left on the
// devices, where the ledger keeps them until the node's next allocation reads the devices again.
// So the proxy stays while the node's ledger holds any container's entry.
import { CustomObjectsApi } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { withAllocation } from '../../src/node/allocation-ledger.js';
import { proxyName } from '../../src/api/names.js';
import { mutexRequestSignal, nodeMutexId } from '../../src/protocol.js';
import { WEKA_CONTAINERS } from '../support/containers.js';
import { kubeConfig, uniqueName } from '../support/harness.js';
import { changeLedger, readLedger } from '../support/ledger.js';
import {
  deleteDriveContainer,
  readyStandaloneContainer,
  useTestOperator,
  waitGone,
  waitProxiesGone,
} from '../support/operator.js';

const DEVICES = [{ path: '/dev/nvme0n1', capacityGiB: 3840, type: 'TLC' as const }];
const op = useTestOperator();

async function proxyExists(node: string): Promise<boolean> {
  return kubeConfig()
    .makeApiClient(CustomObjectsApi)
    .getNamespacedCustomObject({ ...WEKA_CONTAINERS, namespace: op.deps.operatorNamespace, name: proxyName(node) })
    .then(
      () => true,
      (err: { code?: number }) => {
        if (err.code === 404) return false;
        throw err;
      },
    );
}

describe("a node's unused ssdproxy", () => {
  it(
    "stays while the node's ledger holds the entry of a container whose object is gone, and goes once it is released",
    { timeout: 240_000 },
    async () => {
      const { node, ref, uid, ready } = await readyStandaloneContainer(op, 'proxy-kept', DEVICES);
      const [drive] = ready.status?.allocations?.virtualDrives ?? [];
      expect(await proxyExists(node)).toBe(true);

      // A container of the node forced out mid-teardown: its object is gone, its entry not released yet.
      const vanished = { uid: uniqueName('uid-vanished'), name: `${ref.namespace}/vanished` };
      await changeLedger(node, (ledger) =>
        withAllocation(ledger, vanished.uid, vanished.name, {
          virtualDrives: [
            {
              virtualUUID: crypto.randomUUID(),
              physicalUUID: drive!.physicalUUID,
              capacityGiB: 384,
              serial: drive!.serial ?? '',
              type: 'TLC',
            },
          ],
        }),
      );

      // The last container with an object goes; its teardown asks to remove the proxy after its release.
      await deleteDriveContainer(op, ref, uid);
      await waitGone(ref, 120_000);
      expect(Object.keys((await readLedger(node)).containers)).toEqual([vanished.uid]);
      expect(await proxyExists(node)).toBe(true);

      // Released, as its teardown would: the next request removes the proxy.
      await changeLedger(node, (ledger) => {
        const { [vanished.uid]: _, ...containers } = ledger.containers;
        return { ...ledger, containers };
      });
      await op.client.workflow.getHandle(nodeMutexId(node)).signal(mutexRequestSignal, {
        requestId: uniqueName('remove-proxy'),
        kind: 'remove-proxy-if-unused',
        replyTo: uniqueName('nobody'),
        payload: { node },
      });
      await waitProxiesGone(op.deps.operatorNamespace, [node], 60_000);
    },
  );
});
