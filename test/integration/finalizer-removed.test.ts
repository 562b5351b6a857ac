// A drive container whose finalizer a person removes while its teardown is stuck (every Weka
// command in its pod fails): the object is gone at once, and its workflow, which no longer has an
// object or a pod it may call its own, removes the drives from the node's devices through the
// node's ssdproxy, releases the node's ledger entry, and records on the Node what may remain in
// the Weka cluster. A new container of the same name meanwhile is left alone and becomes Ready.
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerOf } from '../../activities/kube/node-ledger.js';
import { OperatorMetrics } from '../../deploy/operator/metrics.js';
import { eventually } from '../support/async.js';
import { createContainerObject, WEKA_CONTAINERS } from '../support/containers.js';
import { kubeConfig, uniqueName, uniqueNamespace } from '../support/harness.js';
import {
  readContainer,
  sharedDrivesNode,
  startWatchedTestOperator,
  waitForPhase,
  waitGone,
  type TestOperator,
} from '../support/operator.js';
import { createWekaCluster, showDevice, sim } from '../support/simulator.js';

const DEVICES = [{ path: '/dev/nvme0n1', capacityGiB: 3840, type: 'TLC' as const }];
const SPEC = { driveCores: 1, numDrives: 2, driveCapacity: 1000 };

let op: TestOperator;
let core: CoreV1Api;
const metrics = new OperatorMetrics({ processMetrics: false });
beforeAll(async () => {
  op = await startWatchedTestOperator({ onNodeWarning: metrics.nodeWarningRecorded });
  core = kubeConfig().makeApiClient(CoreV1Api);
});
afterAll(async () => {
  await op?.stop();
});

describe('a finalizer removed by hand during a stuck teardown', () => {
  it(
    "frees the node's capacity through the proxy, records what is left, and never touches a successor of the name",
    { timeout: 300_000 },
    async () => {
      const node = await sharedDrivesNode(DEVICES, 'unfinalized');
      const guid = await createWekaCluster(node, uniqueName('unfinalized'));
      const ref = { namespace: await uniqueNamespace('unfinalized'), name: 'drive' };
      const first = await createContainerObject(kubeConfig(), ref, { nodeName: node, ...SPEC }, { clusterGUID: guid });
      const uid = first.metadata.uid!;
      const ready = await waitForPhase(ref, 'Ready', 120_000);
      const drives = ready.status!.allocations!.virtualDrives!.map((d) => d.virtualUUID);

      // Every Weka command fails: the teardown says it is blocked and keeps trying.
      await sim(node, 'faults', '--fail-rate', '1');
      const custom = kubeConfig().makeApiClient(CustomObjectsApi);
      await custom.deleteNamespacedCustomObject({ ...WEKA_CONTAINERS, ...ref });
      await eventually(
        'the teardown to say it is blocked',
        async () =>
          (await readContainer(ref))?.status?.conditions?.some(
            (c) => c.type === 'TeardownBlocked' && c.status === 'True',
          )
            ? true
            : undefined,
        120_000,
      );
      // A person removes the finalizer; the object is gone. The devices answer again.
      await custom.patchNamespacedCustomObject(
        { ...WEKA_CONTAINERS, ...ref, body: { metadata: { finalizers: [] } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      await waitGone(ref);
      await sim(node, 'faults', '--clear');
      // A successor under the same name, which must get its own drives and keep them.
      const second = await createContainerObject(
        kubeConfig(),
        ref,
        { nodeName: node, driveCores: 1, numDrives: 1, driveCapacity: 500 },
        { clusterGUID: guid },
      );

      await eventually(
        "the first container's ledger entry released and its drives gone from the device",
        async () => {
          const ledger = ledgerOf(await core.readNode({ name: node }));
          const onDevice = (await showDevice(node, DEVICES[0]!.path)).virtualDrives.map((v) => v.virtualUUID);
          return ledger.containers[uid] === undefined && drives.every((d) => !onDevice.includes(d))
            ? ledger
            : undefined;
        },
        120_000,
      );
      const ledger = ledgerOf(await core.readNode({ name: node }));
      expect(ledger.found.map((f) => f.virtualUUID).filter((u) => drives.includes(u))).toEqual([]);
      const event = await eventually('a Node Event naming what may remain in the Weka cluster', async () => {
        const events = await core.listNamespacedEvent({
          namespace: 'default',
          fieldSelector: `involvedObject.name=${node}`,
        });
        return events.items.find((e) => e.reason === 'WekaContainerLeftBehind' && e.message?.includes(uid));
      });
      expect(event.type).toBe('Warning');
      // Events expire (an hour by default): the count of them stays, for an alert.
      expect(await metrics.registry.getSingleMetricAsString('weka_drives_node_warnings_total')).toContain(
        'weka_drives_node_warnings_total{reason="WekaContainerLeftBehind"} 1',
      );

      const successor = await waitForPhase(ref, 'Ready', 120_000);
      expect(successor.metadata.uid).toBe(second.metadata.uid);
      const mine = successor.status!.allocations!.virtualDrives!.map((d) => d.virtualUUID);
      const onDevice = (await showDevice(node, DEVICES[0]!.path)).virtualDrives.map((v) => v.virtualUUID);
      expect(onDevice.sort()).toEqual([...mine].sort());
    },
  );
});
