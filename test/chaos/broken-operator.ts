// A deliberately broken operator, for the test that proves the chaos checker has teeth
// (test/integration/chaos/checker-teeth.test.ts). It is broken three ways at once, each caught by
// its own check, so that one chaos world proves all three:
// - its allocation decisions count neither the claims of the container that holds the most on the
//   node nor the drives found on its devices, so they give those GiB to others again, while the
//   ledger keeps them;
// - its release lets go of a container's ledger entry but keeps counting its virtual drives as
//   found on the devices, though the teardown removed them, so the GiB stay taken for ever;
// - its watcher does not watch the operator's pods, so a Ready container whose pod is deleted
//   stays Ready with no pod.
// It is its own entry point under test/: the image holds none of test/, and nothing in the
// operator's main or settings can select it.
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { updateLedger } from '../../activities/kube/node-ledger.js';
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

const kubeConfig = new KubeConfig();
kubeConfig.loadFromDefault();
const core = kubeConfig.makeApiClient(CoreV1Api);

await runOperator(process.env, {
  watchPods: false,
  // Blind to the found drives too, which the broken release leaks: else the GiB it keeps would
  // leave no room for the double allocation to show.
  decideAllocations(input, newUuid) {
    const hidden = biggestHolder(input);
    const { found } = input.ledger;
    const others = Object.fromEntries(Object.entries(input.ledger.containers).filter(([uid]) => uid !== hidden));
    const round = decideNodeAllocations({ ...input, ledger: { containers: others, found: [] } }, newUuid);
    const kept = hidden === undefined ? {} : { [hidden]: input.ledger.containers[hidden]! };
    return {
      ...round,
      ledger: { containers: { ...round.ledger.containers, ...kept }, found: [...found, ...round.ledger.found] },
    };
  },
  withActivities: (activities) => ({
    ...activities,
    async releaseAllocation(request) {
      const { node, uid } = request;
      const held = uid === undefined ? null : await activities.readNodeAllocation({ node, uid });
      const outcome = await activities.releaseAllocation(request);
      if (held && held.virtualDrives.length > 0)
        await updateLedger(core, node, (ledger) => ({
          ...ledger,
          found: [
            ...ledger.found,
            ...held.virtualDrives.map(({ virtualUUID, physicalUUID, capacityGiB }) => ({
              virtualUUID,
              physicalUUID,
              capacityGiB,
              ownerClusterGUID: '',
            })),
          ],
        }));
      return outcome;
    },
  }),
});
