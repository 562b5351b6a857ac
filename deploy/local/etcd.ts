// The etcd behind the local kube-apiserver: one member, loopback only, fsync off (test data).
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
