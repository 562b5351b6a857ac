// A node's allocation ledger (its weka.weka.io/allocations annotation) as tests read it, and
// changed as the node's mutex changes it: read, change, write conditional on the version read.
import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import {
  ALLOCATIONS_ANNOTATION,
  decodeLedger,
  encodeLedger,
  type AllocationLedger,
} from '../../src/node/allocation-ledger.js';
import { kubeConfig } from './harness.js';

const core = () => kubeConfig().makeApiClient(CoreV1Api);

export async function readLedger(node: string): Promise<AllocationLedger> {
  const decoded = decodeLedger((await core().readNode({ name: node })).metadata?.annotations?.[ALLOCATIONS_ANNOTATION]);
  if (!decoded.ok) throw new Error(decoded.message);
  return decoded.ledger;
}

export async function changeLedger(
  node: string,
  change: (ledger: AllocationLedger) => AllocationLedger,
): Promise<void> {
  const read = await core().readNode({ name: node });
  const decoded = decodeLedger(read.metadata?.annotations?.[ALLOCATIONS_ANNOTATION]);
  if (!decoded.ok) throw new Error(decoded.message);
  await core().patchNode(
    {
      name: node,
      body: {
        metadata: {
          resourceVersion: read.metadata?.resourceVersion,
          annotations: { [ALLOCATIONS_ANNOTATION]: encodeLedger(change(decoded.ledger)) },
        },
      },
    },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}
