// runListWatch against a scripted fake apiserver: a watch that ends is resumed from the last
// resourceVersion, a 410 Gone lists again, and a failed watch is retried after a back-off.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { runListWatch, type WatchEventType } from '../../../deploy/operator/watcher/list-watch.js';

type WatchScript = (res: ServerResponse) => void;

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

const obj = (name: string, rv: string) => ({
  metadata: { name, namespace: 'ns', uid: `uid-${name}`, resourceVersion: rv },
});
const line = (res: ServerResponse, type: string, object: unknown) => res.write(`${JSON.stringify({ type, object })}\n`);

async function fakeApiserver(listVersions: string[], watches: WatchScript[]) {
  const seen = { lists: 0, watchVersions: [] as string[] };
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname !== '/apis/weka.weka.io/v1alpha1/wekacontainers') return void res.writeHead(404).end();
    if (url.searchParams.get('watch') !== 'true') {
      const rv = listVersions[Math.min(seen.lists++, listVersions.length - 1)]!;
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ items: [obj('listed', rv)], metadata: { resourceVersion: rv } }));
    }
    seen.watchVersions.push(url.searchParams.get('resourceVersion') ?? '');
    const script = watches.shift();
    if (!script) return; // hold the last watch open until the test stops
    script(res);
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      { name: 'fake', server: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, skipTLSVerify: true },
    ],
    users: [{ name: 'nobody' }],
    contexts: [{ name: 'fake', cluster: 'fake', user: 'nobody' }],
    currentContext: 'fake',
  });
  return { kc, seen };
}

describe('runListWatch', () => {
  it('resumes from the last resourceVersion, lists again after 410 Gone, and backs off after a failed watch', async () => {
    const { kc, seen } = await fakeApiserver(
      ['10', '20'],
      [
        (res) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          line(res, 'ADDED', obj('a', '11'));
          line(res, 'MODIFIED', obj('a', '12'));
          line(res, 'BOOKMARK', { metadata: { resourceVersion: '13' } });
          res.end(); // the server's watch timeout
        },
        (res) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          line(res, 'ERROR', { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' });
          res.end();
        },
        (res) => res.writeHead(500).end('apiserver trouble'),
      ],
    );
    const lists: string[][] = [];
    const events: Array<[WatchEventType, string]> = [];
    const abort = new AbortController();
    const loop = runListWatch({
      kubeConfig: kc,
      group: 'weka.weka.io',
      version: 'v1alpha1',
      plural: 'wekacontainers',
      logger: pino({ level: 'silent' }),
      signal: abort.signal,
      backoff: { initialMs: 10, maxMs: 20 },
      handlers: {
        onList: (items) => {
          lists.push(items.map((i) => (i as ReturnType<typeof obj>).metadata.resourceVersion));
        },
        onEvent: (type, o) => events.push([type, (o as ReturnType<typeof obj>).metadata.resourceVersion]),
      },
    });
    const deadline = Date.now() + 5_000;
    while (seen.watchVersions.length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    abort.abort();
    await loop;

    expect(events).toEqual([
      ['ADDED', '11'],
      ['MODIFIED', '12'],
    ]);
    // 10: from the first list; 13: resumed after the bookmark; 20: the list after 410; 20 again after the 500.
    expect(seen.watchVersions).toEqual(['10', '13', '20', '20']);
    expect(lists).toEqual([['10'], ['20']]);
  });
});
