// The control plane's fault hooks, which the chaos engine uses on a control plane of its own: each
// breaks one server the way users meet it and brings it back on the same port and data. Run on a
// second control plane (the shared one is left alone), with one fake node.
import { CoreV1Api, Watch, type V1Node } from '@kubernetes/client-node';
import { Connection, WorkflowClient } from '@temporalio/client';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeepAliveKubeConfig } from '../../activities/kube/keep-alive.js';
import { ControlPlane } from '../../deploy/local/control-plane.js';
import { NODE_STATUS_UNKNOWN } from '../../deploy/local/fake-nodes.js';
import { startTcpProxy, type TcpProxy } from '../../deploy/local/tcp-proxy.js';
import { eventually } from '../support/async.js';

const NODE = 'fault-node-1';
let cp: ControlPlane;
let core: CoreV1Api;
let proxy: TcpProxy | undefined;

beforeAll(async () => {
  cp = await ControlPlane.start({ installCrds: false, log: (m) => console.log(`[faults] ${m}`) });
  await cp.addNode({ name: NODE });
  core = cp.kubeConfig().makeApiClient(CoreV1Api);
});

afterAll(async () => {
  await proxy?.close();
  await cp?.stop();
});

/** Runs `body` and prints how long it took. */
async function timed<T>(what: string, body: () => Promise<T>): Promise<T> {
  const started = Date.now();
  const result = await body();
  console.log(`[faults] ${what}: ${Date.now() - started} ms`);
  return result;
}

async function createConfigMap(name: string): Promise<string> {
  const cm = await core.createNamespacedConfigMap({
    namespace: 'default',
    body: { metadata: { name }, data: { written: 'before the fault' } },
  });
  return cm.metadata!.resourceVersion!;
}

/** How a watch of the default namespace's ConfigMaps from `resourceVersion` begins. */
async function watchFrom(resourceVersion: string): Promise<{ gone: boolean; detail: string }> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (outcome: { gone: boolean; detail: string }): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void request.then((r) => r.abort()).catch(() => undefined);
      resolve(outcome);
    };
    const timer = setTimeout(() => finish({ gone: false, detail: 'no error within 10 s' }), 10_000);
    const request = new Watch(cp.kubeConfig()).watch(
      '/api/v1/namespaces/default/configmaps',
      { resourceVersion, allowWatchBookmarks: false },
      (type: string, object: { code?: number; message?: string }) => {
        if (type === 'ERROR') finish({ gone: object.code === 410, detail: `${object.code}: ${object.message}` });
        else finish({ gone: false, detail: `a ${type} event` });
      },
      (err: unknown) => {
        const e = err as { statusCode?: number; code?: number; message?: string } | null;
        if (e) finish({ gone: e.statusCode === 410 || e.code === 410, detail: String(e.message ?? e) });
      },
    );
    request.catch(reject);
  });
}

function readyCondition(node: V1Node): { status?: string; reason?: string; message?: string } {
  return node.status?.conditions?.find((c) => c.type === 'Ready') ?? {};
}

describe('control plane fault hooks', () => {
  it('a kube client through a TCP proxy in front of the apiserver fails on a reset cut and works after heal', async () => {
    proxy = await startTcpProxy({ targetPort: Number(new URL(cp.apiserverUrl).port), name: 'apiserver' });
    const yaml = (await readFile(cp.kubeconfigPath, 'utf8')).replace(
      cp.apiserverUrl,
      `https://127.0.0.1:${proxy.port}`,
    );
    const kc = new KeepAliveKubeConfig();
    kc.loadFromString(yaml);
    const viaProxy = kc.makeApiClient(CoreV1Api);
    // TLS passes through: the apiserver's certificate is for 127.0.0.1, whatever the port.
    expect((await viaProxy.listNode()).items.map((n) => n.metadata?.name)).toContain(NODE);
    expect(proxy.stats().connections).toBeGreaterThan(0);

    proxy.cut('reset');
    expect(proxy.stats()).toMatchObject({ connections: 0, cuts: 1 });
    await expect(viaProxy.listNode()).rejects.toThrow();
    await expect(viaProxy.listNode()).rejects.toThrow();

    proxy.heal();
    await timed('a client through the proxy after heal', () =>
      eventually('a list through the healed proxy', async () => (await viaProxy.listNode()).items, 10_000),
    );
    kc.closeConnections();
  });

  it('restartApiserver: the same client lists again afterwards', async () => {
    const kc = cp.kubeConfig() as KeepAliveKubeConfig;
    const client = kc.makeApiClient(CoreV1Api);
    await createConfigMap('before-apiserver-restart');
    const { downMs } = await timed('restartApiserver', () => cp.restartApiserver());
    console.log(`[faults] apiserver down for ${downMs} ms`);
    expect(downMs).toBeGreaterThan(0);
    const names = await eventually(
      'a list after the apiserver restart',
      async () => (await client.listNamespacedConfigMap({ namespace: 'default' })).items.map((c) => c.metadata?.name),
      10_000,
    );
    expect(names).toContain('before-apiserver-restart');
    kc.closeConnections();
  });

  it('restartEtcd with compact: old resourceVersions are gone (410), the objects survive', async () => {
    const oldVersion = await createConfigMap('before-compaction');
    await createConfigMap('before-compaction-2');
    const result = await timed('restartEtcd({ compact: true })', () => cp.restartEtcd({ compact: true }));
    console.log(`[faults] etcd restart: ${JSON.stringify(result)}`);
    expect(result.compactedRevision).toBeGreaterThan(Number(oldVersion));
    expect(result.downMs).toBeGreaterThanOrEqual(result.etcdDownMs);
    expect(result.apiserverRestarted).toBe(true);

    // etcd itself no longer has the old revision.
    const res = await fetch(`${cp.etcdUrl}/v3/kv/range`, {
      method: 'POST',
      body: JSON.stringify({ key: 'AA==', revision: oldVersion }),
    });
    expect(await res.text()).toMatch(/required revision has been compacted/);

    // Through the apiserver: a watch from the old resourceVersion is told it is too old.
    const watched = await eventually(
      'a watch answer other than 429 (a watch cache listing anew)',
      async () => {
        const w = await watchFrom(oldVersion);
        return /^429|Too Many Requests/.test(w.detail) ? undefined : w;
      },
      10_000,
    );
    expect(watched.gone, watched.detail).toBe(true);
    expect(watched.detail).toMatch(/too old resource version/);

    // What was written before is still there.
    for (const name of ['before-apiserver-restart', 'before-compaction', 'before-compaction-2']) {
      const cm = await core.readNamespacedConfigMap({ namespace: 'default', name });
      expect(cm.data).toEqual({ written: 'before the fault' });
    }
  });

  it('killTemporal then startTemporal: the server is back with its workflows', async () => {
    const connection = await Connection.connect({ address: cp.temporalAddress });
    try {
      const workflows = new WorkflowClient({ connection, namespace: cp.temporalNamespace });
      // No worker polls this queue: the workflow just waits, stored in the SQLite file.
      const handle = await workflows.start('noSuchWorkflow', {
        taskQueue: 'control-plane-faults',
        workflowId: `fault-test-${Date.now()}`,
      });
      await timed('killTemporal', () => cp.killTemporal());
      expect(cp.processes().some((p) => p.name === 'temporal')).toBe(true);
      expect(
        cp
          .processes()
          .find((p) => p.name === 'temporal')!
          .hasExited(),
      ).toBe(true);
      const dead = Date.now();
      await expect(
        connection.withDeadline(Date.now() + 2000, () =>
          connection.workflowService.describeNamespace({ namespace: cp.temporalNamespace }),
        ),
      ).rejects.toThrow();
      console.log(`[faults] a call to the killed Temporal failed after ${Date.now() - dead} ms`);

      await timed('startTemporal after the kill', () => cp.startTemporal());
      // The connection made before the crash reconnects by itself.
      const described = await timed('the old connection answering again', () =>
        eventually(
          'describeNamespace after the restart',
          () =>
            connection.withDeadline(Date.now() + 2000, () =>
              connection.workflowService.describeNamespace({ namespace: cp.temporalNamespace }),
            ),
          20_000,
        ),
      );
      expect(described.namespaceInfo?.name).toBe(cp.temporalNamespace);
      expect((await handle.describe()).status.name).toBe('RUNNING');
      await handle.terminate('test over');
    } finally {
      await connection.close();
    }
  });

  it('stopNodeKubelet with markNotReady makes the node Unknown; startNodeKubelet makes it Ready again', async () => {
    const before = await core.readNode({ name: NODE });
    expect(readyCondition(before).status).toBe('True');
    const port = before.status?.daemonEndpoints?.kubeletEndpoint?.Port;

    await timed('stopNodeKubelet', () => cp.stopNodeKubelet(NODE, { markNotReady: true }));
    expect(cp.processes().some((p) => p.name === `kwok(${NODE})`)).toBe(false);
    expect(cp.nodeNames()).toContain(NODE);
    const stopped = await core.readNode({ name: NODE });
    expect(readyCondition(stopped)).toMatchObject({ status: 'Unknown', ...NODE_STATUS_UNKNOWN });
    // The other conditions are left as they were.
    expect(stopped.status?.conditions?.find((c) => c.type === 'DiskPressure')?.status).toBe('False');
    // Nothing brings it back while the kubelet is stopped.
    await new Promise((r) => setTimeout(r, 1000));
    expect(readyCondition(await core.readNode({ name: NODE })).status).toBe('Unknown');

    await timed('startNodeKubelet', () => cp.startNodeKubelet(NODE));
    const after = await core.readNode({ name: NODE });
    expect(readyCondition(after).status).toBe('True');
    expect(after.status?.daemonEndpoints?.kubeletEndpoint?.Port).toBe(port);
    expect(cp.processes().some((p) => p.name === `kwok(${NODE})` && !p.hasExited())).toBe(true);
    await expect(cp.startNodeKubelet('no-such-node')).rejects.toThrow(/not a node of this control plane/);
  });
});
