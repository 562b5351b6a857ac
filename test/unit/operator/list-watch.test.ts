// runListWatch against a scripted fake apiserver: a watch that ends is resumed from the last
// resourceVersion, a 410 Gone lists again, a failed watch is retried after a back-off, and a
// resync lists beside the watch, which goes on delivering.
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
  return { kc: await listen(server), seen };
}

/** Watches the fake apiserver's WekaContainers. */
const watchOptions = (kubeConfig: KubeConfig, signal: AbortSignal) => ({
  kubeConfig,
  group: 'weka.weka.io',
  version: 'v1alpha1',
  plural: 'wekacontainers',
  logger: pino({ level: 'silent' }),
  signal,
});

/** Starts the fake apiserver and returns a kubeconfig for it. */
async function listen(fake: Server): Promise<KubeConfig> {
  await new Promise<void>((r) => fake.listen(0, '127.0.0.1', () => r()));
  const kc = new KubeConfig();
  // skipTLSVerify: without it the client never sends a request to a plain-HTTP server.
  kc.loadFromOptions({
    clusters: [
      { name: 'fake', server: `http://127.0.0.1:${(fake.address() as AddressInfo).port}`, skipTLSVerify: true },
    ],
    users: [{ name: 'nobody' }],
    contexts: [{ name: 'fake', cluster: 'fake', user: 'nobody' }],
    currentContext: 'fake',
  });
  return kc;
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
      ...watchOptions(kc, abort.signal),
      backoff: { initialMs: 10, maxMs: 20 },
      handlers: {
        parse: (raw) => raw as ReturnType<typeof obj>,
        keyOf: (o) => o.metadata.uid,
        onList: (items) => {
          lists.push(items.map((i) => i.metadata.resourceVersion));
        },
        onEvent: (type, o) => events.push([type, o.metadata.resourceVersion]),
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

describe('runListWatch paging', () => {
  it('parses each page of a list as it arrives, so a list holds one page of raw objects at most', async () => {
    const names = ['a', 'b', 'c', 'd', 'skipped'];
    const order: string[] = [];
    server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.searchParams.get('watch') === 'true') return; // held open until the test stops
      const limit = Number(url.searchParams.get('limit'));
      const from = Number(url.searchParams.get('continue') || 0);
      order.push(`page from ${from}`);
      const next = from + limit < names.length ? String(from + limit) : undefined;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          items: names.slice(from, from + limit).map((n) => obj(n, '7')),
          metadata: { resourceVersion: '7', ...(next ? { continue: next } : {}) },
        }),
      );
    });
    const kc = await listen(server);
    const abort = new AbortController();
    let listed: string[] | undefined;
    const loop = runListWatch<string>({
      ...watchOptions(kc, abort.signal),
      listPageSize: 2,
      handlers: {
        parse(raw) {
          const name = (raw as ReturnType<typeof obj>).metadata.name;
          order.push(`parse ${name}`);
          return name === 'skipped' ? undefined : name.toUpperCase();
        },
        keyOf: (name) => name,
        onList: (items) => void (listed = items),
        onEvent: () => undefined,
      },
    });
    const deadline = Date.now() + 5_000;
    while (!listed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    abort.abort();
    await loop;

    expect(order).toEqual([
      'page from 0',
      'parse a',
      'parse b',
      'page from 2',
      'parse c',
      'parse d',
      'page from 4',
      'parse skipped',
    ]);
    expect(listed).toEqual(['A', 'B', 'C', 'D']);
  });
});

describe('runListWatch resync', () => {
  it('lists again beside the watch, which goes on delivering, and names what it delivered meanwhile', async () => {
    let lists = 0;
    let watches = 0;
    let answerResync!: () => void;
    let watchStream: ServerResponse | undefined;
    server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.searchParams.get('watch') === 'true') {
        watches++;
        res.writeHead(200, { 'content-type': 'application/json' });
        watchStream = res;
        return; // held open: the resync must not need it closed
      }
      const rv = String(10 * ++lists);
      const answer = () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ items: [obj('a', rv), obj('b', rv)], metadata: { resourceVersion: rv } }));
      };
      // The first resync's list is answered when the test says; any after it at once.
      if (lists === 2) answerResync = answer;
      else answer();
    });
    const kc = await listen(server);
    const abort = new AbortController();
    const seen: string[] = [];
    const loop = runListWatch({
      ...watchOptions(kc, abort.signal),
      resyncMs: 200,
      handlers: {
        parse: (raw) => raw as ReturnType<typeof obj>,
        keyOf: (o) => o.metadata.uid,
        onList: (items, newer) => {
          seen.push(`list ${items.map((i) => i.metadata.name).join(',')} newer ${[...newer].join(',')}`);
        },
        onEvent: (type, o) => seen.push(`${type} ${o.metadata.name}`),
      },
    });
    const until = async (what: () => boolean) => {
      const deadline = Date.now() + 5_000;
      while (!what() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(what()).toBe(true);
    };
    await until(() => answerResync !== undefined && watchStream !== undefined);
    line(watchStream!, 'DELETED', obj('a', '15'));
    await until(() => seen.length === 2);
    answerResync();
    await until(() => seen.length >= 3);
    abort.abort();
    await loop;

    expect(seen.slice(0, 3)).toEqual(['list a,b newer ', 'DELETED a', 'list a,b newer uid-a']);
    expect(watches).toBe(1);
  });
});
