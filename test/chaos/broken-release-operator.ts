// A deliberately broken operator, for the test that proves the chaos checker has teeth
// (test/integration/chaos/broken-release.test.ts): its release lets go of a container's ledger
// entry but keeps counting its virtual drives as found on the devices, though the teardown
// removed them, so the GiB stay taken for ever. It is its own entry point under test/: the image
// holds none of test/, and nothing in the operator's main or settings can select it.
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { updateLedger } from '../../activities/kube/node-ledger.js';
import { runOperator } from '../../deploy/operator/run-operator.js';

const kubeConfig = new KubeConfig();
kubeConfig.loadFromDefault();
const core = kubeConfig.makeApiClient(CoreV1Api);

await runOperator(process.env, {
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
