// What the chaos faults that are WekaManualOperations share: the operation made in a namespace of
// its own as a person would, waited for until it ends, and removed with its namespace afterwards.
import { CustomObjectsApi } from '@kubernetes/client-node';
import type { WekaManualOperation } from '../../src/api/index.js';
import type { ObjectRef } from '../../src/api/names.js';
import { deleteObject, ensureNamespace, readObject, WEKA_API } from '../support/containers.js';
import { eventually } from '../support/async.js';
import type { Random } from '../support/random.js';
import { deleteNamespace, retried, waitObjectGone } from './forced-faults.js';
import type { ChaosWorld } from './world.js';

const OPERATIONS = { ...WEKA_API, plural: 'wekamanualoperations' };
const ENDED = ['Succeeded', 'Failed', 'Refused'];

/** Creates the operation `name` with `spec` in a new chaos namespace. */
export async function createOperation(
  world: ChaosWorld,
  random: Random,
  name: string,
  spec: Record<string, unknown>,
): Promise<ObjectRef> {
  const kc = world.cp.kubeConfig();
  const ref = { namespace: `chaos-ops-${random.int(1, 1_000_000_000)}`, name };
  await retried('creating the operation namespace', () => ensureNamespace(kc, ref.namespace));
  await retried(`creating the ${String(spec['action'])} operation`, () =>
    kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
      ...OPERATIONS,
      namespace: ref.namespace,
      body: { apiVersion: 'weka.weka.io/v1alpha1', kind: 'WekaManualOperation', metadata: { name }, spec },
    }),
  );
  return ref;
}

/** The operation once it has ended (Succeeded, Failed or Refused); undefined if it has not within `limitMs`. */
export async function operationEnded(
  world: ChaosWorld,
  ref: ObjectRef,
  what: string,
  limitMs: number,
): Promise<WekaManualOperation | undefined> {
  const kc = world.cp.kubeConfig();
  return eventually(
    what,
    async () => {
      const op = await readObject<WekaManualOperation>(kc, OPERATIONS, ref).catch(() => null);
      return op && ENDED.includes(op.status?.phase ?? '') ? op : undefined;
    },
    limitMs,
    { intervalMs: 1_000 },
  ).catch(() => undefined);
}

export function readOperation(world: ChaosWorld, ref: ObjectRef): Promise<WekaManualOperation | null> {
  return readObject<WekaManualOperation>(world.cp.kubeConfig(), OPERATIONS, ref).catch(() => null);
}

/** Deletes the operation (which stops it, if it still runs) and its namespace, and waits until both are gone. */
export async function removeOperation(world: ChaosWorld, ref: ObjectRef): Promise<void> {
  await retried('deleting the operation', () => deleteObject(world.cp.kubeConfig(), OPERATIONS, ref));
  await waitObjectGone(world, OPERATIONS, ref);
  await deleteNamespace(world, ref.namespace);
}
