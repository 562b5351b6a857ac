// A fault of a person tidying a node: a clean-stale-virtual-drives operation with removal on, run
// over one node while the rollout and the other faults go on. Whatever stale drives the chaos left
// there (a namespace deleted under its containers, say) may go; a drive that a ledger, a status or
// a Weka cluster claims must not, which the invariants at rest check (every drive a container
// holds signed once, on its device). The operation is over, and deleted, before the promise resolves.
import { CustomObjectsApi } from '@kubernetes/client-node';
import type { WekaManualOperation } from '../../src/api/index.js';
import { deleteObject, ensureNamespace, readObject, WEKA_API } from '../support/containers.js';
import { eventually } from '../support/async.js';
import type { Random } from '../support/random.js';
import { deleteNamespace, retried, waitObjectGone } from './forced-faults.js';
import type { ChaosWorld } from './world.js';

const OPERATIONS = { ...WEKA_API, plural: 'wekamanualoperations' };

export async function cleanStaleDrives(world: ChaosWorld, random: Random): Promise<string> {
  const kc = world.cp.kubeConfig();
  const node = world.nodes[random.int(0, world.nodes.length - 1)]!;
  const ref = { namespace: `chaos-ops-${random.int(1, 1_000_000_000)}`, name: 'clean-stale' };
  await retried('creating the operation namespace', () => ensureNamespace(kc, ref.namespace));
  await retried('creating the clean-stale-virtual-drives operation', () =>
    kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
      ...OPERATIONS,
      namespace: ref.namespace,
      body: {
        apiVersion: 'weka.weka.io/v1alpha1',
        kind: 'WekaManualOperation',
        metadata: { name: ref.name },
        spec: {
          action: 'clean-stale-virtual-drives',
          payload: {
            cleanStaleVirtualDrivesPayload: {
              nodeSelector: { 'kubernetes.io/hostname': node },
              deleteStaleVids: true,
              secondPassAfterSeconds: 5,
            },
          },
        },
      },
    }),
  );
  const done = await eventually(
    `the clean-stale-virtual-drives operation on ${node} to finish`,
    async () => {
      const op = await readObject<WekaManualOperation>(kc, OPERATIONS, ref).catch(() => null);
      return op && ['Succeeded', 'Failed', 'Refused'].includes(op.status?.phase ?? '') ? op : undefined;
    },
    240_000,
    { intervalMs: 1_000 },
  );
  const result = done.status?.results?.find((r) => r.node === node);
  const succeeded = done.status?.conditions?.find((c) => c.type === 'Succeeded');
  await retried('deleting the operation', () => deleteObject(kc, OPERATIONS, ref));
  await waitObjectGone(world, OPERATIONS, ref);
  await deleteNamespace(world, ref.namespace);
  return (
    `clean-stale-virtual-drives on ${node}: ${done.status?.phase} (${succeeded?.reason ?? '?'}), ` +
    `${result?.staleVirtualDrives?.length ?? 0} stale, removed [${(result?.removed ?? []).join(', ')}]`
  );
}
