// The etcd behind the local kube-apiserver: one member, loopback only, fsync off (test data). Its
// client URL is plain HTTP on 127.0.0.1 (no TLS), which also serves etcd's v3 JSON gateway.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { startServer, waitUntilReady, type ServerProcess } from './processes.js';

export interface EtcdOptions {
  binary: string;
  dataDir: string;
  logDir: string;
  clientPort: number;
  peerPort: number;
  deadlineMs: number;
}

export interface Etcd {
  process: ServerProcess;
  url: string;
}

export async function startEtcd(o: EtcdOptions): Promise<Etcd> {
  await mkdir(o.dataDir, { recursive: true });
  const url = `http://127.0.0.1:${o.clientPort}`;
  const peer = `http://127.0.0.1:${o.peerPort}`;
  const proc = startServer({
    name: 'etcd',
    command: o.binary,
    args: [
      '--name=default',
      `--data-dir=${o.dataDir}`,
      `--listen-client-urls=${url}`,
      `--advertise-client-urls=${url}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=default=${peer}`,
      '--unsafe-no-fsync=true',
      '--log-level=warn',
    ],
    logPath: join(o.logDir, 'etcd.log'),
  });
  await waitUntilReady(
    proc,
    async () => {
      const res = await fetch(`${url}/health`);
      const body = (await res.json()) as { health?: string };
      return res.ok && body.health === 'true';
    },
    o.deadlineMs,
  );
  return { process: proc, url };
}

/** A call to etcd's v3 JSON gateway (int64 fields are strings there, bytes are base64). */
async function gateway<T>(url: string, path: string, body: unknown): Promise<T> {
  const res = await fetch(`${url}/v3/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`etcd ${path}: HTTP ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}

/** etcd's current revision (the header of a range over the key "\0"). */
export async function etcdRevision(url: string): Promise<number> {
  const res = await gateway<{ header?: { revision?: string } }>(url, 'kv/range', { key: 'AA==' });
  const revision = Number(res.header?.revision);
  if (!Number.isSafeInteger(revision) || revision <= 0)
    throw new Error(`etcd gave no revision: ${JSON.stringify(res)}`);
  return revision;
}

/**
 * Compacts etcd at its current revision, physically (it returns once the old revisions are gone
 * from the backend), and returns that revision. Every revision before it is then unreadable: a
 * watch or read from an older one fails as "required revision has been compacted". Whether a
 * running apiserver's watch caches notice depends on timing; ControlPlane.restartEtcd({ compact })
 * restarts the apiserver so that they start over at the compacted revision.
 */
export async function compactEtcd(url: string): Promise<number> {
  const revision = await etcdRevision(url);
  try {
    await gateway(url, 'kv/compaction', { revision: String(revision), physical: true });
  } catch (err) {
    // Already compacted at this very revision (the apiserver compacts too, every 5 minutes).
    if (!/required revision has been compacted/.test(String(err))) throw err;
  }
  return revision;
}
