// API calls through the operator's KubeConfig reuse their connection to the apiserver instead of
// opening (and, over TLS, handshaking) a new one per call, as client-node does on its own.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeepAliveKubeConfig } from '../../../activities/kube/keep-alive.js';

let server: Server;
let connections = 0;
beforeAll(async () => {
  server = createServer((req, res) => {
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: req.url?.split('/').at(-1) } }));
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function load<T extends KubeConfig>(kc: T): T {
  const { port } = server.address() as AddressInfo;
  kc.loadFromOptions({
    clusters: [{ name: 'local', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'c', cluster: 'local', user: 'u' }],
    currentContext: 'c',
  });
  return kc;
}

async function connectionsFor(kc: KubeConfig, calls: number): Promise<number> {
  const before = connections;
  const core = kc.makeApiClient(CoreV1Api);
  for (let i = 0; i < calls; i++)
    expect((await core.readNamespace({ name: `ns-${i}` })).metadata?.name).toBe(`ns-${i}`);
  return connections - before;
}

describe('keep-alive KubeConfig', () => {
  it('makes consecutive API calls over one connection', async () => {
    const kc = load(new KeepAliveKubeConfig());
    expect(await connectionsFor(kc, 10)).toBe(1);
    kc.closeConnections();
  });

  it('opens a connection per call without it (what it saves)', async () => {
    expect(await connectionsFor(load(new KubeConfig()), 10)).toBe(10);
  });

  it('opens new connections after they are closed, and keeps working', async () => {
    const kc = load(new KeepAliveKubeConfig());
    expect(await connectionsFor(kc, 3)).toBe(1);
    kc.closeConnections();
    expect(await connectionsFor(kc, 3)).toBe(1);
    kc.closeConnections();
  });
});
