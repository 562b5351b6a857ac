// The rotate-ssdproxy operation: run every selected node's ssdproxy from the target image, one node
// at a time, in node order. Before a node's proxy restarts, every Weka cluster with a container on
// the node must be healthy; after, they must be healthy again before the next node. Both waits
// last as long as they must (never failing), with what they wait for on the object. A node whose
// new proxy does not run stops the campaign, Failed, saying so: the nodes after it keep the image
// they had. The restart itself is a request to the node's mutex, so it never runs beside an
// allocation, a signing or another proxy decision of that node.
import type { OperationSnapshot, ProxyRotated } from '../../activities/types.js';
import { nodeMutexId } from '../../src/protocol.js';
import { kube } from '../activities.js';
import { waitForHealthyClusters } from '../healthy-clusters.js';
import { fail, refuse } from '../manual-operation/end.js';
import type { OperationRun } from '../manual-operation/run.js';
import type { NodeResult } from '../operation-status.js';

export async function rotateSsdProxy(run: OperationRun, op: OperationSnapshot): Promise<void> {
  const payload = op.spec.payload?.rotateSsdProxyPayload ?? {};
  await run.status.enter('Running', 'planning: the target image, the ssdproxies to rotate, no other campaign');
  const plan = await kube.planProxyRotation({
    uid: run.uid,
    targetImage: payload.targetImage,
    nodeSelector: payload.nodeSelector,
  });
  if (!plan.ok) return refuse(run, plan.reason, plan.message);
  const { targetImage, proxies } = plan;
  const todo = proxies.filter((p) => p.image !== targetImage);
  await run.status.condition(
    'Accepted',
    'True',
    'Accepted',
    `rotate-ssdproxy to ${targetImage}: ${todo.length} of ${proxies.length} ssdproxies to restart, one node at a time`,
  );
  for (const p of proxies) {
    const skipped = p.image === targetImage;
    await run.status.result({ node: p.node, rotation: skipped ? 'Skipped' : 'Pending', proxyImage: p.image });
  }
  for (const [i, { node, image }] of todo.entries()) {
    const at = `node ${i + 1} of ${todo.length}, ${node}`;
    const base: NodeResult = { node, proxyImage: image };
    await waitForHealthyClusters(run, base, `${at}: before its ssdproxy restarts`, { rotation: 'Waiting' });
    await run.status.result({ ...base, rotation: 'Rotating' });
    await run.status.enter('Running', `${at}: restarting its ssdproxy from ${targetImage}`);
    const answer = await run.mutex.call(nodeMutexId(node), 'rotate-proxy', { node, image: targetImage }, node);
    if (!answer.ok) {
      const message = answer.error?.message ?? `the ssdproxy of node ${node} was not restarted`;
      await run.status.result({ ...base, rotation: 'Failed', proxyImage: targetImage, error: message });
      const left = todo.length - i - 1;
      return fail(
        run,
        answer.error?.type ?? 'RotationFailed',
        `${message}; the campaign stopped there (${i} nodes rotated, ${left} not started)`,
        `stopped at ${node}: ${message}; waiting for deletion`,
      );
    }
    const rotated = answer.result as ProxyRotated;
    if (!rotated.rotated) {
      await run.status.result({ ...base, rotation: 'Skipped', waitingFor: 'the node has no ssdproxy any more' });
      continue;
    }
    const after: NodeResult = { node, proxyImage: targetImage, previousProxyImage: rotated.previousImage };
    await run.status.result({ ...after, rotation: 'Verifying' });
    await waitForHealthyClusters(run, after, `${at}: after its ssdproxy restarted`, { rotation: 'Waiting' });
    await run.status.result({ ...after, rotation: 'Done' });
    await run.status.event(
      'Normal',
      'SsdProxyRotated',
      `node ${node}: its ssdproxy runs ${targetImage} (it ran ${rotated.previousImage || 'nothing'})`,
    );
  }
  const message = `${todo.length} ssdproxies restarted from ${targetImage}; ${proxies.length - todo.length} ran it already`;
  await run.status.condition('Succeeded', 'True', 'Rotated', message, 'Normal');
  await run.status.enter('Succeeded', `${message}; waiting for deletion`);
}
