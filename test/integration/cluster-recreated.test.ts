// A WekaCluster forced out (its finalizer removed by hand) and created again under the same name:
// the old cluster's teardown, still running, finds and removes only what is its own (members
// owned by its uid, the ports of its own object), never the new cluster's members or ports.
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { WekaContainer } from '../../src/api/index.js';
import { FINALIZER, type ObjectRef } from '../../src/api/names.js';
import { deleteRequestedSignal } from '../../src/protocol.js';
import { eventually, sleep } from '../support/async.js';
import { POOL_LABEL, readCluster, SMALL_MEMBER, WEKA_CLUSTERS } from '../support/clusters.js';
import { listContainers, WEKA_CONTAINERS } from '../support/containers.js';
import { kubeConfig, uniqueName, uniqueNamespace } from '../support/harness.js';
import { readContainer, sharedDrivesNode, startWekaCluster, useTestOperator } from '../support/operator.js';

const DEVICES = [
  { path: '/dev/nvme0n1', capacityGiB: 7680, type: 'TLC' as const },
  { path: '/dev/nvme1n1', capacityGiB: 30720, type: 'QLC' as const },
];
/** A test's own finalizer: holds the old member in its deletion while the old teardown waits for it. */
const HOLD = 'test.weka.io/hold';
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

const op = useTestOperator();

const custom = () => kubeConfig().makeApiClient(CustomObjectsApi);
const setFinalizers = (what: typeof WEKA_CLUSTERS, ref: ObjectRef, finalizers: string[]) =>
  custom().patchNamespacedCustomObject({ ...what, ...ref, body: { metadata: { finalizers } } }, mergePatch);

async function members(namespace: string, cluster: string): Promise<WekaContainer[]> {
  return listContainers(kubeConfig(), namespace, { fieldSelector: `spec.cluster=${cluster}` });
}

describe('a WekaCluster created again under the name of one forced out', () => {
  it("is left alone by the old cluster's teardown: its members and its ports stay", { timeout: 300_000 }, async () => {
    const pool = uniqueName('recreated');
    await Promise.all([0, 1].map(() => sharedDrivesNode(DEVICES, 'recreated', { [POOL_LABEL]: pool })));
    const ns = await uniqueNamespace('recreated');
    const ref = { namespace: ns, name: 'stores' };

    const old = await startWekaCluster(op, ref, pool, { driveContainers: 1, ...SMALL_MEMBER });
    await eventually(
      'the old cluster Ready',
      async () => (await readCluster(ns, ref.name))?.status?.phase === 'Ready' || undefined,
      180_000,
    );
    const [oldMember] = await members(ns, ref.name);
    // Held, so that the old teardown is still waiting for it when the new cluster comes.
    await setFinalizers(WEKA_CONTAINERS, { namespace: ns, name: oldMember!.metadata.name! }, [FINALIZER, HOLD]);

    // Forced out: its finalizer removed by hand, then deleted; its teardown starts.
    await setFinalizers(WEKA_CLUSTERS, ref, []);
    await custom().deleteNamespacedCustomObject({ ...WEKA_CLUSTERS, ...ref });
    await eventually('the old cluster gone', async () =>
      (await readCluster(ns, ref.name)) === null ? true : undefined,
    );
    await old.handle.signal(deleteRequestedSignal);
    await eventually(
      `the old member ${oldMember!.metadata.name} torn down but held`,
      async () => {
        const c = await readContainer({ namespace: ns, name: oldMember!.metadata.name! });
        return c?.metadata.finalizers?.join() === HOLD ? true : undefined;
      },
      120_000,
    );

    // The new cluster of the name, two members: the slot of the held old member waits for it to go.
    const fresh = await startWekaCluster(op, ref, pool, { driveContainers: 2, ...SMALL_MEMBER });
    const newMember = await eventually(
      'a member of the new cluster',
      async () => {
        const all = await members(ns, ref.name);
        return all.find((m) => m.metadata.ownerReferences?.some((o) => o.uid === fresh.uid));
      },
      60_000,
    );
    const ports = await eventually(
      'the new cluster ports',
      async () => (await readCluster(ns, ref.name))?.status?.ports,
    );

    // The old teardown looks at "its" members every 2 s: several times while both exist.
    await sleep(8_000);
    const still = await readContainer({ namespace: ns, name: newMember.metadata.name! });
    expect(still?.metadata.uid).toBe(newMember.metadata.uid);
    expect(still?.metadata.deletionTimestamp).toBeUndefined();

    // The old member lets go; the old teardown ends, releasing the ports of its own object only.
    await setFinalizers(WEKA_CONTAINERS, { namespace: ns, name: oldMember!.metadata.name! }, []);
    await old.handle.result();
    expect((await readCluster(ns, ref.name))?.status?.ports).toEqual(ports);
    const ready = await eventually(
      'the new cluster Ready',
      async () => {
        const c = await readCluster(ns, ref.name);
        return c?.status?.phase === 'Ready' ? c : undefined;
      },
      180_000,
    );
    expect(ready.metadata.uid).toBe(fresh.uid);
    expect(await members(ns, ref.name)).toHaveLength(2);

    await custom().deleteNamespacedCustomObject({ ...WEKA_CLUSTERS, ...ref });
    await fresh.handle.signal(deleteRequestedSignal);
    await fresh.handle.result();
  });
});
