// A fault of a platform team upgrading the ssdproxy: a rotate-ssdproxy campaign to a new image over
// one node while the rollout and the other faults go on. The campaign restarts the node's proxy
// only while every Weka cluster on the node is healthy, so it may wait; one that has not ended
// after a few minutes is deleted, which stops it (a restart already made stays). The invariants at
// rest then check that no drive was lost or double-booked across the restart. The operation is
// over, and deleted, before the promise resolves.
import { CoreV1Api } from '@kubernetes/client-node';
import { proxyName } from '../../src/api/names.js';
import type { Random } from '../support/random.js';
import { createOperation, operationEnded, readOperation, removeOperation } from './operation-faults.js';
import type { ChaosWorld } from './world.js';

/** How long the campaign may wait for healthy clusters before the fault gives up on it. */
const CAMPAIGN_LIMIT_MS = 240_000;

export async function rotateProxy(world: ChaosWorld, random: Random): Promise<string> {
  const kc = world.cp.kubeConfig();
  const node = world.nodes[random.int(0, world.nodes.length - 1)]!;
  const image = `quay.io/weka.io/weka-in-container:chaos-${random.int(1, 1_000_000_000)}`;
  const ref = await createOperation(world, random, 'rotate-ssdproxy', {
    action: 'rotate-ssdproxy',
    payload: { rotateSsdProxyPayload: { targetImage: image, nodeSelector: { 'kubernetes.io/hostname': node } } },
  });
  const done = await operationEnded(
    world,
    ref,
    `the rotate-ssdproxy operation on ${node} to finish`,
    CAMPAIGN_LIMIT_MS,
  );
  const last = done ?? (await readOperation(world, ref));
  const result = last?.status?.results?.find((r) => r.node === node);
  const condition = last?.status?.conditions?.find((c) => c.type === (done ? 'Succeeded' : 'Accepted'));
  let runs = '';
  if (done?.status?.phase === 'Succeeded' && result?.rotation === 'Done') {
    const pod = await kc
      .makeApiClient(CoreV1Api)
      .readNamespacedPod({ namespace: world.operatorNamespace, name: proxyName(node) })
      .catch(() => undefined);
    const now = pod?.spec?.containers[0]?.image;
    // Another fault may have taken the pod since; one that is there runs the new image.
    if (now !== undefined && now !== image)
      throw new Error(`rotate-ssdproxy on ${node} succeeded, but its proxy pod runs ${now}, not ${image}`);
    runs = `, its proxy runs ${now ?? '(pod gone meanwhile)'}`;
  }
  await removeOperation(world, ref);
  const phase = done
    ? done.status?.phase
    : `still ${last?.status?.phase ?? '?'} after ${CAMPAIGN_LIMIT_MS / 1000} s, deleted`;
  return (
    `rotate-ssdproxy on ${node} to ${image}: ${phase} (${condition?.reason ?? '?'}), node ${result?.rotation ?? '?'}` +
    (result?.waitingFor ? ` (waiting for ${result.waitingFor})` : '') +
    runs
  );
}
