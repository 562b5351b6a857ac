// A teardown that cannot reach its pod (the node still exists but its kubelet is gone) says so on
// the object and keeps trying; a person who has checked the node finishes it with an annotation,
// and the object and an Event then say exactly what may be left on the devices.
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { TEARDOWN_WITHOUT_POD_ANNOTATION } from '../../src/api/names.js';
import { eventually } from '../support/async.js';
import { eventsOf } from '../support/events.js';
import { WEKA_CONTAINERS } from '../support/containers.js';
import { kubeConfig, removeNode, uniqueNamespace } from '../support/harness.js';
import { eventReasons } from '../support/manual-operation.js';
import {
  createDriveContainer,
  deleteDriveContainer,
  readContainer,
  sharedDrivesNode,
  useTestOperator,
  waitForPhase,
  waitGone,
} from '../support/operator.js';
import { createWekaCluster } from '../support/simulator.js';
import { recordHistory } from '../support/histories.js';

const op = useTestOperator();

const DEVICES = [{ path: '/dev/nvme0n1', capacityGiB: 7680, type: 'TLC' as const }];

describe('a teardown that cannot reach its pod', () => {
  it('says so, keeps the capacity, and finishes once a person sets the annotation', { timeout: 420_000 }, async () => {
    const node = await sharedDrivesNode(DEVICES, 'unreachable');
    const guid = await createWekaCluster(node, 'unreachable');
    const ref = { namespace: await uniqueNamespace('unreachable'), name: 'drive-0' };
    const { uid, handle } = await createDriveContainer(
      op,
      ref,
      { nodeName: node, driveCores: 1, numDrives: 2, driveCapacity: 1000 },
      guid,
    );
    const ready = await waitForPhase(ref, 'Ready');
    const drives = ready.status!.allocations!.virtualDrives!;

    // The node's kubelet stops; the Node object stays, as it does for a node that is down.
    await removeNode(node, { keepObject: true });
    await deleteDriveContainer(op, ref, uid);
    const blocked = await eventually(
      'the teardown to say it cannot reach the pod',
      async () => {
        const c = await readContainer(ref);
        const cond = c?.status?.conditions?.find((x) => x.type === 'TeardownBlocked' && x.status === 'True');
        return cond?.reason === 'PodUnreachable' ? { c: c!, cond } : undefined;
      },
      240_000,
    );
    expect(blocked.cond.message).toContain(TEARDOWN_WITHOUT_POD_ANNOTATION);
    expect(blocked.c.status?.allocations?.virtualDrives).toHaveLength(drives.length);
    // The Event follows the condition's status write.
    await eventually(
      'a PodUnreachable Event',
      async () => ((await eventReasons(ref.namespace, ref.name)).includes('Warning/PodUnreachable') ? true : undefined),
      30_000,
    );

    await kubeConfig()
      .makeApiClient(CustomObjectsApi)
      .patchNamespacedCustomObject(
        {
          ...WEKA_CONTAINERS,
          ...ref,
          body: { metadata: { annotations: { [TEARDOWN_WITHOUT_POD_ANNOTATION]: 'true' } } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    await waitGone(ref, 180_000);
    await handle.result();
    await recordHistory(handle.workflowId, 'drive-container-teardown-without-pod');

    const left = (await eventsOf(ref)).find((e) => e.reason === 'TeardownWithoutPod');
    expect(left?.type).toBe('Warning');
    for (const d of drives) expect(left?.message).toContain(d.virtualUUID);
    expect(left?.message).toContain(guid);
  });
});
