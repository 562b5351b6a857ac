// A deliberately broken operator, for the test that proves the chaos checker has teeth
// (test/integration/chaos/broken-allocation.test.ts): its allocation decisions do not count the
// claims of the container that holds the most on the node, so they give that container's GiB to
// others again, while its ledger entry stays as it was. It is its own entry point under test/:
// the image holds none of test/, and nothing in the operator's main or settings can select it.
import { runOperator } from '../../deploy/operator/run-operator.js';
import { decideNodeAllocations, type NodeAllocationInput } from '../../src/node/node-allocations.js';

/** The uid of the ledger entry with the most GiB (ties: the smallest uid), if any. */
function biggestHolder(input: NodeAllocationInput): string | undefined {
  const size = (uid: string) =>
    input.ledger.containers[uid]!.allocation.virtualDrives.reduce((sum, vd) => sum + vd.capacityGiB, 0);
  return Object.keys(input.ledger.containers)
    .sort()
    .reduce<string | undefined>((best, uid) => (best === undefined || size(uid) > size(best) ? uid : best), undefined);
}

await runOperator(process.env, {
  decideAllocations(input, newUuid) {
    const hidden = biggestHolder(input);
    if (hidden === undefined) return decideNodeAllocations(input, newUuid);
    const { [hidden]: entry, ...others } = input.ledger.containers;
    const round = decideNodeAllocations({ ...input, ledger: { ...input.ledger, containers: others } }, newUuid);
    return { ...round, ledger: { ...round.ledger, containers: { ...round.ledger.containers, [hidden]: entry! } } };
  },
});
