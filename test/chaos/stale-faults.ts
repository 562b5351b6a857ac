// A fault of a person tidying a node: a clean-stale-virtual-drives operation with removal on, run
// over one node while the rollout and the other faults go on. Whatever stale drives the chaos left
// there (a namespace deleted under its containers, say) may go; a drive that a ledger, a status or
// a Weka cluster claims must not, which the invariants at rest check (every drive a container
// holds signed once, on its device). The operation is over, and deleted, before the promise resolves.
import type { Random } from '../support/random.js';
import { createOperation, operationEnded, removeOperation } from './operation-faults.js';
import type { ChaosWorld } from './world.js';

export async function cleanStaleDrives(world: ChaosWorld, random: Random): Promise<string> {
  const node = world.nodes[random.int(0, world.nodes.length - 1)]!;
  const ref = await createOperation(world, random, 'clean-stale', {
    action: 'clean-stale-virtual-drives',
    payload: {
      cleanStaleVirtualDrivesPayload: {
        nodeSelector: { 'kubernetes.io/hostname': node },
        deleteStaleVids: true,
        secondPassAfterSeconds: 5,
      },
    },
  });
  const what = `the clean-stale-virtual-drives operation on ${node} to finish`;
  const done = await operationEnded(world, ref, what, 240_000);
  if (!done) throw new Error(`timed out after 240000 ms waiting for ${what}`);
  const result = done.status?.results?.find((r) => r.node === node);
  const succeeded = done.status?.conditions?.find((c) => c.type === 'Succeeded');
  await removeOperation(world, ref);
  return (
    `clean-stale-virtual-drives on ${node}: ${done.status?.phase} (${succeeded?.reason ?? '?'}), ` +
    `${result?.staleVirtualDrives?.length ?? 0} stale, removed [${(result?.removed ?? []).join(', ')}]`
  );
}
