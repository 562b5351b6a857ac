// Connections that client-node opens outside its generated API clients (exec's WebSocket, watches)
// go through the operator's KubeConfig too: each still gets a connection of its own, but resumes
// the TLS session of the one before instead of a full handshake, and is built on one TLS context
// per set of TLS settings instead of parsing the CA and the client key again for every exec.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeepAliveKubeConfig } from '../../../activities/kube/keep-alive.js';
import { createPki, type Pki } from '../../../deploy/local/pki.js';

let dir: string;
let pki: Pki;
let server: https.Server;
const handshakes = { full: 0, resumed: 0 };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'keep-alive-upgrades-'));
  pki = await createPki(dir);
  server = https.createServer(
    {
      cert: await readFile(pki.serverCert),
      key: await readFile(pki.serverKey),
      ca: await readFile(pki.caCert),
      requestCert: true,
      rejectUnauthorized: true,
    },
    (_req, res) => res.end('{}'),
  );
  server.on('secureConnection', (socket: tls.TLSSocket) => {
    if (socket.isSessionReused()) handshakes.resumed++;
    else handshakes.full++;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
}, 30_000);

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

function load<T extends KubeConfig>(kc: T, caFile = pki.caCert): T {
  const { port } = server.address() as AddressInfo;
  kc.loadFromOptions({
    clusters: [{ name: 'local', server: `https://127.0.0.1:${port}`, caFile }],
    users: [{ name: 'u', certFile: pki.adminCert, keyFile: pki.adminKey }],
    contexts: [{ name: 'c', cluster: 'local', user: 'u' }],
    currentContext: 'c',
  });
  return kc;
}

/** One request the way exec and watches make theirs: options from applyToHTTPSOptions, a connection of its own. */
async function connectOnce(kc: KubeConfig): Promise<https.RequestOptions> {
  const { port } = server.address() as AddressInfo;
  const opts: https.RequestOptions = { hostname: '127.0.0.1', port, path: '/', headers: { Connection: 'close' } };
  await kc.applyToHTTPSOptions(opts);
  await new Promise<void>((resolve, reject) => {
    https
      .get(opts, (res) => {
        res.resume();
        res.on('end', resolve);
      })
      .on('error', reject);
  });
  return opts;
}

async function handshakesOf(kc: KubeConfig, connections: number): Promise<typeof handshakes> {
  const before = { ...handshakes };
  for (let i = 0; i < connections; i++) await connectOnce(kc);
  return { full: handshakes.full - before.full, resumed: handshakes.resumed - before.resumed };
}

describe('KubeConfig for exec and watch connections', () => {
  it('resumes the TLS session: one full handshake for a run of connections', async () => {
    const kc = load(new KeepAliveKubeConfig());
    expect(await handshakesOf(kc, 5)).toEqual({ full: 1, resumed: 4 });
    kc.closeConnections();
  });

  it('does a full handshake for every connection without it (what it saves)', async () => {
    expect(await handshakesOf(load(new KubeConfig()), 5)).toEqual({ full: 5, resumed: 0 });
  });

  it('builds one TLS context for the same settings', async () => {
    const kc = load(new KeepAliveKubeConfig());
    const first = (await connectOnce(kc)).agent as https.Agent & { options: tls.ConnectionOptions };
    const second = (await connectOnce(kc)).agent as https.Agent & { options: tls.ConnectionOptions };
    expect(first.options.secureContext).toBeDefined();
    expect(second.options.secureContext).toBe(first.options.secureContext);
    kc.closeConnections();
  });

  it('verifies with the CA it has now: a changed CA is not answered from the old context', async () => {
    const stranger = await createPki(join(dir, 'stranger'));
    const kc = load(new KeepAliveKubeConfig());
    await connectOnce(kc);
    load(kc, stranger.caCert);
    await expect(connectOnce(kc)).rejects.toThrow(/self[- ]signed|unable to verify|certificate/i);
    load(kc);
    await connectOnce(kc);
    kc.closeConnections();
  }, 30_000);
});
