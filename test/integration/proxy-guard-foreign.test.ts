// The guard that holds a node's ssdproxy pod against evictions (a PodDisruptionBudget named after
// the node, in the operator's namespace) is the operator's to make and delete; a budget of the same
// name that someone else made is never deleted, when no guard is needed nor when one is.
import { CoreV1Api, PolicyV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { proxyName } from '../../src/api/names.js';
import { wekaPod } from '../../src/manifests/pods.js';
import { proxyGuardName } from '../../src/operator/proxy-drain-guard.js';
import { eventually, sleep } from '../support/async.js';
import { kubeConfig, uniqueNamespace } from '../support/harness.js';
import { sharedDrivesNode, startWatchedTestOperator, type TestOperator } from '../support/operator.js';

const DEVICES = [{ path: '/dev/nvme0n1', capacityGiB: 3840, type: 'TLC' as const }];
let op: TestOperator;
beforeAll(async () => {
  op = await startWatchedTestOperator();
});
afterAll(async () => {
  await op?.stop();
});

describe("a PodDisruptionBudget with the name of a node's ssdproxy guard, made by someone else", () => {
  it('is left alone while the proxy needs no guard, and while it needs one', { timeout: 120_000 }, async () => {
    const core = kubeConfig().makeApiClient(CoreV1Api);
    const policy = kubeConfig().makeApiClient(PolicyV1Api);
    const node = await sharedDrivesNode(DEVICES, 'guard-foreign');
    const namespace = op.deps.operatorNamespace;
    const name = proxyGuardName(node);
    const foreign = await policy.createNamespacedPodDisruptionBudget({
      namespace,
      body: { metadata: { name }, spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'theirs' } } } },
    });
    const stillTheirs = async () => {
      const found = await policy.readNamespacedPodDisruptionBudget({ namespace, name }).catch(() => null);
      expect(found?.metadata?.uid, 'the budget someone else made').toBe(foreign.metadata?.uid);
    };

    // A proxy pod and no drive pod on the node: no guard is wanted, and the watcher lets go of the name.
    const image = 'weka/weka-in-container:4.4';
    const proxy = wekaPod({
      name: proxyName(node),
      namespace,
      node,
      image,
      role: 'ssdproxy',
      owner: `${namespace}/${proxyName(node)}`,
      ownerUID: 'proxy-uid',
    });
    await core.createNamespacedPod({ namespace, body: proxy as never });
    await sleep(3_000);
    await stillTheirs();

    // A drive pod there: a guard is wanted, and the name is taken. The proxy stays unguarded.
    const tenant = await uniqueNamespace('guard-foreign');
    const drive = wekaPod({
      name: 'drive-0',
      namespace: tenant,
      node,
      image,
      role: 'drive',
      owner: `${tenant}/drive-0`,
    });
    await core.createNamespacedPod({ namespace: tenant, body: drive as never });
    await eventually('the drive pod Running', async () =>
      (await core.readNamespacedPod({ namespace: tenant, name: 'drive-0' })).status?.phase === 'Running'
        ? true
        : undefined,
    );
    await sleep(3_000);
    await stillTheirs();
  });
});
